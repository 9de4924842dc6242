@testable import AcapellaScore
import Foundation
import Testing

/// A minimal Standard MIDI File reader, written here independently of the
/// exporter: tracks of (absolute tick, status, data) events.
struct SMFReader {
    var format = 0
    var division = 0
    var tracks: [[(tick: Int, bytes: [UInt8])]] = []

    init(_ data: [UInt8]) throws {
        struct Bad: Error {}
        var at = 0
        func u32() throws -> Int {
            guard at + 4 <= data.count else { throw Bad() }
            defer { at += 4 }
            return Int(data[at]) << 24 | Int(data[at + 1]) << 16 | Int(data[at + 2]) << 8 | Int(data[at + 3])
        }
        func u16() throws -> Int {
            guard at + 2 <= data.count else { throw Bad() }
            defer { at += 2 }
            return Int(data[at]) << 8 | Int(data[at + 1])
        }
        guard Array(data.prefix(4)) == Array("MThd".utf8) else { throw Bad() }
        at = 4
        guard try u32() == 6 else { throw Bad() }
        format = try u16()
        let count = try u16()
        division = try u16()
        for _ in 0..<count {
            guard Array(data[at..<(at + 4)]) == Array("MTrk".utf8) else { throw Bad() }
            at += 4
            let end = try u32() + at
            var tick = 0
            var events: [(Int, [UInt8])] = []
            while at < end {
                var delta = 0
                repeat {
                    delta = delta << 7 | Int(data[at] & 0x7F)
                    at += 1
                } while data[at - 1] & 0x80 != 0
                tick += delta
                let status = data[at]
                let length: Int
                if status == 0xFF {
                    length = 3 + Int(data[at + 2])
                } else if status & 0xF0 == 0xC0 {
                    length = 2
                } else {
                    length = 3
                }
                events.append((tick, Array(data[at..<(at + length)])))
                at += length
            }
            tracks.append(events)
        }
    }
}

@Suite struct MIDIExportTests {
    /// Every attack of every part becomes a note-on on its exact tick and
    /// pitch, each with a note-off at the end of its tie chain; tempos land
    /// as microseconds per quarter.
    @Test(arguments: ["amazing-grace.acasong", "bach-bwv66.6.acasong", "simple-harmony.acasong"])
    func notesLandOnTheirTicks(name: String) throws {
        let text = try String(contentsOf: packageRoot.appendingPathComponent("Songs/\(name)"), encoding: .utf8)
        let score = try Acasong.parse(text)
        let file = try SMFReader(MIDIExport.standardMIDIFile(score, transpose: -2))
        #expect(file.format == 1 && file.division == 960 && file.tracks.count == score.parts.count + 1)
        let tempos = file.tracks[0].filter { $0.bytes.starts(with: [0xFF, 0x51]) }
        #expect(tempos.map(\.tick) == score.tempos.map(\.tick))
        for (tempo, change) in zip(tempos, score.tempos) {
            let micros = Int(tempo.bytes[3]) << 16 | Int(tempo.bytes[4]) << 8 | Int(tempo.bytes[5])
            #expect(abs(Double(micros) - 60e9 / Double(change.tempo.milliBPM)) <= 0.5)
        }
        for (index, part) in score.parts.enumerated() {
            let events = file.tracks[index + 1]
            let ons = events.filter { $0.bytes[0] & 0xF0 == 0x90 && $0.bytes[2] > 0 }
            let offs = events.filter { $0.bytes[0] & 0xF0 == 0x80 }
            let attacks = part.notes.indices.filter { part.notes[$0].pitch != nil && part.isAttack(at: $0) }
            #expect(ons.map(\.tick) == attacks.map { part.notes[$0].startTick }, "\(name) \(part.name)")
            #expect(ons.map { Int($0.bytes[1]) } == attacks.map { part.notes[$0].pitch!.midi - 2 })
            #expect(offs.count == ons.count)
            #expect(Set(ons.map { $0.bytes[0] & 0x0F }).count == 1 && ons.first!.bytes[0] & 0x0F != 9, "one channel per part, never percussion")
        }
    }

    /// What says what the file is: the title and each part's name as track
    /// names, the key signatures where the keys change, and the words of
    /// the chosen verse as lyric events on their notes' ticks ("A-" where
    /// the word goes on); no words with verse 0.
    @Test(arguments: [1, 2, 0])
    func namesKeysAndWordsGoIn(verse: Int) throws {
        let text = try String(contentsOf: packageRoot.appendingPathComponent("Songs/amazing-grace.acasong"), encoding: .utf8)
        let score = try Acasong.parse(text)
        let file = try SMFReader(MIDIExport.standardMIDIFile(score, verse: verse))
        func texts(_ events: [(tick: Int, bytes: [UInt8])], type: UInt8) -> [(Int, String)] {
            events.filter { $0.bytes.starts(with: [0xFF, type]) }.map { ($0.tick, String(decoding: $0.bytes.dropFirst(3), as: UTF8.self)) }
        }
        #expect(texts(file.tracks[0], type: 0x03).map(\.1) == [score.title!])
        let keys = file.tracks[0].filter { $0.bytes.starts(with: [0xFF, 0x59, 0x02]) }
        #expect(keys.map { Int(Int8(bitPattern: $0.bytes[3])) } == score.keys.map(\.key.fifths))
        #expect(keys.map { $0.bytes[4] } == score.keys.map { $0.key.mode == .minor ? 1 : 0 })
        for (index, part) in score.parts.enumerated() {
            let track = file.tracks[index + 1]
            #expect(texts(track, type: 0x03).map(\.1) == [part.name])
            let expected = verse == 0 ? [] : part.notes.compactMap { note in
                note.pitch == nil ? nil : note.lyric(verse: verse).map { (note.startTick, $0.text + ($0.continuesWord ? "-" : "")) }
            }
            let lyrics = texts(track, type: 0x05)
            #expect(lyrics.map(\.0) == expected.map(\.0) && lyrics.map(\.1) == expected.map(\.1), "\(part.name), verse \(verse)")
            if verse == 1 { #expect(lyrics.first?.1 == "A-" && lyrics.count > 20) }
        }
    }

    @Test func variableLengthQuantities() {
        #expect(MIDIExport.variableLength(0) == [0x00])
        #expect(MIDIExport.variableLength(0x7F) == [0x7F])
        #expect(MIDIExport.variableLength(0x80) == [0x81, 0x00])
        #expect(MIDIExport.variableLength(0x0FFF_FFFF) == [0xFF, 0xFF, 0xFF, 0x7F])
    }
}
