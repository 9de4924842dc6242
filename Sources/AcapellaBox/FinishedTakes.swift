public import AcapellaProject

/// What the session is told, once the transport has stopped and every
/// writer has written what it was given, of the takes the writers finished
/// since it was last told (STYLE.md habit 6: decided here, without
/// threads; the control loop feeds it).
///
/// While the transport runs, several takes can finish: loop passes, a
/// punch-out and a punch-in cancelled before its barline (armed frames,
/// nothing recorded: a take not kept). Of those, the one put up for review
/// is the newest *kept* take — the pass the stop cut short, the punch-in
/// the singer meant — never an older pass (its review would unmute the
/// part and be replaced a moment later), and never hidden behind a
/// cancelled punch-in that came after it. Of a set's takes (sung at once)
/// one is put up, the box's own part's, and the review hears them all.
/// The takes not kept are said first, so the review's line is the last
/// one on the readout.
public struct FinishedTakes: Equatable, Sendable {
    /// Takes the writers did not keep (nothing recorded, or the disk
    /// full before anything was), oldest first: each is said.
    public var notKept: [TakeRecord]
    /// The take put up for review (and analysed): the newest kept take
    /// of the box's own part (the needle's, the readout's), else of the
    /// first writer that kept one — a set's takes were sung at once, and
    /// the review hears them all; nil when no writer kept one.
    public var review: TakeRecord?

    /// Decides from `unsaid` (per writer, oldest first, as the writer
    /// stored them) and the manifest as it is now: a kept take the singer
    /// has since discarded (`d` while the song played on) is not put up
    /// again, and an older pass does not take its place.
    public init(unsaid: [[TakeRecord]], manifest: [TakeRecord], ownPart: String? = nil) {
        notKept = unsaid.flatMap { $0.filter { $0.state != .kept } }
        let newest = unsaid.compactMap { takes -> TakeRecord? in
            guard let newest = takes.last(where: { $0.state == .kept }) else { return nil }
            guard let now = manifest.first(where: { $0.id == newest.id }) else { return newest }
            return now.state == .kept ? now : nil
        }
        review = newest.first { $0.part == ownPart } ?? newest.first
    }
}
