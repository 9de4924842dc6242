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

/// A foot switch on a GPIO line through libgpiod — 1.6 on Debian 12 and
/// Raspberry Pi OS bookworm, 2.x on Debian 13 and trixie, through the
/// CGPIOD shim: both edges with kernel timestamps, as active-low with a
/// pull-up by default. The gesture recognizer works on the timestamps;
/// nothing here reads a clock.
public final class GPIOSwitch {
    private let gpio: UnsafeMutablePointer<acapella_gpio>
    /// "gpiochip0 line 17 (GPIO17)", for messages.
    public let description: String

    /// Requests the line. `chip` is a name, path, number or label; `line` a
    /// number or a line name. Throws a one-line reason (no chip, no such
    /// line, line busy). The corresponding C function is the shim's
    /// `acapella_gpio_open` (libgpiod's `gpiod_chip_open_lookup` and
    /// `gpiod_line_request_both_edges_events_flags` in 1.6,
    /// `gpiod_chip_open` and `gpiod_chip_request_lines` in 2.x).
    public init(chip chipName: String, line lineName: String, activeLow: Bool = true, bias: String = "pull-up", consumer: String = "acapella") throws(DeviceError) {
        let biasCode: Int32 = switch bias {
        case "pull-up": Int32(ACAPELLA_GPIO_BIAS_PULL_UP)
        case "pull-down": Int32(ACAPELLA_GPIO_BIAS_PULL_DOWN)
        default: Int32(ACAPELLA_GPIO_BIAS_DISABLE)
        }
        var stage: Int32 = 0
        guard let gpio = acapella_gpio_open(chipName, lineName, activeLow, biasCode, consumer, &stage) else {
            let reason = String(cString: strerror(errno))
            switch stage {
            case Int32(ACAPELLA_GPIO_NO_CHIP):
                let chips = Self.deviceNames()
                throw DeviceError(.configuration, "GPIO: no chip '\(chipName)' (\(reason)); chips here: \(chips.isEmpty ? "none" : chips.sorted().joined(separator: ", ")). The box runs on without the foot switch")
            case Int32(ACAPELLA_GPIO_NO_LINE):
                throw DeviceError(.configuration, "GPIO: \(chipName) has no line '\(lineName)'")
            default:
                throw DeviceError(.configuration, "GPIO: \(chipName) line \(lineName) cannot be requested (\(reason); another program may hold it)")
            }
        }
        self.gpio = gpio
        let name = withUnsafeBytes(of: gpio.pointee.line_name, Self.text)
        let chip = withUnsafeBytes(of: gpio.pointee.chip_name, Self.text)
        description = "\(chip) line \(gpio.pointee.offset)\(name.isEmpty ? "" : " (\(name))")"
    }

    deinit { acapella_gpio_close(gpio) }

    /// The line's event descriptor, for the caller's own `poll`. The
    /// corresponding C function is the shim's `acapella_gpio_fd`.
    public var fileDescriptor: Int32 { acapella_gpio_fd(gpio) }

    /// Waits up to `timeoutNanoseconds` for edges; returns them as
    /// (pressed, kernel timestamp in ns). The corresponding C functions are
    /// the shim's `acapella_gpio_wait` and `acapella_gpio_read`.
    public func read(timeoutNanoseconds: Int64) throws(DeviceError) -> [(pressed: Bool, nanoseconds: Int64)] {
        var timeout = timeoutNanoseconds
        var edges: [(Bool, Int64)] = []
        while true {
            let ready = acapella_gpio_wait(gpio, timeout)
            if ready < 0 { throw DeviceError(.lost, "GPIO: \(description): \(String(cString: strerror(errno)))") }
            if ready == 0 { return edges }
            var rising = false
            var nanoseconds: Int64 = 0
            guard acapella_gpio_read(gpio, &rising, &nanoseconds) == 0 else { throw DeviceError(.lost, "GPIO: \(description): \(String(cString: strerror(errno)))") }
            // With active-low the kernel reports the logical level: rising = pressed.
            edges.append((rising, nanoseconds))
            timeout = 0
        }
    }

    /// Every GPIO chip (`/dev/gpiochip*`, in name order) with its line
    /// names. The corresponding C functions are the shim's
    /// `acapella_gpio_chip_open`, `acapella_gpio_chip_describe` and
    /// `acapella_gpio_chip_line_name`.
    public static func chips() -> [GPIOChipInfo] {
        deviceNames().sorted { $0.localizedStandardCompare($1) == .orderedAscending }.compactMap { device in
            guard let chip = acapella_gpio_chip_open("/dev/" + device) else { return nil }
            defer { acapella_gpio_chip_close(chip) }
            var name = [CChar](repeating: 0, count: 64)
            var label = [CChar](repeating: 0, count: 64)
            let count = acapella_gpio_chip_describe(chip, &name, name.count, &label, label.count)
            guard count >= 0 else { return nil }
            var lines: [String] = []
            var line = [CChar](repeating: 0, count: 64)
            for offset in 0..<UInt32(count) {
                acapella_gpio_chip_line_name(chip, offset, &line, line.count)
                lines.append(line.withUnsafeBytes(text))
            }
            return GPIOChipInfo(name: name.withUnsafeBytes(text), label: label.withUnsafeBytes(text), lines: lines)
        }
    }

    /// The GPIO character devices in /dev (`gpiochip0`…), unordered.
    private static func deviceNames() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? []).filter { $0.hasPrefix("gpiochip") }
    }

    /// A C string in a fixed buffer (the shim's names), up to its NUL.
    private static func text(_ bytes: UnsafeRawBufferPointer) -> String {
        String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
    }
}
