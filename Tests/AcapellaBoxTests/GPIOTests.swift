import AcapellaDevices
import Foundation
import Testing

/// The foot switch's GPIO layer over libgpiod 1.6 (bookworm) or 2.x
/// (trixie), one shim chosen when it is compiled: `./test` runs these on
/// both (Tests/trixie/run); the lines themselves are the VM's gpio-sim
/// (Tests/hil/scenarios.sh sections 4 and 6, and section 4 again with the
/// trixie build).
@Suite struct GPIOTests {
    /// pkg-config's word for the libgpiod this was built against.
    func builtAgainst() -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["pkg-config", "--modversion", "libgpiod"]
        let pipe = Pipe()
        process.standardOutput = pipe
        guard (try? process.run()) != nil else { return nil }
        process.waitUntilExit()
        return String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func theLibraryInUseIsTheOneBuiltAgainst() throws {
        let expected = try #require(builtAgainst(), "pkg-config libgpiod")
        #expect(LibraryVersions.gpiod == expected, "linked \(LibraryVersions.gpiod), headers \(expected)")
    }

    @Test func aChipThatIsNotThereIsSaidInOneLine() {
        for name in ["gpiochip97", "/dev/gpiochip97", "97", "no-such-label"] {
            do {
                _ = try GPIOSwitch(chip: name, line: "3")
                Issue.record("\(name) opened")
            } catch {
                #expect(error.description.hasPrefix("GPIO: no chip '\(name)'"), "\(error.description)")
                #expect(error.description.contains("runs on without the foot switch"))
                #expect(!error.description.contains("\n"))
            }
        }
    }

    @Test func somethingThatIsNotAChipIsRefused() {
        do {
            _ = try GPIOSwitch(chip: "/dev/null", line: "0")
            Issue.record("/dev/null opened as a GPIO chip")
        } catch {
            #expect(error.description.hasPrefix("GPIO: no chip '/dev/null'"), "\(error.description)")
        }
    }

    @Test func theChipsListedAreTheDevicesThere() {
        let devices = ((try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? []).filter { $0.hasPrefix("gpiochip") }
        let chips = GPIOSwitch.chips()
        #expect(chips.count == devices.count)
        #expect(Set(chips.map(\.name)) == Set(devices))
        for chip in chips { #expect(!chip.lines.isEmpty) }
    }
}
