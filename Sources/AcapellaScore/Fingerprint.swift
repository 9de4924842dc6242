extension Score {
    /// What a take of `part` depends on, as a short hex string: the song's
    /// timing (pickup, meters, tempos, its end) and the part's own notes
    /// (onsets, lengths, pitches, ties). A take recorded against one
    /// fingerprint no longer lines up with a song of another. Titles,
    /// lyrics, spelling of other parts and comments do not count, so fixing
    /// a typo does not set takes aside. FNV-1a, 64 bits: a change detector,
    /// not a security measure. Nil when the song has no such part.
    public func fingerprint(ofPart part: String) -> String? {
        guard let found = parts.first(where: { $0.name == part }) else { return nil }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ value: Int) {
            var bits = UInt64(bitPattern: Int64(value))
            for _ in 0..<8 {
                hash = (hash ^ (bits & 0xFF)) &* 0x0000_0100_0000_01B3
                bits >>= 8
            }
        }
        mix(pickupTicks)
        mix(endTick)
        for change in meters { mix(change.measure); mix(change.meter.numerator); mix(change.meter.denominator) }
        for change in tempos { mix(change.tick); mix(change.tempo.milliBPM) }
        mix(-1)
        for note in found.notes {
            mix(note.startTick)
            mix(note.durationTicks)
            mix(note.pitch?.midi ?? -1)
            mix(note.tieToNext ? 1 : 0)
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
