@testable import AcapellaBox
import AcapellaProject
import Testing

/// What the session is told of the takes finished while the transport
/// ran, once it has stopped and the writers are done.
struct FinishedTakesTests {
    static func take(_ id: Int, _ state: TakeState = .kept, part: String = "Alto") -> TakeRecord {
        var record = BoxSessionTests.take(id, state: state)
        record.part = part
        return record
    }

    /// Loop passes: the pass the stop cut short is put up, not the one before it.
    @Test func thePassTheStopCutShort() {
        let passes = (1...4).map { Self.take($0) }
        let said = FinishedTakes(unsaid: [passes], manifest: passes)
        #expect(said.review?.id == 4 && said.notKept.isEmpty)
    }

    /// A punch-out (take 1 kept, the song playing on), then a punch-in
    /// cancelled before its barline (take 2: armed frames, nothing
    /// recorded): take 2 is said as not kept, and take 1 is still put up.
    @Test func aCancelledPunchInDoesNotHideTheTakeBeforeIt() {
        let takes = [Self.take(1), Self.take(2, .discarded)]
        let said = FinishedTakes(unsaid: [takes], manifest: takes)
        #expect(said.notKept.map(\.id) == [2])
        #expect(said.review?.id == 1)
    }

    /// A kept take the singer discarded (d) while the song played on is
    /// not put up at the stop, and no older take takes its place; the
    /// review is the manifest's record (a name given meanwhile).
    @Test func aTakeDiscardedMeanwhileIsNotPutUp() {
        let finished = [Self.take(1), Self.take(2)]
        var manifest = finished
        manifest[1].state = .discarded
        #expect(FinishedTakes(unsaid: [finished], manifest: manifest).review == nil)
        manifest[1].state = .kept
        manifest[1].name = "the good one"
        #expect(FinishedTakes(unsaid: [finished], manifest: manifest).review?.name == "the good one")
    }

    /// A set: one take put up (the box's own part's, else the first
    /// writer's that kept one), each part's not-kept said.
    @Test func aSetPutsUpItsOwnPart() {
        let soprano = [Self.take(5, part: "Soprano")], bass = [Self.take(6, part: "Bass"), Self.take(8, .discarded, part: "Bass")]
        let said = FinishedTakes(unsaid: [soprano, bass], manifest: soprano + bass)
        #expect(said.review?.id == 5 && said.notKept.map(\.id) == [8])
        #expect(FinishedTakes(unsaid: [soprano, bass], manifest: soprano + bass, ownPart: "Bass").review?.id == 6)
        #expect(FinishedTakes(unsaid: [soprano, [bass[1]]], manifest: soprano + bass, ownPart: "Bass").review?.id == 5)
        #expect(FinishedTakes(unsaid: [[], bass], manifest: bass).review?.id == 6)
        #expect(FinishedTakes(unsaid: [[], []], manifest: []) == FinishedTakes(unsaid: [], manifest: []))
    }
}
