@testable import AcapellaBox
import AcapellaDevices
import AcapellaProject
import Foundation
import Synchronization
import Testing

/// The service started before its sound card (a USB interface plugged in a
/// minute later): it waits and says so, then takes the card when it comes
/// and calibrates a route it has never measured. The loopback card plugged
/// in after the box started is the VM's (Tests/hil/scenarios.sh section 9).
@Suite struct CardArrivalTests {
    /// An opener whose card is "plugged in" after `absent` attempts.
    final class LateCard: Sendable {
        let attempts = Atomic<Int>(0)
        let absent: Int
        init(absent: Int) { self.absent = absent }
        func open() throws(DeviceError) -> any AudioDevice {
            let attempt = attempts.add(1, ordering: .relaxed).newValue
            guard attempt > absent else { throw DeviceError(.lost, "no sound card") }
            var options = SimulatedRoom.Options()
            options.latencyFrames = 300
            return try SimulatedRoom(options)
        }
    }

    func folder() throws -> String {
        let path = NSTemporaryDirectory() + "acapella-card-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// The box waiting for `card` with its data in `data`: the device it
    /// took and what it logged.
    func waitForCard(_ card: LateCard, data: String, web: WebHub? = nil, wake: WakeDescriptor = WakeDescriptor()) -> (device: (any AudioDevice)?, said: String) {
        var options = BoxOptions(songs: [], dataDirectory: data)
        options.calibrationStore = data + "/calibration.json"
        let log = BoxLog()
        log.divert(to: data + "/box.log")
        let device = Box.awaitSoundCard({ () throws(DeviceError) -> any AudioDevice in try card.open() }, options: options, lcd: nil, web: web,
                                        service: ServiceNotifier(), wake: wake, log: log)
        log.divert(to: nil)
        return (device, (try? String(contentsOfFile: data + "/box.log", encoding: .utf8)) ?? "")
    }

    @Test func theBoxWaitsSaysSoAndCalibratesTheCardThatComes() throws {
        let data = try folder()
        defer { try? FileManager.default.removeItem(atPath: data) }
        let wake = WakeDescriptor()
        let hub = WebHub(wake: wake, dataDirectory: data)
        let card = LateCard(absent: 3)
        let (device, said) = waitForCard(card, data: data, web: hub, wake: wake)
        #expect(device is SimulatedRoom)
        // Three attempts without the card, one to calibrate it, one for the session.
        #expect(card.attempts.load(ordering: .relaxed) == 5)
        #expect(said.components(separatedBy: "no sound card — plug in your interface").count == 2, "said once: \(said)")
        #expect(hub.live().state == "waiting")
        #expect(hub.live().message == "no sound card — plug in your interface")
        #expect(said.contains("has no calibration yet, so it is measured first"))
        #expect(said.contains("sound card plugged in: the box takes"))
        let stored = try CalibrationStore(path: data + "/calibration.json")
        let route = try #require(device?.route)
        let calibration = try #require(stored.calibration(for: route), "the new route is calibrated: \(said)")
        #expect(abs(calibration.measuredFrames - 300) < 1, "the room's 300-frame round trip measured: \(calibration.measuredFrames)")
    }

    @Test func aCardThereAtOnceIsTakenWithoutWaitingOrCalibrating() throws {
        let data = try folder()
        defer { try? FileManager.default.removeItem(atPath: data) }
        let card = LateCard(absent: 0)
        let (device, said) = waitForCard(card, data: data)
        #expect(device != nil)
        #expect(card.attempts.load(ordering: .relaxed) == 1)
        #expect(said.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: data + "/calibration.json"))
    }
}
