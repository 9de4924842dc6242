public import AcapellaScore

/// A part's words as lines of four measures (a hymn's phrase; in a song
/// with a pickup each line starts that much before its barline, as the
/// phrases do), for the readouts and the timed lyrics beside a
/// mix: syllables joined into words ("A-maz-ing grace …"). Where the music
/// goes back (a repeat, the next verse) a new line begins.
public struct LyricLines: Sendable {
    /// Line text and the song sample it starts on, in order.
    public let lines: [(start: Int64, text: String)]

    /// The lines of verse `verse` of `part` on `schedule`; `pickupTicks`
    /// the song's pickup, `writtenMeasure` maps a measure of an unfolded
    /// song to the written one (`Score.writtenMeasure`).
    public init(part: Part, schedule: Schedule, verse: Int = 1, pickupTicks: Int = 0, writtenMeasure: (Int) -> Int = { $0 }) {
        var lines: [(start: Int64, text: String)] = []
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
                currentGroup = group
                text = ""
                joinNext = false
            }
            text += (text.isEmpty || joinNext ? "" : " ") + lyric.text + (lyric.continuesWord ? "-" : "")
            joinNext = lyric.continuesWord
        }
        if !text.isEmpty && !lines.isEmpty { lines[lines.count - 1].text = text }
        self.lines = lines
    }

    /// The line being sung at `sample` ("" before the first).
    public func line(at sample: Int64) -> String {
        let index = lines.partitionIndex { $0.start > sample } - 1
        return index >= 0 ? lines[index].text : ""
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
