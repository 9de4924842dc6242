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

    /// libgpiod's version, e.g. `"1.6.3"` or `"2.2.1"`. The corresponding C
    /// function is the shim's `acapella_gpiod_version` (libgpiod's
    /// `gpiod_version_string` in 1.6, `gpiod_api_version` in 2.x).
    public static var gpiod: String { String(cString: acapella_gpiod_version()) }
}
