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

    /// Actions and keys read in one go (a control loop that fell behind on
    /// a loaded box: a keyboard's last note released, then MMC stop) are
    /// handled in the order they arrived: the stop that writes the line
    /// comes after the note it should hold (read actions first, the last
    /// note of a 20-note line was lost under load in the VM).
    @Test func actionsAndKeysKeepTheirOrder() {
        let keys = [ControlHub.StampedKey(note: 79, velocity: 100, nanoseconds: 1, order: 2),
                    ControlHub.StampedKey(note: 79, velocity: 0, nanoseconds: 2, order: 3),
                    ControlHub.StampedKey(note: 60, velocity: 100, nanoseconds: 9, order: 6)]
        let actions = [ControlHub.StampedAction(action: .playPause, nanoseconds: 0, order: 1),
                       ControlHub.StampedAction(action: .stop, nanoseconds: 3, order: 4),
                       ControlHub.StampedAction(action: .recordLine, nanoseconds: 4, order: 5)]
        let merged = ControlHub.inArrivalOrder(actions: actions, keys: keys)
        #expect(merged == [.action(actions[0]), .key(keys[0]), .key(keys[1]), .action(actions[1]), .action(actions[2]), .key(keys[2])])
        #expect(ControlHub.inArrivalOrder(actions: [], keys: keys) == keys.map { .key($0) })
        #expect(ControlHub.inArrivalOrder(actions: actions, keys: []) == actions.map { .action($0) })
    }
}
