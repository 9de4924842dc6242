internal import CGPIOD
import Foundation

/// A GPIO chip and its lines, as `acapella devices` shows them.
public struct GPIOChipInfo: Hashable, Sendable {
    /// `gpiochip0`.
    public var name: String
    /// The chip's label (`pinctrl-bcm2711`).
    public var label: String
    /// Line names by offset ("" when unnamed).
    public var lines: [String]
}

/// A foot switch on a GPIO line through libgpiod (the 1.6 API of Debian 12
/// and Raspberry Pi OS bookworm): both edges with kernel timestamps, as
/// active-low with a pull-up by default. The gesture recognizer works on
/// the timestamps; nothing here reads a clock.
public final class GPIOSwitch {
    private let chip: OpaquePointer
    private let line: OpaquePointer
    /// "gpiochip0 line 17 (GPIO17)", for messages.
    public let description: String

    /// Requests the line. `chip` is a name, path or number; `line` a number
    /// or a line name. Throws a one-line reason (no chip, no such line,
    /// line busy). The corresponding C functions are
    /// `gpiod_chip_open_lookup`, `gpiod_chip_get_line`,
    /// `gpiod_chip_find_line` and `gpiod_line_request_both_edges_events_flags`.
    public init(chip chipName: String, line lineName: String, activeLow: Bool = true, bias: String = "pull-up", consumer: String = "acapella") throws(DeviceError) {
        guard let chip = gpiod_chip_open_lookup(chipName) else {
            let chips = ((try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? []).filter { $0.hasPrefix("gpiochip") }
            throw DeviceError(.configuration, "GPIO: no chip '\(chipName)' (\(String(cString: strerror(errno)))); chips here: \(chips.isEmpty ? "none" : chips.sorted().joined(separator: ", ")). The box runs on without the foot switch")
        }
        let found: OpaquePointer?
        if let offset = UInt32(lineName) { found = gpiod_chip_get_line(chip, offset) } else { found = gpiod_chip_find_line(chip, lineName) }
        guard let line = found else {
            gpiod_chip_close(chip)
            throw DeviceError(.configuration, "GPIO: \(chipName) has no line '\(lineName)'")
        }
        var flags: Int32 = 0
        if activeLow { flags |= Int32(GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW) }
        switch bias {
        case "pull-up": flags |= Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP)
        case "pull-down": flags |= Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_DOWN)
        default: flags |= Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_DISABLE)
        }
        guard gpiod_line_request_both_edges_events_flags(line, consumer, flags) == 0 else {
            let reason = String(cString: strerror(errno))
            gpiod_chip_close(chip)
            throw DeviceError(.configuration, "GPIO: \(chipName) line \(lineName) cannot be requested (\(reason); another program may hold it)")
        }
        self.chip = chip
        self.line = line
        let name = gpiod_line_name(line).map { String(cString: $0) } ?? ""
        description = "\(String(cString: gpiod_chip_name(chip))) line \(gpiod_line_offset(line))\(name.isEmpty ? "" : " (\(name))")"
    }

    deinit {
        gpiod_line_release(line)
        gpiod_chip_close(chip)
    }

    /// The line's event descriptor, for the caller's own `poll`. The
    /// corresponding C function is `gpiod_line_event_get_fd`.
    public var fileDescriptor: Int32 { gpiod_line_event_get_fd(line) }

    /// Waits up to `timeoutNanoseconds` for edges; returns them as
    /// (pressed, kernel timestamp in ns). The corresponding C functions are
    /// `gpiod_line_event_wait` and `gpiod_line_event_read`.
    public func read(timeoutNanoseconds: Int64) throws(DeviceError) -> [(pressed: Bool, nanoseconds: Int64)] {
        var timeout = timespec(tv_sec: Int(timeoutNanoseconds / 1_000_000_000), tv_nsec: Int(timeoutNanoseconds % 1_000_000_000))
        var edges: [(Bool, Int64)] = []
        while true {
            let ready = gpiod_line_event_wait(line, &timeout)
            if ready < 0 { throw DeviceError(.lost, "GPIO: \(description): \(String(cString: strerror(errno)))") }
            if ready == 0 { return edges }
            var event = gpiod_line_event()
            guard gpiod_line_event_read(line, &event) == 0 else { throw DeviceError(.lost, "GPIO: \(description): \(String(cString: strerror(errno)))") }
            // With ACTIVE_LOW the kernel reports the logical level: rising = pressed.
            edges.append((event.event_type == Int32(GPIOD_LINE_EVENT_RISING_EDGE), Int64(event.ts.tv_sec) * 1_000_000_000 + Int64(event.ts.tv_nsec)))
            timeout = timespec(tv_sec: 0, tv_nsec: 0)
        }
    }

    /// Every GPIO chip with its line names. The corresponding C functions
    /// are `gpiod_chip_iter_new`, `gpiod_chip_iter_next_noclose` and
    /// `gpiod_chip_get_line`.
    public static func chips() -> [GPIOChipInfo] {
        guard let iterator = gpiod_chip_iter_new() else { return [] }
        defer { gpiod_chip_iter_free(iterator) }
        var chips: [GPIOChipInfo] = []
        while let chip = gpiod_chip_iter_next(iterator) {
            var lines: [String] = []
            for offset in 0..<gpiod_chip_num_lines(chip) {
                let line = gpiod_chip_get_line(chip, offset)
                lines.append(line.flatMap { gpiod_line_name($0) }.map { String(cString: $0) } ?? "")
            }
            chips.append(GPIOChipInfo(name: String(cString: gpiod_chip_name(chip)), label: String(cString: gpiod_chip_label(chip)), lines: lines))
        }
        return chips
    }
}
