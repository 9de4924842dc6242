@testable import AcapellaBox
import AcapellaDevices
import Foundation
import Testing

/// The kernel's files read to their end: Foundation's `String(contentsOfFile:)`
/// stops after the first read (about a page), which hid a USB stick mounted
/// after ~45 others.
@Suite struct ProcFileTests {
    @Test func aKernelFileIsReadToItsEnd() throws {
        // /proc/kallsyms: megabytes, made a page at a time, the same on every read.
        let whole = try #require(ProcFile.read("/proc/kallsyms"))
        let handle = try #require(FileHandle(forReadingAtPath: "/proc/kallsyms"))
        let reference = String(decoding: try #require(try handle.readToEnd()), as: UTF8.self)
        #expect(whole.utf8.count > 100_000)
        #expect(whole == reference)
        #expect(ProcFile.read("/proc/no-such-file") == nil)
    }

    @Test func theStickMountedLastIsSeenPastTwoHundredOthers() {
        var lines = (1...200).map { "\($0 + 30) 1 0:\($0 + 60) / /srv/many/\($0) rw,nosuid,nodev,relatime shared:\($0) - tmpfs many\($0) rw,size=64k,inode64" }
        lines.append("300 1 8:17 / /media/pi/MY\\040STICK rw,nosuid,nodev shared:300 - vfat /dev/sdb1 rw")
        let text = lines.joined(separator: "\n") + "\n"
        #expect(text.utf8.count > 4 * 4_096)
        let points = MountTable.mountPoints(in: text)
        #expect(points.count == 201)
        #expect(points.first == "/srv/many/1")
        #expect(points.last == "/media/pi/MY STICK")
    }
}
