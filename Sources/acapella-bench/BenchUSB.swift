import AcapellaBox
import AcapellaCLI
import AcapellaEngine
import AcapellaProject
import AcapellaScore
import Foundation

/// `acapella-bench usb`: issue 21's USB measure — a 3-minute 4-part
/// project (a full take on every part) exported as the box does to a
/// stick-sized file system (a 1 GiB ext4 image on a loop device when run
/// as root, else a folder), then `cp` of the same files to the same file
/// system with `sync`, side by side. The export renders six mixes (the mix,
/// a practice track per part) and encodes FLAC and MP3; `cp` only copies.
func benchUSB(_ arguments: ParsedArguments) throws -> Int32 {
    let folder = NSTemporaryDirectory() + "acapella-bench-usb-\(getpid())"
    try FileManager.default.createDirectory(atPath: folder + "/data/projects", withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let rate = 48_000
    let (_, frames) = try threeMinuteProject(at: folder + "/data/projects/three-minutes.acaproj", parts: 4, rate: rate)
    // The stick: an ext4 image on a loop device (root), else a plain folder.
    let stick = folder + "/stick"
    try FileManager.default.createDirectory(atPath: stick, withIntermediateDirectories: true)
    var mounted = false
    if getuid() == 0, capture(["sh", "-c", "truncate -s 1G '\(folder)/stick.img' && mkfs.ext4 -q -F '\(folder)/stick.img' && mount -o loop '\(folder)/stick.img' '\(stick)' && echo ok"])?.contains("ok") == true {
        mounted = true
    }
    defer { if mounted { _ = capture(["umount", stick]) } }
    try FileManager.default.createDirectory(atPath: stick + "/acapella", withIntermediateDirectories: true)
    let started = DispatchTime.now().uptimeNanoseconds
    let outcome = try StickJob.run(stick: stick, dataDirectory: folder + "/data", stillThere: { true }) { _ in }
    let exportSeconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
    let copyStarted = DispatchTime.now().uptimeNanoseconds
    _ = capture(["sh", "-c", "cp -r '\(stick)/acapella/export' '\(stick)/copy' && sync"])
    let copySeconds = Double(DispatchTime.now().uptimeNanoseconds - copyStarted) / 1e9
    print(String(format: "bench usb: export of a 3-minute 4-part project (%.0f s, a take per part) to %@", Double(frames) / Double(rate),
                 mounted ? "a 1 GiB ext4 image on a loop device" : "a folder (not root: no loop device)"))
    print(String(format: "  %d files, %.1f MB: export %.2f s (rendering 6 mixes %.2f s, encoding and writing %.2f s)   cp -r + sync of the same files %.2f s   ratio %.1f×",
                 outcome.exported.count, Double(outcome.bytes) / 1_048_576, exportSeconds, outcome.renderSeconds, outcome.writeSeconds, copySeconds, exportSeconds / max(copySeconds, 1e-9)))
    return 0
}
