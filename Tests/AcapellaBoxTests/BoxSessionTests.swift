@testable import AcapellaBox
import AcapellaControl
@testable import AcapellaEngine
@testable import AcapellaProject
import AcapellaScore
import AcapellaStatus
import AcapellaWeb
import Foundation
import Testing

/// The box's behaviour, alone: every action in every transport state, the
/// review of a take, tempo and count-in, song and part selection, the key
/// help, messages and lights — fed by hand, no thread, device or file.
@Suite struct BoxSessionTests {
    static let score = try! Acasong.parse(songText("amazing-grace.acasong"))

    static func context(countIn: Int = 1, metronome: Bool = false, refused: String? = nil, once: Bool = false, songCount: Int = 3) -> BoxSession.Context {
        let schedule = try! Schedule(score: score, options: ScheduleOptions(countInMeasures: countIn))
        var context = BoxSession.Context(score: score, schedule: schedule, partIndex: 1, songIndex: 0, songCount: songCount, countIn: countIn)
        context.metronome = metronome
        context.recordingRefused = refused
        context.playOnceAndQuit = once
        return context
    }

    static func snapshot(_ state: Transport.State = .stopped, measure: Int = 1, position: Int64 = 40_000, looping: Bool = false) -> EngineSnapshot {
        EngineSnapshot(serial: 1, position: position, state: state, measure: measure, beat: 1, looping: looping, currentMIDI: [nil, nil, nil, nil],
                       partPeaks: [0, 0, 0, 0], outputPeak: 0, refusedCommands: 0)
    }

    static func take(_ id: Int, state: TakeState = .kept, frames: Int64 = 480_000) -> TakeRecord {
        TakeRecord(id: id, part: "Alto", file: "takes/alto-\(id).wav", alignmentOffsetSamples: 0, nudgeSamples: 0, range: nil, tempoScale: "1", transpose: 0,
                   sampleRate: 48_000, state: state, active: true, frames: frames, dropouts: [], note: state == .kept ? nil : "nothing was recorded",
                   calibration: nil, scoreHash: nil)
    }

    static func said(_ effects: [BoxSession.Effect]) -> [String] {
        effects.compactMap { if case .say(let text) = $0 { text } else { nil } }
    }

    static func commands(_ effects: [BoxSession.Effect]) -> [EngineCommand] {
        effects.flatMap { effect -> [EngineCommand] in
            if case .engine(let commands) = effect { return commands }
            return []
        }
    }

    /// Every action, in every transport state, does something the singer
    /// can see: it says what it did (or why not), or moves on to another
    /// song, part, calibration or shutdown.
    @Test(arguments: [Transport.State.stopped, .countIn, .playing, .recording])
    func everyActionSaysWhatItDid(state: Transport.State) {
        for action in ControlAction.allCases {
            var session = BoxSession(Self.context())
            let effects = session.handle(.action(action), snapshot: Self.snapshot(state))
            let visible = effects.contains { effect in
                switch effect {
                case .say, .end, .retime, .undoLastTake: true
                default: false
                }
            }
            #expect(visible, "\(action.rawValue) while \(state): \(effects)")
        }
    }

    @Test func theKeysTheIssueFoundSilentNowSpeak() {
        var session = BoxSession(Self.context(metronome: true))
        // The metronome was on from the settings: the first `m` turns it off.
        #expect(Self.said(session.handle(.action(.metronome), snapshot: Self.snapshot(.playing))) == ["metronome off"])
        #expect(Self.said(session.handle(.action(.metronome), snapshot: Self.snapshot(.playing))) == ["metronome on"])
        #expect(Self.said(session.handle(.action(.loop), snapshot: Self.snapshot())) == ["no loop yet: [ sets its start, ] its end"])
        #expect(Self.said(session.handle(.action(.punchIn), snapshot: Self.snapshot(.countIn))) == ["punch in after the count-in (r toggles recording during it)"])
        let calibrate = session.handle(.action(.calibrate), snapshot: Self.snapshot())
        #expect(Self.said(calibrate) == ["calibrating: connect the output to the input (a cable, or headphones held to the microphone)"])
        #expect(calibrate.last == .end(.calibrate))
    }

    /// `v` steps through the song's verses; the lyric line follows, and the
    /// lines start where the phrases do (a pickup before the barline).
    @Test func theLyricLineFollowsTheChosenVerse() {
        var session = BoxSession(Self.context())
        let start = Self.snapshot(position: 0)
        #expect(session.readout(snapshot: start, reading: nil, takes: 0).lyric == "A-maz-ing grace how sweet the sound")
        #expect(Self.said(session.handle(.action(.nextVerse), snapshot: start)) == ["verse 2 of 2"])
        #expect(session.readout(snapshot: start, reading: nil, takes: 0).lyric == "'Twas grace that taught my heart to fear,")
        #expect(Self.said(session.handle(.action(.nextVerse), snapshot: start)) == ["verse 1 of 2"])
        var context = Self.context()
        context.verse = 7
        #expect(context.verse == 2, "a verse past the song's last is its last")
        let plain = try! Acasong.parse(songText("row-row-row-your-boat.acasong")).singing(verse: 1)
        var one = BoxSession(BoxSession.Context(score: plain, schedule: try! Schedule(score: plain, options: ScheduleOptions()), partIndex: 0))
        #expect(Self.said(one.handle(.action(.nextVerse), snapshot: start)) == ["one verse only"])
    }

