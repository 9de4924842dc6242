import AcapellaDSP

/// Note names and cents for the needle.
public enum NoteName {
    static let names = ["C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B"]
    static let flatNames = ["C", "Db", "D", "Eb", "E", "F", "Gb", "G", "Ab", "A", "Bb", "B"]

    /// "A4" for 440 Hz (nearest equal-tempered note).
    public static func nearest(_ frequency: Double) -> (name: String, midi: Int, cents: Double) {
        let exact = Tuning.midi(frequency: frequency)
        let midi = Int(exact.rounded())
        return (name(midi), midi, (exact - Double(midi)) * 100)
    }

    /// "C4" for MIDI 60.
    public static func name(_ midi: Int) -> String {
        names[((midi % 12) + 12) % 12] + String(midi / 12 - 1 - (midi < 0 && midi % 12 != 0 ? 1 : 0))
    }

    /// MIDI `midi` spelled in a key of `fifths` sharps (negative: flats):
    /// black keys as flats in flat keys ("Ab4" in E♭ major), as sharps
    /// otherwise — the spelling a singer reads in that key.
    public static func name(_ midi: Int, fifths: Int) -> String {
        guard fifths < 0 else { return name(midi) }
        return flatNames[((midi % 12) + 12) % 12] + String(midi / 12 - 1 - (midi < 0 && midi % 12 != 0 ? 1 : 0))
    }

    /// The key signature (fifths, −6…+6) a key of `fifths` has when it
    /// sounds `semitones` higher: F major (−1) up 2 is G major (+1); the
    /// six-accidental key keeps the side it came from (E♭ minor up 0 stays
    /// −6, F♯ major stays +6).
    public static func fifths(_ fifths: Int, transposedBy semitones: Int) -> Int {
        var moved = ((fifths + 7 * semitones) % 12 + 12) % 12
        if moved > 6 || (moved == 6 && fifths < 0) { moved -= 12 }
        return moved
    }

    /// "F#" for pitch class 6 (0: C).
    public static func pitchClassName(_ pitchClass: Int) -> String { names[(pitchClass % 12 + 12) % 12] }

    /// Cents of `frequency` above MIDI note `midi` (negative: flat).
    public static func cents(_ frequency: Double, from midi: Int) -> Double {
        Tuning.cents(frequency, from: midi)
    }
}
