import AcapellaAnalysis
import AcapellaCLI
import AcapellaProject
import AcapellaScore
import AcapellaStatus
import Foundation

/// `acapella notes FILE [--midi OUT.mid]`: the notes of any recording, with
/// no score (NoteSplitter), as CSV; with `--midi`, also as a Standard MIDI
/// File (one track, 60 BPM: a quarter note is a second, so ticks are exact
/// milliseconds × 0.96).
func runNotes(_ arguments: ParsedArguments) throws -> Int32 {
    let path = arguments.positionals[0]
    let decoded = try readRecording(path, for: "note splitting")
    let notes = NoteSplitter(sampleRate: decoded.sampleRate).notes(in: decoded.samples)
    let rate = Double(decoded.sampleRate)
    if let midiPath = arguments.value("--midi") {
        let bytes = MIDIExport.standardMIDIFile(notesScore(notes, sampleRate: decoded.sampleRate, title: URL(fileURLWithPath: path).lastPathComponent))
        do { try Data(bytes).write(to: URL(fileURLWithPath: midiPath), options: .atomic) } catch {
            throw CLIError("\(midiPath): cannot write: \(error.localizedDescription)", exitCode: 1)
        }
    }
    print("onset_s,offset_s,midi,note,cents,hz")
    for note in notes {
        print(String(format: "%.4f,%.4f,%d,%@,%+.1f,%.2f", Double(note.onset) / rate, Double(note.offset) / rate, note.midi,
                     NoteName.name(note.midi), note.cents, note.frequency))
    }
    return 0
}

/// The notes as a one-part score at 60 BPM (960 ticks a second), rests
/// between them; notes outside MIDI's range are left out.
func notesScore(_ notes: [SplitNote], sampleRate: Int, title: String) -> Score {
    var events: [NoteEvent] = []
    var tick = 0
    for note in notes where (0...127).contains(note.midi) {
        let start = Int((Double(note.onset) * 960 / Double(sampleRate)).rounded())
        let end = Int((Double(note.offset) * 960 / Double(sampleRate)).rounded())
        guard start >= tick, end > start else { continue }
        if start > tick { events.append(NoteEvent(startTick: tick, durationTicks: start - tick, value: NoteValue(4), pitch: nil)) }
        events.append(NoteEvent(startTick: start, durationTicks: end - start, value: NoteValue(4), pitch: sharpSpelled(note.midi)))
        tick = end
    }
    return Score(title: title, tempos: [TempoChange(tick: 0, tempo: Tempo(bpm: 60))], parts: [Part(name: "Voice", notes: events)])
}

/// MIDI note `midi` spelled with sharps (C, C#, D … B).
func sharpSpelled(_ midi: Int) -> Pitch {
    let (octave, semitone) = (midi / 12 - 1, midi % 12)
    let steps: [(Step, Int)] = [(.c, 0), (.c, 1), (.d, 0), (.d, 1), (.e, 0), (.f, 0), (.f, 1), (.g, 0), (.g, 1), (.a, 0), (.a, 1), (.b, 0)]
    return Pitch(step: steps[semitone].0, alter: steps[semitone].1, octave: octave)
}