    /// The web page's measures: a punch range the record button sings, a
    /// loop chosen whole, another song by number; measures outside the
    /// song said with the song's own.
    @Test func rangesAndSongsFromThePage() {
        var session = BoxSession(Self.context())
        let stopped = Self.snapshot()
        var effects = session.handle(.punch(3...4), snapshot: stopped)
        #expect(Self.said(effects) == ["punch 3-4: record sings it"])
        #expect(session.punchRange == 3...4)
        effects = session.handle(.action(.record), snapshot: stopped)
        guard case .punch(let measures, let preroll)? = Self.commands(effects).first else {
            Issue.record("record with a punch range set punches it: \(effects)")
            return
        }
        #expect(measures == 3...4 && preroll == 1)
        // While playing, record punches in as always.
        #expect(Self.said(session.handle(.action(.record), snapshot: Self.snapshot(.playing))) == ["punch in at the next bar"])
        #expect(Self.said(session.handle(.punch(nil), snapshot: stopped)) == ["punch range cleared"])
        #expect(session.punchRange == nil)
        #expect(Self.said(session.handle(.punch(20...30), snapshot: stopped)) == ["measures 20-30 are not in the song (0-14)"])
        effects = session.handle(.loop(2...5), snapshot: stopped)
        guard case .loop(let loop)? = Self.commands(effects).first else {
            Issue.record("a loop from the page loops: \(effects)")
            return
        }
        #expect(loop == 2...5)
        #expect(session.dispatcher.loopStart == 2 && session.dispatcher.loopEnd == 5)
        #expect(Self.said(session.handle(.choose(song: 7, part: nil), snapshot: stopped)) == ["no song 8: the library has 3"])
        session.libraryGrew(to: 8)
        #expect(session.handle(.choose(song: 7, part: 2), snapshot: stopped).contains(.end(.switchTo(song: 7, part: 2))))
        // Recording refused: no punch range either.
        var readOnly = BoxSession(Self.context(refused: "read-only"))
        #expect(Self.said(readOnly.handle(.punch(1...2), snapshot: stopped)) == ["recording is off: read-only"])
    }

