internal import CALSA
internal import CGPIOD
internal import CSndFile

/// Versions of the C libraries this build is linked against, for
/// `acapella version` and bug reports.
public enum LibraryVersions {
    /// libasound's version, e.g. `"1.2.8"`. The corresponding C function is
    /// `snd_asoundlib_version`.
    public static var alsa: String { String(cString: snd_asoundlib_version()) }

    /// libsndfile's version, e.g. `"libsndfile-1.2.0"`. The corresponding C
    /// function is `sf_version_string`.
    public static var sndfile: String { String(cString: sf_version_string()) }

    /// libgpiod's version, e.g. `"1.6.3"`. The corresponding C function is
    /// `gpiod_version_string`.
    public static var gpiod: String { String(cString: gpiod_version_string()) }
}
