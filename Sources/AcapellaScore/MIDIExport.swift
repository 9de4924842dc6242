/// A Standard MIDI File (format 1) of a score: a conductor track with the
/// title, tempo map, meters and key signatures, then one track per part on
/// its own channel, named after it, tied notes merged into one note, the
/// words of a verse as lyric events on their notes (a syllable the word
/// goes on from ends in "-"). Ticks stay at PPQ 960, so note positions are
/// exact; tempos are rounded to MIDI's microsecond per quarter.
public enum MIDIExport {
    /// The file's bytes. `tempoScale` multiplies every tempo; `transpose`
    /// shifts every pitch (notes leaving 0…127 are dropped); `program` is
    /// the General MIDI program (0-based; 52 = Choir Aahs).
    /// `verse`: whose words go in as lyric events (0: none).
    public static func standardMIDIFile(_ score: Score, tempoScale: Rational = Rational(1), transpose: Int = 0, program: UInt8 = 52, verse: Int = 1) -> [UInt8] {
        var tracks: [[UInt8]] = [conductorTrack(score, tempoScale: tempoScale)]
        for (index, part) in score.parts.enumerated() {
            // Channel 10 (index 9) is percussion in General MIDI: skip it.
            let channel = UInt8(index < 9 ? index : min(15, index + 1))
            tracks.append(partTrack(part, channel: channel, transpose: transpose, program: program, verse: verse))
        }
        var file: [UInt8] = Array("MThd".utf8)
        file += bigEndian(UInt32(6))
        file += bigEndian(UInt16(1))
        file += bigEndian(UInt16(tracks.count))
        file += bigEndian(UInt16(ticksPerQuarter))
        for track in tracks {
            file += Array("MTrk".utf8)
            file += bigEndian(UInt32(track.count))
            file += track
        }
        return file
    }

    /// An event at a tick; `order` sorts events on one tick (note-offs
    /// before note-ons, meta first).
    struct Event {
        var tick: Int
        var order: Int
        var bytes: [UInt8]
    }

    /// A meta event: FF type, its length (variable-length), the bytes.
    static func meta(_ type: UInt8, _ data: [UInt8]) -> [UInt8] {
        [0xFF, type] + variableLength(data.count) + data
    }

    /// Text for a meta event: UTF-8, at most 255 bytes, whole characters.
    static func text(_ string: String) -> [UInt8] {
        var text = Substring(string)
        while text.utf8.count > 255 { text = text.dropLast() }
        return Array(text.utf8)
    }

    static func conductorTrack(_ score: Score, tempoScale: Rational) -> [UInt8] {
        var events: [Event] = []
        if let title = score.title { events.append(Event(tick: 0, order: 0, bytes: meta(0x03, text(title)))) }
        for change in score.keys {
            // FF 59 02 sf mi: sharps (+) or flats (−), 0 major / 1 minor.
            let tick = change.measure <= 1 ? 0 : score.meterMap.startTick(ofMeasure: change.measure)
            events.append(Event(tick: max(0, tick), order: 0, bytes: meta(0x59, [UInt8(bitPattern: Int8(change.key.fifths)), change.key.mode == .minor ? 1 : 0])))
        }
        for change in score.tempos {
            // µs per quarter = 60,000,000,000 / (milliBPM × scale), rounded.
            let numerator = Int128(60_000_000_000) * tempoScale.denominator
            let denominator = Int128(change.tempo.milliBPM) * tempoScale.numerator
            let micros = min(0xFF_FFFF, max(1, Int((2 * numerator + denominator) / (2 * denominator))))
            events.append(Event(tick: change.tick, order: 0, bytes: [0xFF, 0x51, 0x03, UInt8(micros >> 16), UInt8((micros >> 8) & 0xFF), UInt8(micros & 0xFF)]))
        }
        let meterMap = score.meterMap
        for (index, change) in score.meters.enumerated() {
            var exponent: UInt8 = 0
            while (1 << exponent) < change.meter.denominator { exponent += 1 }
            let tick = index == 0 ? 0 : meterMap.startTick(ofMeasure: change.measure)  // a pickup is in the first meter
            events.append(Event(tick: max(0, tick), order: 0, bytes: [0xFF, 0x58, 0x04, UInt8(change.meter.numerator), exponent, 24, 8]))
        }
        return encode(events, endTick: score.endTick)
    }

    static func partTrack(_ part: Part, channel: UInt8, transpose: Int, program: UInt8, verse: Int = 1) -> [UInt8] {
        var events: [Event] = [Event(tick: 0, order: 0, bytes: meta(0x03, text(part.name)))]
        events.append(Event(tick: 0, order: 0, bytes: [0xC0 | channel, program & 0x7F]))
        var index = 0
        var end = 0
        while index < part.notes.count {
            let note = part.notes[index]
            var last = index
            while part.notes[last].tieToNext && last + 1 < part.notes.count && !part.isAttack(at: last + 1) { last += 1 }
            end = max(end, part.notes[last].endTick)
            if verse > 0, note.pitch != nil, let lyric = note.lyric(verse: verse) {
                events.append(Event(tick: note.startTick, order: 2, bytes: meta(0x05, text(lyric.text + (lyric.continuesWord ? "-" : "")))))
            }
            if let pitch = note.pitch, (0...127).contains(pitch.midi + transpose) {
                let key = UInt8(pitch.midi + transpose)
                events.append(Event(tick: note.startTick, order: 2, bytes: [0x90 | channel, key, 80]))
                events.append(Event(tick: part.notes[last].endTick, order: 1, bytes: [0x80 | channel, key, 0]))
            }
            index = last + 1
        }
        return encode(events, endTick: end)
    }

    /// Delta-timed events and the end-of-track meta event.
    static func encode(_ events: [Event], endTick: Int) -> [UInt8] {
        let sorted = events.enumerated().sorted { ($0.element.tick, $0.element.order, $0.offset) < ($1.element.tick, $1.element.order, $1.offset) }
        var bytes: [UInt8] = []
        var now = 0
        for (_, event) in sorted {
            bytes += variableLength(max(0, event.tick - now))
            bytes += event.bytes
            now = max(now, event.tick)
        }
        bytes += variableLength(max(0, endTick - now))
        bytes += [0xFF, 0x2F, 0x00]
        return bytes
    }

    /// MIDI's variable-length quantity: 7 bits a byte, high bit = more.
    static func variableLength(_ value: Int) -> [UInt8] {
        var remaining = value >> 7
        var bytes = [UInt8(value & 0x7F)]
        while remaining > 0 {
            bytes.insert(UInt8(remaining & 0x7F) | 0x80, at: 0)
            remaining >>= 7
        }
        return bytes
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] { [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)] }
    static func bigEndian(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
}
