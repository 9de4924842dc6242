@testable import AcapellaBox
import AcapellaControl
import Foundation
import Testing

@Suite struct ControlHubTests {
    /// On a machine with no sequencer and no GPIO chip (this one, CI), the
    /// hub says why each input is missing, in one line each, and keeps
    /// polling — the box runs on without them.
    @Test func missingInputsAreWarningsNotFailures() throws {
        let shipped = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Config/controls.json").path
        let config = try ControlConfig.load(shipped)
        let hub = ControlHub(config: config)
        let hasSequencer = FileManager.default.fileExists(atPath: "/dev/snd/seq")
        let hasChip = ((try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? []).contains { $0.hasPrefix("gpiochip") }
        if !hasSequencer { #expect(hub.warnings.contains { $0.hasPrefix("MIDI: no ALSA sequencer") }, "\(hub.warnings)") }
        if !hasChip { #expect(hub.warnings.contains { $0.hasPrefix("GPIO: no chip 'gpiochip0'") && $0.contains("runs on without the foot switch") }, "\(hub.warnings)") }
        let started = Date()
        #expect(hub.poll(timeoutMilliseconds: 20).isEmpty)
        #expect(Date().timeIntervalSince(started) < 2)
    }
}
