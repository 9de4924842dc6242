public import AcapellaScore

/// A part's words as lines of four measures (a hymn's phrase; in a song
/// with a pickup each line starts that much before its barline, as the
/// phrases do), for the readouts and the timed lyrics beside a
/// mix: syllables joined into words ("A-maz-ing grace …"). Where the music
/// goes back (a repeat, the next verse) a new line begins.
public struct LyricLines: Sendable {
    /// Line text and the song sample it starts on, in order.
    public let lines: [(start: Int64, text: String)]
    /// Each line's syllables and the song samples they start on; a
    /// syllable that ends a word (not the line) carries the space after it.
    public let syllables: [[(start: Int64, text: String)]]

    /// The lines of verse `verse` of `part` on `schedule`; `pickupTicks`
    /// the song's pickup, `writtenMeasure` maps a measure of an unfolded
    /// song to the written one (`Score.writtenMeasure`).
    public init(part: Part, schedule: Schedule, verse: Int = 1, pickupTicks: Int = 0, writtenMeasure: (Int) -> Int = { $0 }) {
        var lines: [(start: Int64, text: String)] = []
        var syllables: [[(start: Int64, text: String)]] = []
        var currentGroup = Int.min
        var text = ""
        var joinNext = false
        var pass = 0
        var lastWritten = Int.min
        for note in part.notes {
            guard let lyric = note.lyric(verse: verse) else { continue }
            let sample = schedule.timeMap.sample(atTick: note.startTick)
            let written = writtenMeasure(schedule.measure(at: schedule.timeMap.sample(atTick: note.startTick + pickupTicks)))
            if written < lastWritten { pass += 1 }
            lastWritten = written
            let group = pass << 32 | max(0, written - 1) / 4
            // A word is never split across lines.
            if group != currentGroup && !(joinNext && pass == currentGroup >> 32) {
                if !text.isEmpty { lines[lines.count - 1].text = text }
                lines.append((sample, ""))
                syllables.append([])
                currentGroup = group
                text = ""
                joinNext = false
            }
            text += (text.isEmpty || joinNext ? "" : " ") + lyric.text + (lyric.continuesWord ? "-" : "")
            if !joinNext, let last = syllables[syllables.count - 1].indices.last { syllables[syllables.count - 1][last].text += " " }
            syllables[syllables.count - 1].append((sample, lyric.text))
            joinNext = lyric.continuesWord
        }
        if !text.isEmpty && !lines.isEmpty { lines[lines.count - 1].text = text }
        self.lines = lines
        self.syllables = syllables
    }

    /// The line being sung at `sample` ("" before the first).
    public func line(at sample: Int64) -> String {
        let index = lines.partitionIndex { $0.start > sample } - 1
        return index >= 0 ? lines[index].text : ""
    }

    /// The lines as timed lyrics from sample 0 at `sampleRate`, to the
    /// millisecond: each line at its first syllable, and (with `words`)
    /// each syllable stamped (enhanced LRC: `<mm:ss.xxx>A<…>maz<…>ing `).
    public func timedLyrics(sampleRate: Int, title: String?, artist: String? = nil, words: Bool = true) -> LRC {
        func milliseconds(_ sample: Int64) -> Int { Int((max(0, sample) * 1_000 + Int64(sampleRate / 2)) / Int64(sampleRate)) }
        let timed = zip(lines, syllables).map { line, syllables in
            let stamped = syllables.map { LRC.Word(milliseconds: milliseconds($0.start), text: $0.text) }
            return LRC.Line(milliseconds: milliseconds(line.start), text: stamped.map(\.text).joined(), words: words ? stamped : [])
        }
        return LRC(title: title, artist: artist, lines: timed)
    }

    /// The lines as an LRC file (`[mm:ss.xx]line`), the timed-lyrics form
    /// music players show beside an audio file; times from sample 0 at
    /// `sampleRate`.
    public func lrc(sampleRate: Int, title: String?) -> String {
        var text = title.map { "[ti:\($0)]\n" } ?? ""
        for line in lines {
            let centiseconds = max(0, line.start) * 100 / Int64(sampleRate)
            let minutes = centiseconds / 6000
            let seconds = centiseconds % 6000
            text += "[" + (minutes < 10 ? "0" : "") + "\(minutes):" + (seconds < 1000 ? "0" : "") + "\(seconds / 100)." + (seconds % 100 < 10 ? "0" : "") + "\(seconds % 100)]" + line.text + "\n"
        }
        return text
    }
}
