import Foundation

/// Everything the readouts show, gathered by the box from the engine
/// snapshot, the pitch tracker and the project. Pure data.
public struct ReadoutState: Hashable, Sendable {
    public var song: String
    public var part: String
    /// "stopped", "count-in", "playing" or "recording".
    public var state: String
    public var measure: Int
    public var beat: Int
    /// Tempo, BPM (after the multiplier).
    public var tempo: Double
    /// "5–8" or nil.
    public var loop: String?
    public var takes: Int
    /// Input peak, dBFS (−∞ for silence).
    public var inputDB: Double
    /// Clipped since the last frame.
    public var clipped: Bool
    /// The note the part has now ("A4"), nil: none.
    public var note: String?
    /// The sung pitch against it, cents (nil: no pitch).
    public var cents: Double?
    /// The lyric line around now.
    public var lyric: String

    /// A state.
    public init(song: String, part: String, state: String, measure: Int, beat: Int, tempo: Double, loop: String? = nil, takes: Int = 0,
                inputDB: Double = -.infinity, clipped: Bool = false, note: String? = nil, cents: Double? = nil, lyric: String = "") {
        self.song = song
        self.part = part
        self.state = state
        self.measure = measure
        self.beat = beat
        self.tempo = tempo
        self.loop = loop
        self.takes = takes
        self.inputDB = inputDB
        self.clipped = clipped
        self.note = note
        self.cents = cents
        self.lyric = lyric
    }
}

/// Snapshot → text frames, pure functions (golden-tested). The console
/// frame fits any terminal of 40×10 or more; the LCD frames fit 16×2 and
/// 20×4 character displays exactly.
public enum Readout {
    /// Pads or cuts to exactly `width` characters.
    static func fit(_ text: String, _ width: Int) -> String {
        let characters = Array(text)
        if characters.count >= width { return String(characters.prefix(width)) }
        return text + String(repeating: " ", count: width - characters.count)
    }

    /// The needle: `width` cells for −50…+50 cents, `|` at the centre,
    /// the pointer where the voice is ('<' or '>' pinned at the ends).
    public static func needle(_ cents: Double?, width: Int) -> String {
        var cells = Array(repeating: Character("-"), count: width)
        let middle = width / 2
        cells[middle] = "|"
        guard let cents else { return String(cells) }
        let clamped = max(-50, min(50, cents))
        let position = middle + Int((clamped / 50 * Double(middle)).rounded())
        cells[max(0, min(width - 1, position))] = cents < -50 ? "<" : cents > 50 ? ">" : "#"
        return String(cells)
    }

    /// The input meter: `width` cells from −60 to 0 dBFS, "CLIP" when clipped.
    public static func meter(_ decibels: Double, clipped: Bool, width: Int) -> String {
        if clipped { return fit(String(repeating: "#", count: max(0, width - 4)) + "CLIP", width) }
        let filled = decibels.isFinite ? Int(((max(-60, min(0, decibels)) + 60) / 60 * Double(width)).rounded()) : 0
        return String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
    }

    static func stateLabel(_ state: String) -> String {
        switch state {
        case "recording": "REC"
        case "count-in": "COUNT"
        case "playing": "PLAY"
        case "review": "TAKE?"
        default: "STOP"
        }
    }

    /// The console frame: `height` lines of exactly `width` characters.
    public static func console(_ readout: ReadoutState, width: Int, height: Int) -> [String] {
        let width = max(40, width)
        let height = max(10, height)
        let pitch: String
        if let note = readout.note, let cents = readout.cents {
            pitch = String(format: "%@ %+4.0f cents", note, cents)
        } else if let note = readout.note {
            pitch = "\(note)  (no voice)"
        } else {
            pitch = "(rest)"
        }
        var lines = [
            fit("\(readout.song) — \(readout.part)", width),
            fit("\(stateLabel(readout.state).padding(toLength: 6))bar \(readout.measure).\(readout.beat)   ♩ = \(Int(readout.tempo.rounded()))\(readout.loop.map { "   loop \($0)" } ?? "")   takes \(readout.takes)", width),
            fit("", width),
            fit("  -50 " + needle(readout.cents, width: width - 14) + " +50", width),
            fit("  " + pitch, width),
            fit("", width),
            fit("input " + meter(readout.inputDB, clipped: readout.clipped, width: width - 16) + (readout.inputDB.isFinite ? String(format: " %5.1f dB", readout.inputDB) : "   -inf dB"), width),
            fit("", width),
            fit("  " + readout.lyric, width),
        ]
        while lines.count < height - 1 { lines.append(fit("", width)) }
        lines.append(fit("space play  r record  s stop  ? keys  q quit", width))
        return lines
    }

    /// The LCD frame for a `columns`×`rows` display (16×2 or 20×4).
    public static func lcd(_ readout: ReadoutState, columns: Int, rows: Int) -> [String] {
        let top = fit("\(stateLabel(readout.state)) \(readout.measure).\(readout.beat)" + (readout.note.map { " " + $0 } ?? ""), columns)
        let centsText = readout.cents.map { String(format: "%+3.0f", max(-99, min(99, $0))) } ?? "   "
        let gauge = fit(needle(readout.cents, width: columns - 4) + centsText, columns)
        if rows <= 2 { return [top, gauge] }
        return [
            fit(readout.song, columns),
            fit("\(stateLabel(readout.state)) \(readout.measure).\(readout.beat) \(Int(readout.tempo.rounded()))bpm \(readout.part)", columns),
            fit((readout.note ?? "-") + " " + (readout.cents.map { String(format: "%+.0f cents", $0) } ?? ""), columns),
            gauge,
        ] + Array(repeating: fit("", columns), count: max(0, rows - 4))
    }
}

extension String {
    func padding(toLength length: Int) -> String {
        count >= length ? self : self + String(repeating: " ", count: length - count)
    }
}