    /// The page's changes are inputs like every other: each is answered by
    /// an effect — at once (a loop, a punch range, another song, or the
    /// refusal with the status that says why), or when the project has
    /// done it (an edit, an undo), with what it says.
    @Test func thePagesChangesAreAnsweredByEffects() {
        func answers(_ effects: [BoxSession.Effect]) -> [Result<String, WebFailure>] {
            effects.compactMap { if case .answer(let result) = $0 { result } else { nil } }
        }
        var session = BoxSession(Self.context())
        let stopped = Self.snapshot()
        #expect(answers(session.handle(.web(.loop(2...3)), snapshot: stopped)) == [.success("loop 2-3 on")])
        #expect(session.dispatcher.loopStart == 2)
        #expect(answers(session.handle(.web(.loop(40...44)), snapshot: stopped)) == [.failure(WebFailure(422, "measures 40-44 are not in the song (0-14)"))])
        #expect(answers(session.handle(.web(.punch(3...4)), snapshot: stopped)) == [.success("punch 3-4: record sings it")])
        #expect(session.punchRange == 3...4)
        var readOnly = BoxSession(Self.context(refused: "read-only"))
        #expect(answers(readOnly.handle(.web(.punch(1...2)), snapshot: stopped)) == [.failure(WebFailure(409, "recording is off: read-only"))])
        // An edit: done by the loop on the project, answered with what it says.
        #expect(session.handle(.web(.activate(take: 4)), snapshot: stopped) == [.edit(.activate(take: 4))])
        let done = session.handle(.edited(.activate(take: 4), .success("take 4 plays")), snapshot: stopped)
        #expect(done.contains(.reloadAllTakes) && answers(done) == [.success("take 4 plays")])
        let refused = session.handle(.edited(.discard(take: 9), .failure(ProjectError(description: "no take 9"))), snapshot: stopped)
        #expect(answers(refused) == [.failure(WebFailure(409, "no take 9"))] && !refused.contains(.reloadAllTakes))
        // An undo: answered when the project has undone it.
        let undo = session.handle(.web(.undo), snapshot: stopped)
        #expect(undo.contains(.undoLastTake) && answers(undo).isEmpty)
        #expect(answers(session.handle(.undone(.success([Self.take(5)])), snapshot: stopped)) == [.success("take 5 (Alto) discarded; its file stays in the project")])
        // An undo from a key is not the page's: no answer.
        _ = session.handle(.action(.undoTake), snapshot: stopped)
        #expect(answers(session.handle(.undone(.success([Self.take(6)])), snapshot: stopped)).isEmpty)
        // Another song: refused past the library, else switching to it by name.
        #expect(answers(session.handle(.web(.choose(song: 7, part: nil)), snapshot: stopped)) == [.failure(WebFailure(404, "no song 8: the library has 3"))])
        session.libraryGrew(to: 3, titles: ["Amazing Grace", "Aloha Oe", "Jesu, meine Freude"])
        let chosen = session.handle(.web(.choose(song: 2, part: 0)), snapshot: stopped)
        #expect(answers(chosen) == [.success("switching to Jesu, meine Freude")] && chosen.last == .end(.switchTo(song: 2, part: 0)))
        // A recording set: refused while recording, for a part or an input
        // that is not there; else kept, and the song opens again with it,
        // on the set's first part when the part followed now is not in it.
        var four = Self.context()
        four.mostInputs = 4
        four.deviceName = "the card"
        var chooser = BoxSession(four)
        let set = [WebPartInput(part: 0, input: 2), WebPartInput(part: 2, input: 4)]
        #expect(answers(chooser.handle(.web(.together(set)), snapshot: Self.snapshot(.recording)))
                == [.failure(WebFailure(409, "a take is being recorded: stop first (the song opens again with the set)"))])
        // Playing too (a punch's pre-roll and post-roll play, armed).
        #expect(answers(chooser.handle(.web(.together(set)), snapshot: Self.snapshot(.playing)))
                == [.failure(WebFailure(409, "the song is playing: stop first (the song opens again with the set)"))])
        #expect(answers(chooser.handle(.web(.together([WebPartInput(part: 1, input: 5)])), snapshot: stopped))
                == [.failure(WebFailure(422, "\(four.partNames[1]) on input 5: the card has 4 inputs"))])
        #expect(answers(chooser.handle(.web(.together([WebPartInput(part: four.partNames.count, input: 1)])), snapshot: stopped))
                == [.failure(WebFailure(404, "no part \(four.partNames.count + 1) in \(four.songTitle): it has \(four.partNames.count)"))])
        let taken = chooser.handle(.web(.together(set)), snapshot: stopped)
        #expect(taken.first == .recordingSet(set) && taken.last == .end(.switchTo(song: 0, part: 0)), "\(taken)")
        #expect(answers(taken) == [.success("recording together \(four.partNames[0]) (input 2), \(four.partNames[2]) (input 4) from now on: the song opens again with the set")])
        four.recordingSet = set
        four.setInForce = true
        var inSet = BoxSession(four)
        #expect(answers(inSet.handle(.web(.together(set.reversed())), snapshot: stopped)).first.map { (try? $0.get())?.hasSuffix(", as now") == true } == true,
                "the same set in another order")
        #expect(inSet.handle(.web(.together([])), snapshot: stopped).last == .end(.switchTo(song: 0, part: 1)), "one part at a time: the part followed now")
        // A song with none of the box's set's parts: one part at a time can still be chosen.
        four.recordingSet = []
        var lacking = BoxSession(four)
        #expect(lacking.handle(.web(.together([])), snapshot: stopped).first == .recordingSet([]))
        // The reference removed: the session forgets it.
        var withReference = BoxSession(Self.context())
        #expect(withReference.handle(.edited(.removeReference, .success("the reference recording r.wav removed")), snapshot: stopped).contains(.reloadAllTakes))
        #expect(withReference.context.reference == nil)
    }

    /// The web page's address and code show when the song is ready, until
    /// a key is pressed or a while has passed.
    @Test func theWebPageAddressShowsAtTheStart() {
        var context = Self.context()
        context.web = WebBanner(host: "acapella.local", port: 8080, code: "123456")
        var session = BoxSession(context)
        _ = session.handle(.tick(milliseconds: 1_000), snapshot: Self.snapshot())
        #expect(session.readout(snapshot: Self.snapshot(), reading: nil, takes: 0).web?.code == "123456")
        _ = session.handle(.tick(milliseconds: 1_000 + BoxSession.webMilliseconds), snapshot: Self.snapshot())
        #expect(session.readout(snapshot: Self.snapshot(), reading: nil, takes: 0).web == nil)
        var pressed = BoxSession(context)
        _ = pressed.handle(.tick(milliseconds: 10), snapshot: Self.snapshot())
        _ = pressed.handle(.action(.metronome), snapshot: Self.snapshot())
        #expect(pressed.readout(snapshot: Self.snapshot(), reading: nil, takes: 0).web == nil)
        #expect(BoxSession(Self.context()).readout(snapshot: Self.snapshot(), reading: nil, takes: 0).web == nil)
    }

    @Test func loopFromHereToHere() {
        var session = BoxSession(Self.context())
        #expect(Self.said(session.handle(.action(.loopStartHere), snapshot: Self.snapshot(measure: 3))) == ["loop from measure 3; ] sets its end"])
        let end = session.handle(.action(.loopEndHere), snapshot: Self.snapshot(measure: 5))
        #expect(Self.commands(end) == [.loop(3...5)] && Self.said(end) == ["loop 3-5 on"])
        #expect(session.readout(snapshot: Self.snapshot(looping: true), reading: nil, takes: 0).loop == "3-5")
        let off = session.handle(.action(.loop), snapshot: Self.snapshot(looping: true))
        #expect(Self.commands(off) == [.loop(nil)] && Self.said(off) == ["loop off"])
    }

    /// A take finished while the transport runs (a loop pass) waits; at
    /// the stop the newest is reviewed: heard with its guide, k keeps it.
    @Test func reviewAfterTheStop() {
        var session = BoxSession(Self.context())
        _ = session.handle(.tick(milliseconds: 0), snapshot: Self.snapshot(.recording))
        #expect(session.handle(.takeFinished(Self.take(4)), snapshot: Self.snapshot(.recording)).isEmpty)
        #expect(session.handle(.takeFinished(Self.take(5)), snapshot: Self.snapshot(.recording)).isEmpty)
        #expect(session.review == nil, "not reviewed while the singer still sings")
        let stop = session.handle(.engine(.stopped(at: 500_000, returnTo: 40_000, finishedTake: true)), snapshot: Self.snapshot())
        #expect(session.review?.id == 5)
        #expect(stop.contains(.reloadTakes))
        #expect(Self.commands(stop).contains { if case .mix(1, let mix) = $0 { !mix.muted } else { false } }, "the part's own guide is heard at review")
        #expect(Self.said(stop).last == "take 5 recorded (10.0 s): space hears it with the others, k keeps, d discards")
        #expect(session.readout(snapshot: Self.snapshot(), reading: nil, takes: 2).mode == .review)
        let keep = session.handle(.action(.keepTake), snapshot: Self.snapshot())
        #expect(Self.said(keep) == ["take 5 kept"] && session.review == nil && session.guideMuted)
        #expect(Self.said(session.handle(.action(.keepTake), snapshot: Self.snapshot())).first?.hasPrefix("no take to keep") == true)
    }

    /// At review the take's analysis shows once ready; w sets the punch
    /// range to its first suggestion (or says why not).
    @Test func theAnalysisAtReviewAndPunchTheWorst() {
        var session = BoxSession(Self.context())
        #expect(Self.said(session.handle(.action(.punchWorst), snapshot: Self.snapshot())) == ["no analysis yet: record a take first"])
        _ = session.handle(.takeFinished(Self.take(5)), snapshot: Self.snapshot(.recording))
        _ = session.handle(.engine(.stopped(at: 500_000, returnTo: 40_000, finishedTake: true)), snapshot: Self.snapshot())
        #expect(session.readout(snapshot: Self.snapshot(), reading: nil, takes: 1).takeSummary == nil, "not before it is ready")
        let summary = TakeSummary(takeID: 5, score: 71, sung: 27, notes: 28, worst: ["m7 saved -32c", "m9 late 80ms"], punch: 6...9)
        let effects = session.handle(.analyzed(summary), snapshot: Self.snapshot())
        #expect(effects.contains(.log("take 5: 71/100, 27 of 28 sung; m7 saved -32c; m9 late 80ms; w punches mm. 6-9", .info)))
        _ = session.handle(.tick(milliseconds: 2_600), snapshot: Self.snapshot())
        let readout = session.readout(snapshot: Self.snapshot(), reading: nil, takes: 1)
        #expect(readout.takeSummary == summary && readout.summaryTurn == 1)
        #expect(Readout.lcd(readout, columns: 16, rows: 2) == ["TAKE? 71 Alto T1", "m7 saved -32c   "])
        #expect(Self.said(session.handle(.action(.punchWorst), snapshot: Self.snapshot())) == ["punch 6-9: record sings it"])
        #expect(session.punchRange == 6...9)
        // Another take's analysis (not the one under review) is kept for w, not shown.
        var other = BoxSession(Self.context())
        _ = other.handle(.analyzed(TakeSummary(takeID: 9, score: 100, sung: 4, notes: 4, worst: [], punch: nil)), snapshot: Self.snapshot())
        #expect(Self.said(other.handle(.action(.punchWorst), snapshot: Self.snapshot())) == ["take 9 has nothing to punch in: every measure scores 75 or more"])
    }

    @Test func aTakeNotKeptIsSaidSo() {
        var session = BoxSession(Self.context())
        let effects = session.handle(.takeFinished(Self.take(2, state: .discarded, frames: 0)), snapshot: Self.snapshot())
        #expect(Self.said(effects) == ["take 2 not kept: nothing was recorded"] && session.review == nil)
    }

    /// A set's takes (sung at once, one mark): the review hears every
    /// part's new take — each part's takes reloaded, every singer's guide
    /// on (muted again when the take is kept), a set's part left on its
    /// tones back on its takes — and undoing the set takes every part's
    /// out; a lone take reloads its own part only.
    @Test func aSetsReviewAndUndoReloadEveryPart() {
        var context = Self.context()
        context.recordingSet = [WebPartInput(part: 1, input: 1), WebPartInput(part: 2, input: 2)]
        context.mixes[2].muted = true  // as the box's loop opens a set
        context.tones = [2]
        var session = BoxSession(context)
        let tenorName = context.partNames[2]
        // A saved state that had the Tenor heard: it is a singer's guide now, muted as the Alto's.
        var saved = SessionState()
        saved.parts[tenorName] = SessionState.Part(mute: false)
        let restored = PracticeToolsTests.mixes(session.restore(saved, score: Self.score))
        #expect(restored.contains { $0.part == 2 && $0.mix.muted } && session.mixer[2].muted)
        var alto = Self.take(7)
        alto.ensemble = "set-1"
        var tenor = alto
        tenor.id = 8
        tenor.part = tenorName
        func heard(_ effects: [BoxSession.Effect]) -> [Int: Bool] {
            Dictionary(PracticeToolsTests.mixes(effects).map { ($0.part, !$0.mix.muted) }) { $1 }
        }
        let review = session.handle(.takeFinished(alto), snapshot: Self.snapshot())
        #expect(session.review?.id == 7 && review.contains(.reloadAllTakes) && !review.contains(.reloadTakes))
        #expect(heard(review) == [1: true, 2: true], "every singer's guide is heard at review")
        #expect(Self.said(review).first == "\(tenorName): its takes again, with the new one" && session.context.tones.isEmpty)
        #expect(session.mixer.prefix(3).map(\.muted) == [false, false, false])
        let keep = session.handle(.action(.keepTake), snapshot: Self.snapshot())
        #expect(heard(keep) == [1: false, 2: false] && session.mixer[2].muted, "kept: both muted again for the next take")
        _ = session.handle(.takeFinished(alto), snapshot: Self.snapshot())
        let undone = session.handle(.undone(.success([alto, tenor])), snapshot: Self.snapshot())
        #expect(undone.contains(.reloadAllTakes) && !undone.contains(.reloadTakes) && session.review == nil)
        #expect(heard(undone) == [1: false, 2: false], "undone at review: both muted again")
        // M and the page's mute of a set's part switch the singers' guides together, said as such.
        let m = session.handle(.action(.mutePart), snapshot: Self.snapshot())
        #expect(heard(m) == [1: true, 2: true] && Self.said(m) == ["Alto, \(tenorName) guides on"])
        guard case .success(let muted) = session.switchStrip(2, .mute, on: true, snapshot: Self.snapshot()) else {
            Issue.record("the page's mute of a set's part was refused")
            return
        }
        #expect(heard(muted) == [1: false, 2: false] && session.guideMuted)
        // Soloed on the page, a set's part is heard; its guide's mute is never saved (the next song may have no set).
        guard case .success(let solo) = session.switchStrip(2, .solo, on: true, snapshot: Self.snapshot()) else {
            Issue.record("the page's solo of a set's part was refused")
            return
        }
        #expect(heard(solo)[2] == true)
        _ = session.switchStrip(2, .solo, on: false, snapshot: Self.snapshot())
        _ = session.handle(.action(.mutePart), snapshot: Self.snapshot())
        #expect(session.mixer[2].muted && session.rehearsal(over: saved, looping: false).parts[tenorName]?.mute != true)
        let lone = session.handle(.takeFinished(Self.take(9)), snapshot: Self.snapshot())
        #expect(lone.contains(.reloadTakes) && !lone.contains(.reloadAllTakes))
    }

    /// d discards the newest take through the project and says so only
    /// when the project did it; recording again during review keeps it.
    @Test func discardAndRecordAgain() {
        var session = BoxSession(Self.context())
        _ = session.handle(.takeFinished(Self.take(3)), snapshot: Self.snapshot())
        let discard = session.handle(.action(.discardTake), snapshot: Self.snapshot())
        #expect(discard == [.engine([.stop]), .undoLastTake])
        let undone = session.handle(.undone(.success([Self.take(3)])), snapshot: Self.snapshot())
        #expect(Self.said(undone) == ["take 3 (Alto) discarded; its file stays in the project"] && undone.contains(.reloadTakes))
        #expect(session.review == nil && session.guideMuted)
        #expect(Self.said(session.handle(.undone(.failure(ProjectError(description: "no take to undo"))), snapshot: Self.snapshot())) == ["no take to undo"])

        _ = session.handle(.takeFinished(Self.take(6)), snapshot: Self.snapshot())
        let record = session.handle(.action(.record), snapshot: Self.snapshot())
        #expect(record.contains(.log("take 6 kept", .info)) && session.review == nil && session.guideMuted)
        #expect(Self.commands(record).contains(.record(.bar)))
    }

    @Test func recordingRefusedSaysWhy() {
        var session = BoxSession(Self.context(refused: "/p.acaproj is in use by another program or read-only"))
        for action in [ControlAction.record, .punchIn] {
            let effects = session.handle(.action(action), snapshot: Self.snapshot(.playing))
            #expect(Self.commands(effects).isEmpty)
            #expect(Self.said(effects) == ["recording is off: /p.acaproj is in use by another program or read-only"])
        }
    }

    /// Tempo and count-in are asked of the engine; the session believes
    /// them (and says so) only when the engine took them.
    @Test func tempoAndCountIn() throws {
        var session = BoxSession(Self.context())
        #expect(session.handle(.action(.tempoUp), snapshot: Self.snapshot()) == [.retime(.init(tempoPercent: 105, countIn: 1, transpose: 0))])
        let faster = try Schedule(score: Self.score, options: ScheduleOptions(tempoScale: Rational(105, 100), countInMeasures: 1))
        let retimed = session.handle(.retimed(.success(faster)), snapshot: Self.snapshot())
        #expect(Self.said(retimed) == ["tempo 105 % (76 bpm) from the next barline"])
        // Every part's takes loaded again, stretched to the new tempo and key.
        #expect(retimed.contains(.reloadAllTakes))
        #expect(session.context.tempoPercent == 105 && session.readout(snapshot: Self.snapshot(), reading: nil, takes: 0).tempo == 75.6)
        let refusal = EngineControlError(description: "the engine is busy; try again")
        _ = session.handle(.action(.tempoUp), snapshot: Self.snapshot())
        #expect(Self.said(session.handle(.retimed(.failure(refusal)), snapshot: Self.snapshot())) == [refusal.description])
        #expect(session.context.tempoPercent == 105)
        // The count-in cycles 1 → 2 → 0 → 1.
        for (from, to, words) in [(1, 2, "count-in: 2 measures"), (2, 0, "no count-in"), (0, 1, "count-in: 1 measure")] {
            #expect(session.handle(.action(.countIn), snapshot: Self.snapshot()) == [.retime(.init(tempoPercent: 105, countIn: to, transpose: 0))], "from \(from)")
            let schedule = try Schedule(score: Self.score, options: ScheduleOptions(tempoScale: Rational(105, 100), countInMeasures: to))
            #expect(Self.said(session.handle(.retimed(.success(schedule)), snapshot: Self.snapshot())) == [words])
        }
        var slowest = BoxSession(Self.context())
        for _ in 0..<10 {
            guard case .retime(let retime)? = slowest.handle(.action(.tempoDown), snapshot: Self.snapshot()).first else { break }
            let schedule = try Schedule(score: Self.score, options: ScheduleOptions(tempoScale: Rational(Int128(retime.tempoPercent), 100), countInMeasures: 1))
            _ = slowest.handle(.retimed(.success(schedule)), snapshot: Self.snapshot())
        }
        #expect(slowest.context.tempoPercent == 50)
        #expect(Self.said(slowest.handle(.action(.tempoDown), snapshot: Self.snapshot())) == ["tempo 50 % is the slowest"])
    }

    /// Transposition a semitone at a time, asked of the engine like tempo
    /// (a refusal said, the key unchanged), believed when taken, kept with the session,
    /// stopping at an octave either way.
    @Test func transposeASemitoneAtATime() throws {
        var session = BoxSession(Self.context())
        #expect(session.handle(.action(.transposeUp), snapshot: Self.snapshot()) == [.retime(.init(tempoPercent: 100, countIn: 1, transpose: 1))])
        let up = try Schedule(score: Self.score, options: ScheduleOptions(transpose: 1, countInMeasures: 1))
        #expect(Self.said(session.handle(.retimed(.success(up)), snapshot: Self.snapshot())) == ["tones +1 semitone: G sounds as G# from the next barline"])
        #expect(session.rehearsal(over: SessionState(), looping: false).transpose == 1, "kept with the session")
        let refusal = EngineControlError(description: "transpose: 25 semitones is outside −24…+24")
        _ = session.handle(.action(.transposeUp), snapshot: Self.snapshot())
        #expect(Self.said(session.handle(.retimed(.failure(refusal)), snapshot: Self.snapshot())) == [refusal.description])
        #expect(session.context.schedule.options.transpose == 1)
        #expect(session.handle(.action(.transposeDown), snapshot: Self.snapshot()) == [.retime(.init(tempoPercent: 100, countIn: 1, transpose: 0))])
        let back = try Schedule(score: Self.score, options: ScheduleOptions(countInMeasures: 1))
        #expect(Self.said(session.handle(.retimed(.success(back)), snapshot: Self.snapshot())) == ["the written key (G) from the next barline"])
        var low = BoxSession(Self.context())
        for _ in 0..<14 {
            guard case .retime(let retime)? = low.handle(.action(.transposeDown), snapshot: Self.snapshot()).first else { break }
            _ = low.handle(.retimed(.success(try Schedule(score: Self.score, options: ScheduleOptions(transpose: retime.transpose, countInMeasures: 1)))), snapshot: Self.snapshot())
        }
        #expect(low.context.schedule.options.transpose == -12)
        #expect(Self.said(low.handle(.action(.transposeDown), snapshot: Self.snapshot())) == ["tones -12 semitones is as far as they go"])
    }

    @Test func songsAndPartsWrapAround() {
        var first = BoxSession(Self.context(songCount: 3))
        #expect(first.handle(.action(.previousSong), snapshot: Self.snapshot()) == [.end(.switchTo(song: 2, part: 1))])
        #expect(first.ended == .switchTo(song: 2, part: 1))
        #expect(first.handle(.action(.playPause), snapshot: Self.snapshot()).isEmpty, "an ended session does nothing more")
        var session = BoxSession(Self.context())
        #expect(session.handle(.action(.nextPart), snapshot: Self.snapshot()) == [.end(.switchTo(song: 0, part: 2))])
        var context = Self.context()
        context.partIndex = 3
        var last = BoxSession(context)
        #expect(last.handle(.action(.nextPart), snapshot: Self.snapshot()) == [.end(.switchTo(song: 0, part: 0))])
    }

    /// A take being recorded or counted in ends only by a stop: the page's
    /// song chooser is refused as a project change is (409), and a key,
    /// pedal or MIDI action for another song, part or tag is said, not done.
    @Test(arguments: [Transport.State.countIn, .recording])
    func noSongOrPartChangesDuringATake(state: Transport.State) {
        var session = BoxSession(Self.context(songCount: 3))
        let refused = session.handle(.web(.choose(song: 1, part: nil)), snapshot: Self.snapshot(state))
        #expect(refused.first == .answer(.failure(WebFailure(409, "a take is being recorded: stop first"))) && !refused.contains { if case .end = $0 { true } else { false } },
                "\(refused)")
        for action in [ControlAction.nextSong, .previousSong, .nextPart, .previousPart, .nextTag, .previousTag] {
            let effects = session.handle(.action(action), snapshot: Self.snapshot(state))
            #expect(Self.said(effects) == ["a take is being recorded: stop first"] && session.ended == nil, "\(action): \(effects)")
        }
        #expect(session.handle(.web(.choose(song: 1, part: nil)), snapshot: Self.snapshot(.playing)).last == .end(.switchTo(song: 1, part: 1)))
    }

    @Test func guideSoloAndMyNote() {
        var session = BoxSession(Self.context())
        let on = session.handle(.action(.mutePart), snapshot: Self.snapshot())
        #expect(Self.said(on) == ["Alto guide on"] && !session.guideMuted)
        #expect(Self.said(session.handle(.action(.mutePart), snapshot: Self.snapshot())) == ["Alto guide muted (you sing it)"])
        let solo = session.handle(.action(.soloPart), snapshot: Self.snapshot())
        #expect(Self.commands(solo).contains(.solo(part: 1, true)) && Self.said(solo) == ["Alto alone"] && !session.guideMuted)
        let note = session.handle(.action(.giveMeMyNote), snapshot: Self.snapshot(position: 0))
        #expect(Self.said(note) == ["your note: B3"])
        guard case .reference(let frequency, let samples)? = Self.commands(note).first else { Issue.record("no reference tone"); return }
        #expect(abs(frequency - 246.94) < 0.01 && samples == 72_000)
    }

    /// The needle's note is spelled as the song's key spells it: A♭4 in
    /// E♭ major, G♯4 in E major; the needle shows the steadied cents.
    @Test func theNeedlesNoteIsSpelledInTheKey() {
        var context = Self.context()
        context.keys = [KeyChange(measure: 1, key: Key(fifths: -3, mode: .major))]
        let reading = PitchReading(songSample: 40_000, expectedMIDI: 68, frequency: 415, cents: -7, sungNote: "Ab4", confidence: 1, rawCents: 31, centre: 67.93)
        let flat = BoxSession(context).readout(snapshot: Self.snapshot(.playing), reading: reading, takes: 0)
        #expect(flat.note == "Ab4" && flat.cents == -7)
        context.keys = [KeyChange(measure: 1, key: Key(fifths: 4, mode: .major))]
        #expect(BoxSession(context).readout(snapshot: Self.snapshot(.playing), reading: reading, takes: 0).note == "G#4")
    }

    /// MMC locate moves the transport to the measure holding that time
    /// (past the end: the last measure).
    @Test func machineControlLocateMovesTheTransport() {
        var session = BoxSession(Self.context())
        let schedule = session.context.schedule
        let ten = session.handle(.locateTo(milliseconds: 10_000), snapshot: Self.snapshot(.playing))
        let measure = schedule.measure(at: 480_000)
        #expect(measure > 1 && Self.commands(ten) == [.locate(measure: measure)])
        #expect(Self.said(ten) == ["to measure \(measure) (MMC locate 0:10.000)"])
        let past = session.handle(.locateTo(milliseconds: 3_600_000), snapshot: Self.snapshot(.playing))
        #expect(Self.commands(past) == [.locate(measure: schedule.measure(at: schedule.endSample - 1))])
    }

    /// A keyboard's keys sound at the song's transposition, the velocity as
    /// their level, until released; "give me my chord" sounds every part's
    /// note; the drone holds the key's tonic under the singer's note.
    @Test func keyboardChordAndDrone() throws {
        var context = Self.context()
        context.schedule = try Schedule(score: Self.score, options: ScheduleOptions(transpose: 2))
        var session = BoxSession(context)
        let key = Self.commands(session.handle(.key(note: 69, velocity: 127), snapshot: Self.snapshot()))
        guard case .tone(69, let frequency, let level, 0)? = key.first else { Issue.record("no tone: \(key)"); return }
        #expect(abs(frequency - 493.88) < 0.01 && level == 1, "A4 sounds as B4, two semitones up")
        #expect(Self.commands(session.handle(.key(note: 69, velocity: 0), snapshot: Self.snapshot())) == [.releaseTones(69..<70)])
        let chord = session.handle(.action(.giveMeMyChord), snapshot: Self.snapshot(position: 0))
        #expect(Self.commands(chord).count == 4 && Self.commands(chord).allSatisfy { if case .tone(let k, _, _, 72_000) = $0 { (VoicePool.chordKey..<(VoicePool.chordKey + 4)).contains(k) } else { false } })
        #expect(Self.said(chord) == ["the chord: S E4, A C#4, T A3, B A2"])
        let on = session.handle(.action(.drone), snapshot: Self.snapshot(position: 0))
        #expect(Self.said(on) == ["drone A3 (the tonic of G major) on"] && session.droneOn)
        guard case .tone(VoicePool.droneKey, let drone, _, 0)? = Self.commands(on).first else { Issue.record("no drone"); return }
        #expect(abs(drone - 220) < 0.01)
        let off = session.handle(.action(.drone), snapshot: Self.snapshot(position: 0))
        #expect(Self.commands(off) == [.releaseTones(VoicePool.droneKey..<(VoicePool.droneKey + 1))] && Self.said(off) == ["drone off"] && !session.droneOn)
    }

    /// `?` shows the key help page by page, then closes; it closes by
    /// itself too, and any key closes it (and does what it does).
    @Test func keyHelpPagesAndTimesOut() {
        var session = BoxSession(Self.context())
        let pages = session.context.helpPageCount
        #expect(pages >= 1)
        for page in 0..<pages {
            _ = session.handle(.help, snapshot: Self.snapshot())
            #expect(session.readout(snapshot: Self.snapshot(), reading: nil, takes: 0).helpPage == page)
        }
        _ = session.handle(.help, snapshot: Self.snapshot())
        #expect(session.readout(snapshot: Self.snapshot(), reading: nil, takes: 0).helpPage == nil, "closed after the last page")
        _ = session.handle(.help, snapshot: Self.snapshot())
        _ = session.handle(.tick(milliseconds: BoxSession.helpMilliseconds + 1), snapshot: Self.snapshot())
        #expect(session.readout(snapshot: Self.snapshot(), reading: nil, takes: 0).helpPage == nil, "gone by itself")
        _ = session.handle(.help, snapshot: Self.snapshot())
        let play = session.handle(.action(.playPause), snapshot: Self.snapshot())
        #expect(Self.commands(play) == [.play] && session.readout(snapshot: Self.snapshot(), reading: nil, takes: 0).helpPage == nil)
        #expect(Self.said(session.handle(.unknownKey("x"), snapshot: Self.snapshot())) == ["'x' does nothing; ? shows the keys"])
    }

    @Test func messagesGoAwayByThemselves() {
        var session = BoxSession(Self.context())
        _ = session.handle(.tick(milliseconds: 1_000), snapshot: Self.snapshot())
        _ = session.handle(.action(.stop), snapshot: Self.snapshot())
        #expect(session.readout(snapshot: Self.snapshot(), reading: nil, takes: 0).message == "already stopped")
        _ = session.handle(.tick(milliseconds: 1_000 + BoxSession.messageMilliseconds - 1), snapshot: Self.snapshot())
        #expect(session.readout(snapshot: Self.snapshot(), reading: nil, takes: 0).message == "already stopped")
        _ = session.handle(.tick(milliseconds: 1_000 + BoxSession.messageMilliseconds), snapshot: Self.snapshot())
        #expect(session.readout(snapshot: Self.snapshot(), reading: nil, takes: 0).message == nil)
    }

    @Test func controllerLightsFollowTheTransport() {
        var session = BoxSession(Self.context())
        #expect(session.handle(.tick(milliseconds: 0), snapshot: Self.snapshot(.countIn)).last == .lights(["count-in"]))
        #expect(session.handle(.tick(milliseconds: 1), snapshot: Self.snapshot(.recording, looping: true)).last == .lights(["playing", "recording", "looping"]))
        #expect(session.handle(.tick(milliseconds: 2), snapshot: Self.snapshot(.recording, looping: true)).isEmpty, "unchanged: nothing sent")
        #expect(session.handle(.tick(milliseconds: 3), snapshot: Self.snapshot()).last == .lights([]))
    }

    /// `--once`: the song plays through and the session quits at the stop;
    /// a stop before anything played does not quit.
    @Test func playOnceThenQuit() {
        var session = BoxSession(Self.context(once: true))
        #expect(!session.handle(.engine(.stopped(at: 0, returnTo: 0, finishedTake: false)), snapshot: Self.snapshot()).contains(.end(.quit)))
        _ = session.handle(.engine(.playing(at: 0)), snapshot: Self.snapshot(.playing))
        #expect(session.handle(.engine(.stopped(at: 1_720_000, returnTo: 0, finishedTake: false)), snapshot: Self.snapshot()).last == .end(.quit))
    }

    @Test func signalsAndQuit() {
        var session = BoxSession(Self.context())
        #expect(session.handle(.stopSignal, snapshot: Self.snapshot(.recording)).contains(.end(.quit)))
        var other = BoxSession(Self.context())
        #expect(other.handle(.quit, snapshot: Self.snapshot()) == [.end(.quit)])
    }

    @Test func transportIsLoggedWithMeasures() {
        var session = BoxSession(Self.context())
        #expect(session.handle(.engine(.countIn(from: -120_000, music: 40_000)), snapshot: Self.snapshot()) == [.log("transport: count-in to measure 1", .info)])
        #expect(session.handle(.engine(.recordingStarted(at: 160_000)), snapshot: Self.snapshot()) == [.log("transport: recording from measure 2 (sample 160000)", .info)])
        #expect(session.handle(.engine(.looped(from: 280_000, to: 40_000)), snapshot: Self.snapshot()) == [.log("transport: loop back to measure 1", .info)])
        #expect(Self.said(session.handle(.engine(.refused(.notWhileRecording)), snapshot: Self.snapshot())) == ["refused: not while recording (or counting in): stop first"])
    }

    @Test func deviceLossIsSaid() {
        var session = BoxSession(Self.context())
        let lost = session.handle(.deviceLost("the device went away"), snapshot: Self.snapshot())
        #expect(lost.contains(.log("the device went away; waiting for the device to come back (the take so far is kept)", .warning)))
        #expect(Self.said(session.handle(.deviceBack("alsa:hw:1"), snapshot: Self.snapshot())) == ["the audio device is back"])
    }

    /// A session resumes as it was left: the saved parts' mixes, solo and
    /// loop go to the engine; what the singer then changes (tempo, loop,
    /// metronome, count-in, solo) is what would be saved, over the levels
    /// the box does not change.
    @Test func theSessionResumesAndIsSavedAsItStands() throws {
        var saved = SessionState()
        saved.parts = ["Bass": .init(volumeDB: -6, pan: 0.9, mute: true), "Soprano": .init(solo: true)]
        saved.loop = [3, 6]
        saved.looping = true
        var session = BoxSession(Self.context())
        let restored = Self.commands(session.restore(saved, score: Self.score))
        let bass = saved.partMixes(for: Self.score)[3]
        #expect(abs(bass.gain - 0.3 * 0.501187) < 1e-4 && bass.pan == 0.9)
        #expect(restored == [.mix(part: 0, saved.partMixes(for: Self.score)[0]), .solo(part: 0, true), .mix(part: 3, bass), .loop(3...6)])
        // Nothing changed yet: the same state would be saved.
        #expect(session.rehearsal(over: saved, looping: true) == saved)
        // The singer's own part alone, the loop off, the metronome on, faster, a longer count-in.
        _ = session.handle(.action(.soloPart), snapshot: Self.snapshot(looping: true))
        #expect(Self.commands(session.handle(.action(.loop), snapshot: Self.snapshot(looping: true))) == [.loop(nil)])
        _ = session.handle(.action(.metronome), snapshot: Self.snapshot())
        _ = session.handle(.action(.tempoUp), snapshot: Self.snapshot())
        _ = session.handle(.retimed(.success(try Schedule(score: Self.score, options: ScheduleOptions(tempoScale: Rational(105, 100), countInMeasures: 1)))), snapshot: Self.snapshot())
        let now = session.rehearsal(over: saved, looping: false)
        #expect(now.tempoPercent == 105 && now.metronome && !now.looping && now.loop == [3, 6])
        #expect(now.parts["Alto"] == .init(solo: true) && now.parts["Bass"] == saved.parts["Bass"])
        // A loop outside the song is not restored.
        var outside = SessionState()
        outside.loop = [90, 95]
        outside.looping = true
        var other = BoxSession(Self.context())
        #expect(other.restore(outside, score: Self.score).isEmpty)
    }

    /// The state file: defaults when absent, every key optional, an
    /// impossible value named by key; `mix` reads the same mixes.
    @Test func theSessionFileSaysWhereItIsWrong() throws {
        let project = try temporaryProject("amazing-grace.acasong")
        defer { project.close(); try? FileManager.default.removeItem(atPath: project.path) }
        #expect(project.sessionState().state == SessionState() && project.sessionState().problem == nil)
        var state = SessionState()
        state.parts["Tenor"] = .init(volumeDB: 3)
        state.tempoPercent = 80
        try project.saveSession(state)
        #expect(project.sessionState().state == state)
        try Data(#"{"format": "acapella-session", "tempoPercent": 500}"#.utf8).write(to: URL(fileURLWithPath: project.path + "/session.json"))
        #expect(project.sessionState().problem?.hasSuffix("session.json: tempoPercent: 500 is outside 50…150; the defaults are used until it is saved again") == true)
        try Data(#"{"format": "acapella-session", "parts": {"Descant": {}}}"#.utf8).write(to: URL(fileURLWithPath: project.path + "/session.json"))
        #expect(project.sessionState().problem?.contains("parts.Descant: the song has no such part") == true)
        try Data("{ broken".utf8).write(to: URL(fileURLWithPath: project.path + "/session.json"))
        #expect(project.sessionState().problem?.contains("session.json") == true && project.sessionState().state == SessionState())
        state.tempoPercent = 10
        #expect(throws: ProjectError.self) { try project.saveSession(state) }
    }

    /// Songs by tag: ( and ) choose a tag (then every song again); { and }
    /// step among the songs that have it; a tag the current song lacks
    /// moves to the first song that has it.
    @Test func songsByTag() {
        var context = Self.context(songCount: 4)
        context.songTags = [["hymn", "easy"], ["chorale", "Hard"], ["hymn", "hard"], ["round", "easy"]]
        var session = BoxSession(context)
        #expect(session.context.allTags == ["hymn", "easy", "chorale", "Hard", "round"])
        // The first tag: this song has it; the filter is said and kept.
        #expect(session.handle(.action(.nextTag), snapshot: Self.snapshot()) == [.tag("hymn"), .say("tag hymn: 2 songs; { } step through them")])
        #expect(session.handle(.action(.nextSong), snapshot: Self.snapshot()) == [.end(.switchTo(song: 2, part: 1))])
        // A tag this song lacks: to the first song with it.
        var other = BoxSession(context)
        _ = other.handle(.action(.nextTag), snapshot: Self.snapshot())
        _ = other.handle(.action(.nextTag), snapshot: Self.snapshot())
        #expect(other.handle(.action(.nextTag), snapshot: Self.snapshot()) == [.tag("chorale"), .log("tag chorale: 1 song; { } step through them", .info), .end(.switchTo(song: 1, part: 1))])
        // Tags match whatever their case; a tag with one song says there is no other.
        var hard = context
        hard.songIndex = 1
        hard.tag = "hard"
        var alone = BoxSession(hard)
        #expect(alone.handle(.action(.previousSong), snapshot: Self.snapshot()) == [.end(.switchTo(song: 2, part: 1))])
        hard.tag = "chorale"
        alone = BoxSession(hard)
        #expect(Self.said(alone.handle(.action(.nextSong), snapshot: Self.snapshot())) == ["no other song is tagged chorale; ( and ) choose another tag"])
        // Before the first tag: every song.
        var back = BoxSession(context)
        #expect(back.handle(.action(.previousTag), snapshot: Self.snapshot()).first == .tag("round"))
        var all = context
        all.tag = "hymn"
        var cleared = BoxSession(all)
        #expect(cleared.handle(.action(.previousTag), snapshot: Self.snapshot()) == [.tag(nil), .say("every song: 4; ( ) choose a tag")])
        // A song that arrived is said.
        #expect(Self.said(cleared.handle(.notice("hymn.mxl: imported as 'Hymn' (4 parts)"), snapshot: Self.snapshot())) == ["hymn.mxl: imported as 'Hymn' (4 parts)"])
    }
}
