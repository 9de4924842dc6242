import AcapellaScore
import Foundation

/// What a merge did.
public struct MergeOutcome: Sendable {
    /// The takes added, as this project now records them (new ids).
    public var added: [TakeRecord] = []
    /// Takes already here: the same file name with the same audio.
    public var alreadyHere = 0
    /// Takes left behind, one line each (being recorded there, unreadable).
    public var leftBehind: [String] = []
}

extension Project {
    /// Why the takes of `other` cannot join this project's, or nil: another
    /// sample rate, another arrangement (other parts), another edit (the
    /// timing or a part's notes differ — the first place is named).
    public func mergeRefusal(_ other: Project) -> String? {
        if other.manifest.sampleRate != manifest.sampleRate {
            return "its takes are at \(other.manifest.sampleRate) Hz, this project's at \(manifest.sampleRate) Hz"
        }
        let mine = score.parts.map(\.name), theirs = other.score.parts.map(\.name)
        if mine != theirs {
            return "another arrangement: its parts are \(theirs.joined(separator: ", ")); this project's are \(mine.joined(separator: ", "))"
        }
        guard let difference = Self.editDifference(score, other.score) else { return nil }
        if let theirs = other.score.title, theirs != score.title {
            return "another song: '\(theirs)' (this project holds '\(score.title ?? "untitled")')"
        }
        return difference
    }

    /// Where two songs with the same parts differ in what takes depend on
    /// (timing, notes), or nil when they do not.
    static func editDifference(_ mine: Score, _ theirs: Score) -> String? {
        if mine.pickupTicks != theirs.pickupTicks || mine.meters != theirs.meters {
            return "another edit of the song: its pickup or meters differ"
        }
        if mine.tempos != theirs.tempos { return "another edit of the song: its tempo marks differ" }
        let map = mine.meterMap
        for (part, other) in zip(mine.parts, theirs.parts) where mine.fingerprint(ofPart: part.name) != theirs.fingerprint(ofPart: part.name) {
            func same(_ a: NoteEvent, _ b: NoteEvent) -> Bool {
                if a.startTick != b.startTick || a.durationTicks != b.durationTicks { return false }
                return a.pitch?.midi == b.pitch?.midi && a.tieToNext == b.tieToNext
            }
            let count = min(part.notes.count, other.notes.count)
            let first = (0..<count).first { !same(part.notes[$0], other.notes[$0]) }
            let tick = first.map { part.notes[$0].startTick } ?? (count > 0 ? part.notes[count - 1].startTick : 0)
            return "another edit of the song: \(part.name)'s notes differ from measure \(map.measure(containing: tick))"
        }
        if mine.endTick != theirs.endTick { return "another edit of the song: its length differs" }
        return nil
    }

    /// Brings every take of `other` into this project (a writer's job):
    /// each audio file copied under its own name (the box id in it keeps
    /// names apart; a clash with other audio gets a new name, nothing is
    /// ever overwritten) — complete and flushed before its record is
    /// written; a take already here (same name, same audio) is not copied
    /// twice. The records keep their singer, box, dates, alignment and
    /// state, with new ids. A part that already has a take playing keeps
    /// it; otherwise the takes that played in `other` play here.
    public func merge(_ other: Project) throws(ProjectError) -> MergeOutcome {
        try requireWriter()
        if let reason = mergeRefusal(other) { throw ProjectError(description: "\(other.path): cannot be merged into \(path): \(reason)") }
        var outcome = MergeOutcome()
        let playingHere = Set(manifest.takes.filter { $0.active && $0.state.isUsable && conditions[$0.id] == nil }.map(\.part))
        var nextID = freshTakeID
        for take in other.manifest.takes.sorted(by: { $0.id < $1.id }) {
            if take.state == .recording {
                outcome.leftBehind.append("take \(take.id) (\(take.part)): still being recorded there, or interrupted (open it with 'acapella takes \(other.path) recover' first)")
                continue
            }
            // Its file inside the other project's takes folder, and no link (it could lead anywhere).
            let source: String
            do { source = try other.takePath(take) } catch {
                outcome.leftBehind.append("take \(take.id) (\(take.part)): \(error.description)")
                continue
            }
            // The same audio here already: under its own name, or renamed by an earlier merge.
            if manifest.takes.contains(where: { ($0.file == take.file || (take.recorded != nil && $0.box == take.box && $0.recorded == take.recorded))
                && (try? takePath($0)).map { FileCopy.sameContents(source, $0) } == true }) {
                outcome.alreadyHere += 1
                continue
            }
            let stem = (take.file as NSString).deletingPathExtension
            var file = take.file
            var copied = false
            for attempt in 1...1_000 {
                let target: String
                do { target = try confined(file, what: "take \(take.id)") } catch {
                    outcome.leftBehind.append("take \(take.id) (\(take.part)): \(error.description)")
                    break
                }
                do {
                    try FileCopy.copy(source, to: target)
                    copied = true
                    break
                } catch where error.exists {
                    file = "\(stem)-copy\(attempt).wav"
                } catch {
                    outcome.leftBehind.append("take \(take.id) (\(take.part)): \(error.description)")
                    break
                }
            }
            guard copied else { continue }
            var record = take
            record.id = nextID
            record.originalID = nil  // a take of this project now, numbered here
            nextID += 1
            record.file = file
            record.active = take.active && take.state.isUsable && other.conditions[take.id] == nil && !playingHere.contains(take.part)
            outcome.added.append(record)
        }
        try add(outcome.added)
        outcome.added = outcome.added.map { added in manifest.takes.first { $0.id == added.id } ?? added }
        return outcome
    }
}
