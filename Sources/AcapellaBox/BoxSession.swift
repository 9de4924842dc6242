public import AcapellaControl
public import AcapellaEngine
public import AcapellaProject
public import AcapellaScore
public import AcapellaStatus
public import AcapellaWeb
import AcapellaDSP
import Foundation

/// How a session ends, and what comes next.
public enum SessionEnd: Hashable, Sendable {
    /// Quit (q, a signal, the time limit, played through once).
    case quit
    /// Another song or part (indices into the library and the song's parts).
    case switchTo(song: Int, part: Int)
    /// Calibrate the device, then carry on with the same song and part.
    case calibrate
    /// Safe shutdown: quit, then power off when configured.
    case shutdown
}

/// The box's behaviour while one song and part are open, as a value type
/// whose `handle` returns what to do (STYLE.md habit 6): the review of a
/// finished take, song and part selection, the singer's own guide and solo,
/// tempo and count-in, what each key says it did, the key help, and the
/// controller's lights. No threads, devices, files or clocks: the rig that
/// runs it feeds in what happened (actions, engine events, finished takes,
/// the results of effects, the control loop's time) and carries out the
/// effects. Tested exhaustively without any of them.
public struct BoxSession: Sendable {
    /// What the session is about; fixed while it runs.
    public struct Context: Sendable {
        public var songTitle: String
        /// The title on the LCD (short, distinct in the library).
        public var shortTitle: String
        public var songIndex: Int
        public var songCount: Int
        /// Each song's tags, by index (empty: not known).
        public var songTags: [[String]] = []
        /// Each song's title, by index (empty: not known).
        public var songTitles: [String] = []
        /// The tag the library is browsed by (nil: every song).
        public var tag: String?
        public var partNames: [String]
        public var partIndex: Int
        /// The song compiled at the session's tempo and count-in.
        public var schedule: Schedule
        /// The written opening tempo, BPM.
        public var writtenTempo: Double
        /// The singer's part's level and place in the mix (its guide).
        public var ownMix: PartMix
        /// Every part's mix as the session starts (the saved session's),
        /// the reference's after the parts: what a fader moves from.
        public var mixes: [PartMix]
        /// The parts that sing their guide tones, their takes left out (the
        /// page's Takes switch; saved with the session).
        public var tones: Set<Int> = []
        /// Tempo, percent of written (kept across songs and parts).
        public var tempoPercent = 100
        /// Count-in measures before a take.
        public var countIn: Int
        /// Metronome on while playing, as the session starts (the
        /// session's dispatcher holds it from then on: `BoxSession.rehearsal`).
        public var metronome = false
        /// Short sounds confirm a punch in or out, a keep, a discard.
        public var confirmations = false
        /// The grid a line played on the keyboard is written on.
        public var lineGrid = KeyboardLine.Grid.sixteenth
        /// Where punches land.
        public var quantize = Quantize.bar
        /// Why nothing can be recorded here (the project is in use or
        /// read-only), or nil when recording is possible.
        public var recordingRefused: String?
        /// Play the song once and quit (`--once`).
        public var playOnceAndQuit = false
        /// The lyric lines of the part, one per verse (at least one).
        public var verseLines: [LyricLines]
        /// The song's key changes (written keys; the schedule's transposition applies).
        public var keys: [KeyChange]
        /// The verse the lyric line follows (1-based; kept across songs and
        /// parts, the song's last when it has fewer).
        public var verse = 1 {
            didSet { verse = min(max(verse, 1), verseLines.count) }
        }
        /// The web page's address and code, shown when the session begins.
        public var web: WebBanner?
        /// The recording set in force: each part (its index) and its input
        /// (from 1); empty: `partIndex` alone.
        public var recordingSet: [WebPartInput] = []
        /// The box has a recording set, though this song may have none of
        /// its parts (then `recordingSet` is empty and one part records).
        public var setInForce = false
        /// The most inputs the device offers a set (its name for refusals).
        public var mostInputs = 1
        public var deviceName = "the device"

        /// Takes on `rehearsal`'s tempo, count-in, metronome and verse (its
        /// key is the schedule's, compiled with it).
        public mutating func adopt(_ rehearsal: Rehearsal) {
            tempoPercent = rehearsal.tempoPercent
            countIn = rehearsal.countIn
            metronome = rehearsal.metronome
            verse = rehearsal.verse
        }
        /// The project's reference recording, when it plays here.
        public var reference: Reference?

        /// A reference recording as the session plays it: after the
        /// song's parts, its frame `songStartFrame` on song sample 0, its
        /// lyrics in time (when it came with them).
        public struct Reference: Sendable {
            public var name: String
            /// Its part in the engine (after the song's parts).
            public var part: Int
            public var songStartFrame: Int64
            public var sampleRate: Int
            public var lyrics: LRC?
            /// Its mix as the session starts.
            public var mix: PartMix

            public init(name: String, part: Int, songStartFrame: Int64, sampleRate: Int, lyrics: LRC?, mix: PartMix) {
                self.name = name
                self.part = part
                self.songStartFrame = songStartFrame
                self.sampleRate = sampleRate
                self.lyrics = lyrics
                self.mix = mix
            }

            /// Its lyric line at song sample `position` ("" between lines).
            public func lyric(at position: Int64) -> String {
                guard let lyrics else { return "" }
                let milliseconds = (position + songStartFrame) * 1_000 / Int64(sampleRate)
                return lyrics.line(at: Int(clamping: milliseconds))?.text ?? ""
            }
        }
        /// The lyric lines of the chosen verse.
        public var lyrics: LyricLines { verseLines[verse - 1] }

        /// A context for `part` of `score` compiled as `schedule`.
        public init(score: Score, schedule: Schedule, partIndex: Int, songIndex: Int = 0, songCount: Int = 1, shortTitle: String? = nil, countIn: Int = 1) {
            songTitle = score.title ?? "(untitled)"
            self.shortTitle = shortTitle ?? ShortTitle.make(songTitle, width: 10)
            self.songIndex = songIndex
            self.songCount = songCount
            partNames = score.parts.map(\.name)
            self.partIndex = partIndex
            self.schedule = schedule
            writtenTempo = Double(score.tempos.first?.tempo.milliBPM ?? 120_000) / 1_000
            ownMix = PartMix.spread(count: score.parts.count)[partIndex]
            mixes = PartMix.spread(count: score.parts.count)
            self.countIn = countIn
            let part = score.parts[partIndex]
            verseLines = (1...max(1, part.verseCount)).map { LyricLines(part: part, schedule: schedule, verse: $0, pickupTicks: score.pickupTicks, writtenMeasure: score.writtenMeasure) }
            keys = score.keys
        }

        /// The part being rehearsed.
        public var partName: String { partNames[partIndex] }


        /// Every tag of the library, in the order of first use, once each (case aside).
        public var allTags: [String] {
            var seen: Set<String> = []
            return songTags.flatMap { $0 }.filter { seen.insert($0.lowercased()).inserted }
        }

        /// Whether song `index` has `tag` (nil: every song has it).
        public func songHas(_ tag: String?, _ index: Int) -> Bool {
            guard let tag else { return true }
            return index < songTags.count && songTags[index].contains { $0.lowercased() == tag.lowercased() }
        }
    }

    /// What happened.
    public enum Input: Sendable {
        /// A control action (a key, a MIDI event, a foot switch).
        case action(ControlAction)
        /// A MIDI keyboard's key pressed (`velocity` 1…127) or released (0).
        case key(note: Int, velocity: Int)
        /// MMC locate: move to the measure holding this time of the song (at the tempo it plays).
        case locateTo(milliseconds: Int)
        /// A fader of the live mixer moved to `value` (0…127).
        case fader(MIDIFader, value: Int)
        /// `?` on the console: the key help, page by page.
        case help
        /// `q` on the console: quit (a take in progress is finished first).
        case quit
        /// A key that means nothing.
        case unknownKey(Character)
        /// A stop signal (SIGTERM, SIGINT, SIGHUP).
        case stopSignal
        /// The engine reported a transport change.
        case engine(EngineEvent)
        /// The recorder finished a take and the manifest says so.
        case takeFinished(TakeRecord)
        /// The reference recording was removed (from the page).
        case referenceRemoved
        /// The result of `Effect.writeLine`: the new part's name and the
        /// report, or why not.
        case lineWritten(Result<KeyboardLine.Written, ProjectError>)
        /// A problem the recorder met (a full disk…).
        case recorderProblem(String)
        /// A problem playing (a streamed take read too late from the disk): logged and said.
        case playbackProblem(String)
        /// Something the box noticed (a song arrived in the library).
        case notice(String)
        /// Too many wrong pairing codes: the page's code was replaced by this one.
        case pairingCodeReplaced(String, guessed: Bool)
        /// The result of `Effect.undoLastTake`.
        case undone(Result<[TakeRecord], ProjectError>)
        /// The result of `Effect.retime`: the schedule now in force, or why not.
        case retimed(Result<Schedule, EngineControlError>)
        /// The device went away / came back.
        case deviceLost(String)
        case deviceBack(String)
        /// The analysis of a take is ready (it runs beside the control loop).
        case analyzed(TakeSummary)
        /// Another song (and part) chosen by index (the web page's library).
        case choose(song: Int, part: Int?)
        /// Loop these measures (nil: off), chosen as a whole (the web page).
        case loop(ClosedRange<Int>?)
        /// The next record from a stop sings these measures (a punch-in with
        /// a measure of pre-roll); nil clears it.
        case punch(ClosedRange<Int>?)
        /// Time passed: the control loop's clock, milliseconds (messages and
        /// the help go away by themselves). Never used for musical time.
        case tick(milliseconds: Int64)
        /// A change from the web page; answered by `Effect.answer` (the
        /// source has checked what needs the disk: the chosen song's parts).
        case web(WebChange)
        /// The result of `Effect.edit`: what the project says now, or why not.
        case edited(ProjectEdit, Result<String, ProjectError>)
    }

    /// A change to the project's takes asked for on the page.
    public enum ProjectEdit: Hashable, Sendable {
        case activate(take: Int)
        case discard(take: Int)
        case nudge(take: Int, milliseconds: Int)
        case name(take: Int, String?)
        case removeReference
    }

    /// A new tempo and count-in for the engine.
    public struct Retime: Hashable, Sendable {
        public var tempoPercent: Int
        public var countIn: Int
        /// Semitones the guide tones sound up (−12…12).
        public var transpose: Int

        public init(tempoPercent: Int, countIn: Int, transpose: Int) {
            self.tempoPercent = tempoPercent
            self.countIn = countIn
            self.transpose = transpose
        }
    }

    /// What the rig must do, in order.
    public enum Effect: Equatable, Sendable {
        /// Commands for the engine.
        case engine([EngineCommand])
        /// Recompile the schedule (tempo, count-in); answer with `.retimed`.
        case retime(Retime)
        /// Load the part's active takes into the engine again.
        case reloadTakes
        /// Load every part's takes and the reference recording again
        /// (stretched to the tempo and key now in force).
        case reloadAllTakes
        /// Discard the newest take; answer with `.undone`.
        case undoLastTake
        /// A take's notes put in tune beside the loop (those of `measures`,
        /// else those 15 cents or more off); the new take comes back as
        /// `.takeFinished`, a failure as `.notice`.
        case correct(take: Int, measures: ClosedRange<Int>?)
        /// How the parts' playing takes sang together worked out beside the
        /// loop (`acapella blend`); the page is given it when it is ready.
        case blend
        /// A line for the singer (the readout's message line) and the log.
        case say(String)
        /// A line for the log only, with its priority.
        case log(String, LogPriority)
        /// The controller's lights: the states that are on now.
        case lights(Set<String>)
        /// Browse the library by this tag from now on (nil: every song).
        case tag(String?)
        /// Write a line played on the keyboard into the song as a new part
        /// (on `grid`); answer with `.lineWritten`.
        case writeLine([KeyboardLine.Played], grid: KeyboardLine.Grid)
        /// The session is over.
        case end(SessionEnd)
        /// Change the project; answer with `.edited`.
        case edit(ProjectEdit)
        /// The box's recording set from now on (the session then ends:
        /// the song opens again with a device input for each part).
        case recordingSet([WebPartInput])
        /// The page's change done (the words it shows) or refused.
        case answer(Result<String, WebFailure>)
    }

    public private(set) var context: Context
    var dispatcher: ActionDispatcher
    /// The take under review (recorded, heard with the others, not yet kept).
    public private(set) var review: TakeRecord?
    /// A take finished while the transport still ran: reviewed at the stop.
    var waitingForReview: TakeRecord?
    /// Whether the singer's own guide is muted (it is while they sing it).
    public private(set) var guideMuted = true
    public private(set) var soloed = false
    /// The drone sounds (toggled by `drone`).
    public private(set) var droneOn = false
    /// The reference recording is muted (toggled by `reference`).
    public private(set) var referenceMuted = false
    /// The page asked for an undo: its answer comes with `.undone`.
    var answerOnUndone = false
    /// Levels and pans the faders set, by part name (the reference's under
    /// its track name), and when one last moved: saved once they rest.
    var faderSettings: [String: SessionState.Part] = [:]
    var lastFaderMove: Int64 = .min
    /// The other parts heard alone (the page's solo buttons, the saved
    /// session), by engine part (the reference's too); the singer's own
    /// part's solo is `soloed`.
    public private(set) var soloedParts: Set<Int> = []
    /// Parts whose mute or solo the page switched: saved with the session
    /// (the others stay as the file has them).
    var switchedParts: Set<String> = []
    /// How long the faders rest before the session saves them, ms.
    static let faderRestMilliseconds: Int64 = 1_000
    /// A line being played in on the keyboard (`record-line`): keys held
    /// (note → song sample), notes played (song samples).
    public private(set) var line: (held: [Int: Int64], played: [(midi: Int, start: Int64, end: Int64)])?
    /// Step entry (a line armed while stopped): the notes entered, in
    /// ticks, where the next goes and how long it is.
    public private(set) var steps: (entered: [KeyboardLine.Played], cursor: Int, length: Int)?
    /// Until when the web page's address and code show (the control loop's
    /// clock, ms; set by the first tick, ended by any action).
    var webUntil: Int64?
    /// How long the web page's address shows when a song is ready, ms.
    public static let webMilliseconds: Int64 = 12_000
    /// The analysis of the newest take, once ready.
    public private(set) var analysis: TakeSummary?
    /// How long each line of the analysis stays on a small display, ms.
    static let summaryTurnMilliseconds: Int64 = 2_500
    /// The measures the next record from a stop sings, when set.
    public private(set) var punchRange: ClosedRange<Int>?
    var hasPlayed = false
    var now: Int64 = 0
    var message: (text: String, until: Int64)?
    /// The help page shown, and until when.
    var help: (page: Int, until: Int64)?
    var lights: Set<String> = []
    var lastState = Transport.State.stopped
    /// Ended: every later input is ignored.
    public private(set) var ended: SessionEnd?

    /// How long a message or a help page stays, milliseconds.
    public static let messageMilliseconds: Int64 = 4_000
    public static let helpMilliseconds: Int64 = 15_000
    /// How long "give me my note" sounds, seconds.
    static let referenceSeconds = 1.5

    /// A session in `context`.
    public init(_ context: Context) {
        self.context = context
        referenceMuted = context.reference?.mix.muted ?? false
        dispatcher = ActionDispatcher(quantize: context.quantize, metronome: context.metronome)
    }

    // MARK: The session as it was left

    /// Picks up where the project's last session left off (its tempo,
    /// count-in, metronome and verse are already in the context): each
    /// other part's level, place, mute and solo, the singer's part alone
    /// when it was, and the loop (on again when it was on).
    public mutating func restore(_ state: SessionState, score: Score) -> [Effect] {
        var commands: [EngineCommand] = []
        if state.metronomeVolumeDB != 0 {
            metronomeVolumeDB = state.metronomeVolumeDB
            dispatcher.metronomeGain = state.metronomeVolumeDB <= -60 ? 0 : Self.metronomeDefaultGain * Float(pow(10, state.metronomeVolumeDB / 20))
            if dispatcher.metronomeOn { commands.append(.metronome(dispatcher.metronomeGain)) }
        }
        let mixes = state.partMixes(for: score)
        for (index, part) in score.parts.enumerated() where index != context.partIndex {
            if let saved = state.parts[part.name] {
                var mix = mixes[index]
                // A part of the recording set follows the guide (muted as the rig opened it).
                mix.muted = setPartsBesideOwn.contains(index) ? guideMuted : saved.mute
                if index < context.mixes.count { context.mixes[index].muted = mix.muted }
                commands.append(.mix(part: index, mix))
            }
            if state.parts[part.name]?.solo == true {
                soloedParts.insert(index)
                commands.append(.solo(part: index, true))
            }
        }
        if state.parts[context.partName]?.solo == true {
            soloed = true
            commands.append(.solo(part: context.partIndex, true))
        }
        // The reference's mix is the saved one already (the context's).
        if let reference = context.reference, state.parts[ReferenceRecord.trackName]?.solo == true {
            soloedParts.insert(reference.part)
            commands.append(.solo(part: reference.part, true))
        }
        var effects: [Effect] = commands.isEmpty ? [] : [.engine(commands)]
        if let loop = state.loopMeasures, rangeRefusal(loop, punch: false) == nil {
            dispatcher.setLoop(loop)
            if state.looping { effects.append(.engine([.loop(loop)])) }
        }
        return effects
    }

    /// The tempo, key, count-in, metronome and verse as they stand now
    /// (the key is the schedule's, the metronome the dispatcher's).
    public var rehearsal: Rehearsal {
        Rehearsal(tempoPercent: context.tempoPercent, transpose: context.schedule.options.transpose, countIn: context.countIn,
                  metronome: dispatcher.metronomeOn, verse: context.verse)
    }

    /// The session as it stands, to be saved over `base` (what was read:
    /// the parts' levels the box does not change stay as they were).
    /// `looping`: whether the engine loops now.
    public func rehearsal(over base: SessionState, looping: Bool) -> SessionState {
        var state = base
        state.rehearsal = rehearsal
        if let start = dispatcher.loopStart {
            state.loop = [start, max(start, dispatcher.loopEnd ?? start)]
        }
        state.looping = looping && state.loop != nil
        var own = state.parts[context.partName] ?? SessionState.Part()
        own.solo = soloed
        state.parts[context.partName] = own == SessionState.Part() ? nil : own
        // Faders, once they rest (a sweep is not a file write per step).
        if now >= lastFaderMove + Self.faderRestMilliseconds {
            if metronomeMoved { state.metronomeVolumeDB = metronomeVolumeDB }
            for (name, setting) in faderSettings {
                var part = state.parts[name] ?? SessionState.Part()
                // Level and pan only: a fader never mutes or unmutes.
                part.volumeDB = setting.volumeDB
                part.pan = setting.pan
                state.parts[name] = part == SessionState.Part() ? nil : part
            }
        }
        // Mutes and solos the page switched.
        for (index, name) in context.partNames.enumerated() where index != context.partIndex && switchedParts.contains(name) {
            var part = state.parts[name] ?? SessionState.Part()
            // A part of the recording set is muted as a singer's guide, as the own part is: not saved.
            if !setPartsBesideOwn.contains(index) { part.mute = context.mixes[index].muted }
            part.solo = soloedParts.contains(index)
            state.parts[name] = part == SessionState.Part() ? nil : part
        }
        // Takes or tones, every part as the session has it (it started from the saved ones).
        for (index, name) in context.partNames.enumerated() {
            var part = state.parts[name] ?? SessionState.Part()
            part.takes = !context.tones.contains(index)
            state.parts[name] = part == SessionState.Part() ? nil : part
        }
        if let live = context.reference {
            var reference = state.parts[ReferenceRecord.trackName] ?? SessionState.Part()
            if switchedParts.contains(ReferenceRecord.trackName) { reference.solo = soloedParts.contains(live.part) }
            reference.mute = referenceMuted
            state.parts[ReferenceRecord.trackName] = reference == SessionState.Part() ? nil : reference
        }
        return state
    }

    /// Songs were added to the library (the web page's uploads).
    public mutating func libraryGrew(to count: Int, tags: [[String]] = [], titles: [String] = []) {
        context.songCount = max(context.songCount, count)
        if tags.count == context.songCount { context.songTags = tags }
        if titles.count == context.songCount { context.songTitles = titles }
    }

    /// Song `removed` left the library (never the one open): the songs
    /// after it move up one.
    public mutating func libraryLost(_ removed: Int, tags: [[String]], titles: [String]) {
        guard removed != context.songIndex, context.songCount > 1 else { return }
        context.songCount -= 1
        if context.songIndex > removed { context.songIndex -= 1 }
        context.songTags = tags.count == context.songCount ? tags : []
        context.songTitles = titles.count == context.songCount ? titles : []
    }

    // MARK: Handling

    /// A keyboard's key as a tone outside the song: at the song's
    /// transposition, the velocity as its level, until the key is released.
    func keyboard(note: Int, velocity: Int) -> EngineCommand {
        guard velocity > 0 else { return .releaseTones(note..<(note + 1)) }
        return .tone(key: note, frequency: Tuning.frequency(midi: note + context.schedule.options.transpose), level: Float(min(127, velocity)) / 127, samples: 0)
    }

    /// Where "give me my note" and its kin look: the position, or the song's start before it.
    static func referencePosition(_ snapshot: EngineSnapshot) -> Int64 {
        snapshot.state == .stopped ? max(0, snapshot.position) : snapshot.position
    }

    /// How long a reference tone sounds, in samples.
    var referenceSamples: Int { Int(Self.referenceSeconds * Double(context.schedule.options.sampleRate)) }

    /// MIDI `midi` named as the song's key at `position` spells it (sounding, transposed as the tones are).
    func spelled(_ midi: Int, at position: Int64) -> String {
        let key = context.keys.key(atMeasure: context.schedule.measure(at: position))
        return NoteName.name(midi, fifths: NoteName.fifths(key.fifths, transposedBy: context.schedule.options.transpose))
    }

    /// The pitch class `key`'s tonic sounds on at the schedule's transposition.
    func soundingTonic(of key: Key) -> Int { (key.tonicPitchClass + context.schedule.options.transpose % 12 + 12) % 12 }

    /// What `input` means now, given what the engine last published.
    public mutating func handle(_ input: Input, snapshot: EngineSnapshot) -> [Effect] {
        guard ended == nil else { return [] }
        var effects: [Effect] = []
        switch input {
        case .action(let action):
            if help != nil {
                help = nil  // any key closes the help, and does what it does
            }
            webUntil = min(webUntil ?? now, now)  // and the web page's address
            effects += act(action, snapshot: snapshot)
        case .key(let note, let velocity):
            effects.append(.engine([keyboard(note: note, velocity: velocity)]))
            // Step entry: while stopped, each key is a note at the cursor.
            if steps != nil && line != nil && snapshot.state == .stopped {
                if velocity > 0, let step = steps {
                    guard step.cursor < Int(context.schedule.timeMap.tick(atSample: context.schedule.endSample).rounded()) else {
                        effects.append(say("line: the song ends here; L writes the line"))
                        return effects
                    }
                    steps?.entered.append(KeyboardLine.Played(midi: note, start: Double(step.cursor), end: Double(step.cursor + step.length)))
                    steps?.cursor += step.length
                    effects.append(say("line: \(NoteName.name(note)) \(Self.stepWords(step.length)), \(stepPlace(step.cursor))"))
                }
            } else if line != nil && (snapshot.state == .playing || snapshot.state == .recording) && snapshot.position >= 0 {
                if velocity > 0 {
                    line?.held[note] = snapshot.position
                } else if let start = line?.held.removeValue(forKey: note) {
                    line?.played.append((note, start, snapshot.position))
                }
            } else if velocity == 0, let start = line?.held.removeValue(forKey: note) {
                line?.played.append((note, start, snapshot.position))
            }
        case .locateTo(let milliseconds):
            let schedule = context.schedule
            let sample = min(max(0, Int64(milliseconds) * Int64(schedule.options.sampleRate) / 1_000), max(0, schedule.endSample - 1))
            let measure = schedule.measure(at: sample)
            let seconds = milliseconds / 1_000
            effects.append(.engine([.locate(measure: measure)]))
            effects.append(say(String(format: "to measure %d (MMC locate %d:%02d.%03d)", measure, seconds / 60, seconds % 60, milliseconds % 1_000)))
        case .help:
            let next = (help?.page ?? -1) + 1
            help = next < context.helpPageCount ? (next, now + Self.helpMilliseconds) : nil
            // The page's address and pairing code shown again, on demand.
            if help != nil, context.web != nil { webUntil = now + Self.webMilliseconds }
        case .quit:
            effects.append(.end(.quit))
        case .unknownKey(let key):
            if help != nil {
                help = nil  // any key closes the help
            } else if !key.isWhitespace {
                effects.append(say("'\(key)' does nothing; ? shows the keys"))
            }
        case .stopSignal:
            effects.append(.log("stop signal: finishing and quitting", .info))
            effects.append(.end(.quit))
        case .engine(let event):
            effects += transport(event, snapshot: snapshot)
        case .takeFinished(let take):
            if take.state == .kept {
                waitingForReview = take
            } else {
                effects.append(say("take \(take.id) not kept: \(take.note ?? "nothing was recorded")"))
            }
        case .notice(let text):
            effects.append(say(text))
        case .pairingCodeReplaced(let code, let guessed):
            // Shown at once with the page's address, the new code in it.
            context.web?.code = code
            if context.web != nil { webUntil = now + Self.webMilliseconds }
            if guessed {
                effects.append(.log("web: someone is guessing the page's pairing code; the new code is \(code)", .warning))
                effects.append(say("someone is guessing the page's code: new code \(code)"))
            } else {
                effects.append(.log("web: every phone signed out; the new code is \(code)", .info))
                effects.append(say("every phone signed out: new code \(code)"))
            }
        case .referenceRemoved:
            context.reference = nil
        case .lineWritten(.success(let written)):
            effects.append(.log("line written into the song: " + written.report.joined(separator: "; "), .info))
            effects.append(say("\(written.part) written into the song (\(written.report.dropFirst().first ?? "on the grid as played")); here it is"))
            // The song now has the part: the session starts again with it.
            effects.append(.end(.switchTo(song: context.songIndex, part: context.partIndex)))
        case .lineWritten(.failure(let error)):
            effects.append(say("the line was not written: \(error.description)"))
        case .fader(let fader, let value):
            effects += move(fader, to: value)
        case .recorderProblem(let problem), .playbackProblem(let problem):
            effects.append(.log(problem, .warning))
            effects.append(say(problem))
        case .undone(.success(let takes)):
            let names = takes.count == 1 ? "take \(takes[0].id) (\(takes[0].part))"
                : "takes " + takes.map { "\($0.id) (\($0.part))" }.joined(separator: ", ") + ", sung together,"
            effects.append(say("\(names) discarded; \(takes.count == 1 ? "its file stays" : "their files stay") in the project"))
            effects += confirm(.discard)
            // A set's takes are of several parts: each part's takes again.
            effects.append(takes.allSatisfy { $0.part == context.partName } ? .reloadTakes : .reloadAllTakes)
            if review != nil {
                review = nil
                effects += setGuide(muted: true)
            }
        case .undone(.failure(let error)):
            effects.append(say(error.description))
        case .retimed(.success(let schedule)):
            let scale = schedule.options.tempoScale
            let retime = Retime(tempoPercent: Int((scale.numerator * 100 / scale.denominator)), countIn: schedule.options.countInMeasures,
                                transpose: schedule.options.transpose)
            let tempoChanged = retime.tempoPercent != context.tempoPercent
            let countInChanged = retime.countIn != context.countIn
            let keyChanged = retime.transpose != context.schedule.options.transpose
            context.schedule = schedule
            context.tempoPercent = retime.tempoPercent
            context.countIn = retime.countIn
            // The takes (and the reference) again, stretched to the new tempo and key: heard from the same barline.
            if tempoChanged || keyChanged { effects.append(.reloadAllTakes) }
            if tempoChanged {
                effects.append(say("tempo \(retime.tempoPercent) % (\(Int((context.writtenTempo * Double(retime.tempoPercent) / 100).rounded())) bpm) from the next barline"))
            }
            if countInChanged { effects.append(say(retime.countIn == 0 ? "no count-in" : "count-in: \(retime.countIn) measure\(retime.countIn == 1 ? "" : "s")")) }
            if keyChanged {
                let key = context.keys.key(atMeasure: 1)
                let sounding = soundingTonic(of: key)
                effects.append(say(retime.transpose == 0 ? "the written key (\(key.tonicName)) from the next barline"
                    : "tones \(retime.transpose > 0 ? "+" : "")\(retime.transpose) semitone\(abs(retime.transpose) == 1 ? "" : "s"): \(key.tonicName) sounds as \(NoteName.pitchClassName(sounding)) from the next barline"))
            }
        case .retimed(.failure(let error)):
            effects.append(say(error.description))
        case .deviceLost(let why):
            effects.append(.log("\(why); waiting for the device to come back (the take so far is kept)", .warning))
            effects.append(say("the audio device went away; waiting for it"))
        case .deviceBack(let name):
            effects.append(.log("the device is back: \(name)", .info))
            effects.append(say("the audio device is back"))
        case .choose(let song, let part):
            if song >= context.songCount {
                effects.append(say("no song \(song + 1): the library has \(context.songCount)"))
            } else {
                effects.append(.end(.switchTo(song: song, part: part ?? context.partIndex)))
            }
        case .loop(let measures):
            effects += setLoop(measures)
        case .punch(let measures):
            effects.append(setPunch(measures))
        case .analyzed(let summary):
            analysis = summary
            if review?.id == summary.takeID || waitingForReview?.id == summary.takeID {
                effects.append(.log(summary.text, .info))
            }
        case .tick(let milliseconds):
            now = milliseconds
            if webUntil == nil, context.web != nil { webUntil = now + Self.webMilliseconds }
        case .web(let change):
            effects += web(change, snapshot: snapshot)
        case .edited(let edit, .success(let text)):
            if case .removeReference = edit { context.reference = nil }
            effects += [.reloadAllTakes, .log(text, .info), .answer(.success(text))]
        case .edited(_, .failure(let error)):
            effects.append(.answer(.failure(WebFailure(409, error.description))))
        }
        if answerOnUndone, case .undone = input {
            answerOnUndone = false
            effects.append(.answer(.success(Self.lastSaid(effects) ?? "done")))
        }
        if let message, now >= message.until { self.message = nil }
        if let help, now >= help.until { self.help = nil }
        // A take finished and the transport stopped: heard at once (review).
        // Not before the stop: loop passes finish takes while the singer
        // still sings the next.
        if let take = waitingForReview, snapshot.state == .stopped, ended == nil {
            waitingForReview = nil
            review = take
            // A set's takes were sung at once: the review hears every part's new one.
            let sung = [context.partIndex] + (take.ensemble == nil ? [] : setPartsBesideOwn)
            // A take sung on a part left on its tones is heard: the part's takes come on again.
            let back = sung.filter { context.tones.remove($0) != nil }
            if back.count == 1 {
                effects.append(say("\(context.partNames[back[0]]): its takes again, with the new one"))
            } else if !back.isEmpty {
                effects.append(say(back.map { context.partNames[$0] }.joined(separator: ", ") + ": their takes again, with the new ones"))
            }
            effects.append(take.ensemble == nil ? .reloadTakes : .reloadAllTakes)
            effects += setGuide(muted: false)
            effects.append(say(String(format: "take %d recorded (%.1f s): space hears it with the others, k keeps, d discards", take.id,
                                      Double(take.frames) / Double(context.schedule.options.sampleRate))))
        }
        let on = Self.lights(for: snapshot)
        if on != lights {
            lights = on
            effects.append(.lights(on))
        }
        // The end comes last, after everything else this input did.
        if let index = effects.firstIndex(where: { if case .end = $0 { true } else { false } }) {
            let last = effects.remove(at: index)
            effects.append(last)
            if case .end(let end) = last { ended = end }
        }
        return effects
    }

    /// A change from the page: an edit of the project (answered when it
    /// is done), an undo (answered with what it discarded), another song,
    /// a loop or a punch range (answered at once: done, or refused with
    /// the status that says why, as the session refuses it).
    mutating func web(_ change: WebChange, snapshot: EngineSnapshot) -> [Effect] {
        switch change {
        case .activate(let id): return [.edit(.activate(take: id))]
        case .name(let id, let name): return [.edit(.name(take: id, name))]
        case .correct(let id, let measures):
            if let why = context.recordingRefused { return [.answer(.failure(WebFailure(409, "takes cannot be added here: \(why)")))] }
            let which = measures.map { $0.count == 1 ? "m. \($0.lowerBound)" : "mm. \($0.lowerBound)-\($0.upperBound)" } ?? "the notes 15 cents or more off"
            return [.correct(take: id, measures: measures),
                    .answer(.success("putting take \(id)'s \(which) in tune: the new take comes up for review when it is ready (the take as sung stays)"))]
        case .discard(let id): return [.edit(.discard(take: id))]
        case .nudge(let id, let milliseconds): return [.edit(.nudge(take: id, milliseconds: milliseconds))]
        case .removeReference: return [.edit(.removeReference)]
        case .removeSong, .describeSong: return [.answer(.failure(WebFailure(500, "the library's songs are changed by the box's loop")))]
        case .project(.create(let name)), .project(.select(let name)):
            // The box's loop made it or found it; the song opens again in it.
            return [.answer(.success("project '\(name)' of \(context.songTitle)")), .end(.switchTo(song: context.songIndex, part: context.partIndex))]
        case .project(.remove): return [.answer(.failure(WebFailure(500, "projects are removed by the box's loop")))]
        case .together(let set):
            return together(set, snapshot: snapshot)
        case .blend:
            guard context.partNames.count >= 2 else { return [.answer(.failure(WebFailure(422, "\(context.songTitle) has one part: nothing sings together")))] }
            return [.blend, .answer(.success("listening to how the parts sang together: the score shows it when it is ready"))]
        case .metronomeLevel(let value):
            let effects = setMetronome(level: value)
            return effects + [.answer(.success(message?.text ?? "done"))]
        case .fader(let part, let control, let value):
            // A page fader is a fader: the live mixer's own path.
            let fader = MIDIFader(controller: 0, control: control == .level ? .level : .pan, target: part.map { .part($0 + 1) } ?? .reference)
            let effects = move(fader, to: value)
            let words = message?.text ?? ""
            return effects.isEmpty ? [.answer(.failure(WebFailure(404, words)))] : effects + [.answer(.success(words))]
        case .mixSwitch(let part, let which, let on):
            switch switchStrip(part, which, on: on, snapshot: snapshot) {
            case .success(let effects): return effects + [.answer(.success(message?.text ?? "done"))]
            case .failure(let failure): return [.answer(.failure(failure))]
            }
        case .undo:
            answerOnUndone = true
            return act(.undoTake, snapshot: snapshot)
        case .choose(let song, let part):
            guard song < context.songCount else { return [.answer(.failure(WebFailure(404, "no song \(song + 1): the library has \(context.songCount)")))] }
            if let why = Self.takeUnderWay(snapshot) { return [.answer(.failure(WebFailure(409, why)))] }
            let title = song < context.songTitles.count ? context.songTitles[song] : "song \(song + 1)"
            return [.answer(.success("switching to \(title)")), .end(.switchTo(song: song, part: part ?? context.partIndex))]
        case .loop(let measures), .punch(let measures):
            let punch = if case .punch = change { true } else { false }
            switch rangeRefusal(measures, punch: punch) {
            case .notInSong(let text)?: return [.answer(.failure(WebFailure(422, text)))]
            case .recordingOff(let text)?: return [.answer(.failure(WebFailure(409, text)))]
            case nil:
                let effects = punch ? [setPunch(measures)] : setLoop(measures)
                return effects + [.answer(.success(Self.lastSaid(effects) ?? "done"))]
            }
        }
    }

    /// A recording set chosen on the page: refused unless the transport is
    /// stopped, for a part the song lacks or an input the device lacks;
    /// the same set (in any order) is "as now"; else kept, and the song
    /// opens again with it (the device opened with an input for each
    /// part). The part the box follows stays when it is in the set, else
    /// it is the set's first.
    func together(_ set: [WebPartInput], snapshot: EngineSnapshot) -> [Effect] {
        // Only stopped: a punch's pre-roll and post-roll play (armed), and the song opens again.
        if snapshot.state != .stopped {
            let why = [.recording, .countIn].contains(snapshot.state) ? "a take is being recorded" : "the song is playing"
            return [.answer(.failure(WebFailure(409, "\(why): stop first (the song opens again with the set)")))]
        }
        if let missing = set.first(where: { $0.part >= context.partNames.count }) {
            return [.answer(.failure(WebFailure(404, "no part \(missing.part + 1) in \(context.songTitle): it has \(context.partNames.count)")))]
        }
        if let beyond = set.first(where: { $0.input > context.mostInputs }) {
            let has = "\(context.mostInputs) input\(context.mostInputs == 1 ? "" : "s")"
            return [.answer(.failure(WebFailure(422, "\(context.partNames[beyond.part]) on input \(beyond.input): \(context.deviceName) has \(has)")))]
        }
        let words = set.isEmpty ? "one part at a time (\(context.partName))"
            : "recording together " + set.map { "\(context.partNames[$0.part]) (input \($0.input))" }.joined(separator: ", ")
        let asNow = set.isEmpty ? !context.setInForce
            : context.setInForce && set.sorted { $0.part < $1.part } == context.recordingSet.sorted { $0.part < $1.part }
        if asNow { return [.answer(.success(words + ", as now"))] }
        let part = set.isEmpty || set.contains(where: { $0.part == context.partIndex }) ? context.partIndex : set[0].part
        return [.recordingSet(set), .log("the page: " + words, .info), .answer(.success(words + " from now on: the song opens again with the set")),
                .end(.switchTo(song: context.songIndex, part: part))]
    }

    /// The loop on these measures (nil: off), or refused in words.
    mutating func setLoop(_ measures: ClosedRange<Int>?) -> [Effect] {
        if let refusal = rangeRefusal(measures, punch: false) { return [say(refusal.text)] }
        dispatcher.setLoop(measures)
        return [.engine([.loop(measures)]), say(measures.map { "loop \($0.lowerBound)-\($0.upperBound) on" } ?? "loop off")]
    }

    /// The last line said among `effects`.
    static func lastSaid(_ effects: [Effect]) -> String? {
        effects.reversed().lazy.compactMap { if case .say(let text) = $0 { text } else { nil } }.first
    }

    /// The controller's lights for a snapshot.
    static func lights(for snapshot: EngineSnapshot) -> Set<String> {
        var on: Set<String> = []
        switch snapshot.state {
        case .playing: on.insert("playing")
        case .recording: on.formUnion(["playing", "recording"])
        case .countIn: on.insert("count-in")
        case .stopped: break
        }
        if snapshot.looping { on.insert("looping") }
        return on
    }

    /// A line for the singer.
    mutating func say(_ text: String) -> Effect {
        message = (text, now + Self.messageMilliseconds)
        return .say(text)
    }

    /// The recording set's parts other than the box's own: each is a
    /// singer's own part, so its guide goes with the box's (muted while
    /// they sing, as the rig opens them, and heard at review).
    var setPartsBesideOwn: [Int] {
        context.recordingSet.map(\.part).filter { $0 != context.partIndex && $0 < context.mixes.count }
    }

    /// What `M` switches, in words: "Alto guide", or a set's "Alto, Tenor guides".
    var guideNames: String {
        let parts = [context.partIndex] + setPartsBesideOwn
        return parts.map { context.partNames[$0] }.joined(separator: ", ") + (parts.count == 1 ? " guide" : " guides")
    }

    mutating func setGuide(muted: Bool) -> [Effect] {
        guideMuted = muted
        var mix = context.ownMix
        mix.muted = muted
        var commands: [EngineCommand] = [.mix(part: context.partIndex, mix)]
        for part in setPartsBesideOwn {
            context.mixes[part].muted = muted
            commands.append(.mix(part: part, context.mixes[part]))
        }
        return [.engine(commands)]
    }

    /// The transport's changes, one log line each (journald keeps them).
    mutating func transport(_ event: EngineEvent, snapshot: EngineSnapshot) -> [Effect] {
        let schedule = context.schedule
        switch event {
        case .countIn(_, let music):
            // Armed while stopped, then played with nothing entered: the line is played in.
            if steps?.entered.isEmpty == true { steps = nil }
            return [.log("transport: count-in to measure \(schedule.measure(at: music))", .info)]
        case .playing(let at):
            hasPlayed = true
            if steps?.entered.isEmpty == true { steps = nil }
            return [.log("transport: playing from measure \(schedule.measure(at: at))", .info)]
        case .recordingStarted(let at):
            hasPlayed = true
            return [.log("transport: recording from measure \(schedule.measure(at: at)) (sample \(at))", .info)]
        case .recordingStopped(let at):
            // Heard once the take has ended (never in it).
            return [.log("transport: recording stopped at measure \(schedule.measure(at: at)) (sample \(at))", .info)] + confirm(.punchOut)
        case .stopped(let at, _, let finishedTake):
            var effects: [Effect] = [.log("transport: stopped at measure \(schedule.measure(at: at))\(finishedTake ? ", take finished" : "")", .info)]
            if line != nil { effects += finishLine(at: at) }
            if context.playOnceAndQuit && hasPlayed { effects.append(.end(.quit)) }
            return effects
        case .looped(_, let to): return [.log("transport: loop back to measure \(schedule.measure(at: to))", .info)]
        case .refused(let why): return [say("refused: \(why)")]
        case .scheduleChanged: return []
        }
    }

    // MARK: The live mixer

    /// A fader moved: its part's level (or pan) set from `value`, gliding
    /// there in the renderer (10 ms, like every mix change); shown on the
    /// readouts for a while, not logged (a fader sends dozens a second).
    mutating func move(_ fader: MIDIFader, to value: Int) -> [Effect] {
        let part: Int
        let name: String
        switch fader.target {
        case .part(let number):
            guard number >= 1 && number <= context.partNames.count else {
                message = ("no part \(number) for that fader: the song has \(context.partNames.count)", now + Self.messageMilliseconds)
                return []
            }
            part = number - 1
            name = context.partNames[part]
        case .reference:
            guard let reference = context.reference else {
                message = ("no reference recording for that fader", now + Self.messageMilliseconds)
                return []
            }
            part = reference.part
            name = ReferenceRecord.trackName
        }
        let isReference = part == context.reference?.part
        var mix = part == context.partIndex ? context.ownMix : isReference ? context.reference!.mix : context.mixes[part]
        var setting = faderSettings[name] ?? SessionState.Part()
        let words: String
        switch fader.control {
        case .level:
            let base = isReference ? PartMix.trackGain : PartMix.spread(count: context.partNames.count)[part].gain
            let decibels = MIDIFader.decibels(value)
            mix.gain = decibels.map { base * Float(pow(10, $0 / 20)) } ?? 0
            setting.volumeDB = decibels ?? -60
            words = decibels.map { String(format: "%@ level %+.1f dB", name, $0) } ?? "\(name) silent"
        case .pan:
            let pan = MIDIFader.pan(value)
            mix.pan = Float(pan)
            setting.pan = pan
            words = String(format: "%@ pan %+.2f", name, pan)
        }
        faderSettings[name] = setting
        lastFaderMove = now
        message = (words, now + Self.messageMilliseconds)
        // What sounds keeps its mute (the singer's own guide, a muted reference).
        var sent = mix
        if part == context.partIndex {
            context.ownMix = mix
            sent.muted = guideMuted
        } else if isReference {
            context.reference?.mix = mix
            sent.muted = referenceMuted
        } else {
            context.mixes[part] = mix
        }
        return [.engine([.mix(part: part, sent)])]
    }

    /// A strip's mute or solo switched (the page's buttons): the singer's
    /// own part's mute is its guide's (a recording set's parts' too) and its solo the `s` key's, the
    /// reference's mute the `reference` key's — each through the same
    /// path; another part's sent to the engine and saved with the session.
    mutating func switchStrip(_ part: Int?, _ which: WebMixSwitch, on: Bool, snapshot: EngineSnapshot) -> Result<[Effect], WebFailure> {
        let index: Int
        let name: String
        if let part {
            guard part < context.partNames.count else { return .failure(WebFailure(404, "no part \(part + 1): the song has \(context.partNames.count)")) }
            (index, name) = (part, context.partNames[part])
        } else {
            guard let reference = context.reference else { return .failure(WebFailure(404, "this project has no reference recording")) }
            (index, name) = (reference.part, reference.name)
        }
        let isReference = index == context.reference?.part
        switch which {
        case .mute where index == context.partIndex || setPartsBesideOwn.contains(index):
            // A part of the recording set is a singer's guide: it goes with the box's own.
            guard on != guideMuted else { return .success([say("\(guideNames) already \(on ? "muted" : "on")")]) }
            return .success(act(.mutePart, snapshot: snapshot))
        case .mute where isReference:
            guard on != referenceMuted else { return .success([say("reference \(name) already \(on ? "muted" : "on")")]) }
            let effects = act(.reference, snapshot: snapshot)
            return referenceMuted == on ? .success(effects) : .failure(WebFailure(409, message?.text ?? "refused"))
        case .mute:
            context.mixes[index].muted = on
            switchedParts.insert(name)
            return .success([.engine([.mix(part: index, context.mixes[index])]), say("\(name) \(on ? "muted" : "on")")])
        case .solo where index == context.partIndex:
            guard on != soloed else { return .success([say(on ? "\(name) already alone" : "\(name) not soloed")]) }
            return .success(act(.soloPart, snapshot: snapshot))
        case .takes:
            guard !isReference else { return .failure(WebFailure(409, "the reference recording is a recording, not takes: mute it instead")) }
            guard on == context.tones.contains(index) else { return .success([say("\(name) already on its \(on ? "takes" : "tones")")]) }
            if on { context.tones.remove(index) } else { context.tones.insert(index) }
            let asWritten = context.tempoPercent == 100 && context.schedule.options.transpose == 0
            return .success([.reloadAllTakes,
                             say(!on ? "\(name): its tones (its takes kept, left out)" : asWritten ? "\(name): its takes" : "\(name): its takes, stretched to this tempo and key")])
        case .solo:
            if on { soloedParts.insert(index) } else { soloedParts.remove(index) }
            switchedParts.insert(isReference ? ReferenceRecord.trackName : name)
            let alone = soloedParts.union(soloed ? [context.partIndex] : []).count
            var effects: [Effect] = [.engine([.solo(part: index, on)])]
            // A part of the set soloed is heard, as the own part soloed is: the guides on.
            if on && guideMuted && setPartsBesideOwn.contains(index) { effects += setGuide(muted: false) }
            return .success(effects + [say(on ? "\(name) soloed" : alone == 0 ? "all parts" : "\(name) not soloed")])
        }
    }

    /// The metronome's level against its default (the dispatcher's gain
    /// 0.4), dB; saved with the session once it rests like a fader.
    public private(set) var metronomeVolumeDB: Double = 0
    var metronomeMoved = false
    static let metronomeDefaultGain: Float = 0.4

    /// The metronome's level set on a fader's scale (the page's slider):
    /// heard at once when it is on, kept for when it is turned on.
    mutating func setMetronome(level value: Int) -> [Effect] {
        let decibels = MIDIFader.decibels(value)
        metronomeVolumeDB = decibels ?? -60
        metronomeMoved = true
        dispatcher.metronomeGain = decibels.map { Self.metronomeDefaultGain * Float(pow(10, $0 / 20)) } ?? 0
        lastFaderMove = now
        message = (decibels.map { String(format: "metronome level %+.1f dB", $0) } ?? "metronome silent", now + Self.messageMilliseconds)
        return dispatcher.metronomeOn ? [.engine([.metronome(dispatcher.metronomeGain)])] : []
    }

    /// The live mixer as the page shows it: each part's level against its
    /// default, its pan, mute and solo, the reference recording's, then
    /// the metronome's.
    var mixer: [WebMixerStrip] {
        let defaults = PartMix.spread(count: context.partNames.count)
        func decibels(_ gain: Float, _ base: Float) -> Double? { gain > 0 && base > 0 ? 20 * log10(Double(gain / base)) : nil }
        var strips = context.partNames.indices.map { part -> WebMixerStrip in
            let own = part == context.partIndex
            let mix = own ? context.ownMix : context.mixes[part]
            var strip = WebMixerStrip(name: context.partNames[part], levelDB: decibels(mix.gain, defaults[part].gain), pan: Double(mix.pan),
                                      muted: own ? guideMuted : mix.muted, soloed: own ? soloed : soloedParts.contains(part))
            strip.takes = !context.tones.contains(part)
            return strip
        }
        if let reference = context.reference {
            strips.append(WebMixerStrip(name: reference.name, levelDB: decibels(reference.mix.gain, PartMix.trackGain), pan: Double(reference.mix.pan), reference: true,
                                        muted: referenceMuted, soloed: soloedParts.contains(reference.part)))
        }
        var click = WebMixerStrip(name: "Metronome", levelDB: dispatcher.metronomeGain > 0 ? metronomeVolumeDB : nil, pan: 0, muted: !dispatcher.metronomeOn)
        click.metronome = true
        strips.append(click)
        return strips
    }

    // MARK: A line from the keyboard

    /// Ends the line being played in: keys still held end at `at`; the
    /// notes go to be written (placed on the music through the time map
    /// the song plays at now), or nothing when none was played.
    mutating func finishLine(at: Int64) -> [Effect] {
        guard var take = line else { return [] }
        line = nil
        // Entered step by step: the notes as entered.
        if let step = steps {
            steps = nil
            guard !step.entered.isEmpty else { return [say("line: nothing was entered; nothing written")] }
            return [.writeLine(step.entered, grid: context.lineGrid), say("line: \(step.entered.count) notes entered; writing them on a grid of \(context.lineGrid.words)")]
        }
        for (note, start) in take.held where at > start { take.played.append((note, start, at)) }
        guard !take.played.isEmpty else { return [say("line: nothing was played while the song played; nothing written")] }
        let map = context.schedule.timeMap
        let played = take.played.map { KeyboardLine.Played(midi: $0.midi, start: map.tick(atSample: $0.start), end: map.tick(atSample: $0.end)) }
        return [.writeLine(played, grid: context.lineGrid), say("line: \(played.count) notes played; writing them on a grid of \(context.lineGrid.words)")]
    }

    /// "quarter", "8th".
    static func stepWords(_ ticks: Int) -> String {
        [ticksPerWhole: "whole", ticksPerWhole / 2: "half", ticksPerWhole / 4: "quarter", ticksPerWhole / 8: "8th", ticksPerWhole / 16: "16th"][ticks] ?? "\(ticks)-tick"
    }

    /// "next: measure 3" for a tick of the song.
    func stepPlace(_ tick: Int) -> String {
        let sample = context.schedule.timeMap.sample(atTick: tick)
        let measure = context.schedule.measure(at: sample)
        return "next: measure \(measure)"
    }

    // MARK: Confirmations

    /// What the singer hears when something they did with a foot took
    /// effect, each unlike the others and unlike any guide tone's length.
    public enum Confirmation: Sendable {
        /// Recording will start (a high short blip).
        case punchIn
        /// Recording stopped (the same blip an octave lower).
        case punchOut
        /// The take is kept (a major third, together).
        case keep
        /// The take is discarded (a low long tone).
        case discard

        /// Its tones: MIDI note and length in ms.
        var tones: [(midi: Int, milliseconds: Int)] {
            switch self {
            case .punchIn: [(88, 90)]
            case .punchOut: [(76, 90)]
            case .keep: [(84, 220), (88, 220)]
            case .discard: [(45, 320)]
            }
        }
    }

    /// The engine commands that sound `confirmation`, when they are on.
    /// Not transposed: they mean something, they are not music.
    func confirm(_ confirmation: Confirmation) -> [Effect] {
        guard context.confirmations else { return [] }
        let rate = context.schedule.options.sampleRate
        return [.engine(confirmation.tones.enumerated().map { index, tone in
            .tone(key: VoicePool.confirmationKey + index, frequency: Tuning.frequency(midi: tone.midi), level: 0.35, samples: tone.milliseconds * rate / 1_000)
        })]
    }

    // MARK: Actions

    mutating func act(_ action: ControlAction, snapshot: EngineSnapshot) -> [Effect] {
        var effects: [Effect] = []
        if action == .record || action == .punchIn {
            if let why = context.recordingRefused { return [say("recording is off: \(why)")] }
            if let take = review {
                // Recording again keeps the take under review and mutes the part's guide.
                review = nil
                effects += setGuide(muted: true)
                effects.append(.log("take \(take.id) kept", .info))
            }
        }
        if action == .record, snapshot.state == .stopped, let measures = punchRange {
            // A punch range set (the web page): the record button sings it.
            effects.append(.engine([.punch(measures: measures, prerollMeasures: 1)]))
            effects += confirm(.punchIn)
            effects.append(say("punch \(measures.lowerBound)-\(measures.upperBound) after a measure of pre-roll"))
            return effects
        }
        switch dispatcher.dispatch(action, snapshot: snapshot) {
        case .engine(let commands):
            effects.append(.engine(commands))
            // Heard before the take starts (at the barline, or after the count-in).
            if (action == .record || action == .punchIn) && snapshot.state != .recording { effects += confirm(.punchIn) }
            effects.append(say(words(for: action, commands: commands, snapshot: snapshot)))
        case .ignored:
            effects.append(say(whyNot(action, snapshot: snapshot)))
        case .box(let request):
            effects += boxAction(request, snapshot: snapshot)
        }
        return effects
    }

    /// Sets (or clears) the punch range the next record from a stop sings.
    mutating func setPunch(_ measures: ClosedRange<Int>?) -> Effect {
        if let refusal = rangeRefusal(measures, punch: true) { return say(refusal.text) }
        punchRange = measures
        return say(measures.map { "punch \($0.lowerBound)-\($0.upperBound): record sings it" } ?? "punch range cleared")
    }

    /// Why measures cannot be the loop (or, `punch`, the punch range) now.
    public enum RangeRefusal: Hashable, Sendable {
        /// Not all in the song: said with the song's own measures.
        case notInSong(String)
        /// Nothing can be recorded here.
        case recordingOff(String)

        public var text: String {
            switch self {
            case .notInSong(let text), .recordingOff(let text): text
            }
        }
    }

    /// The refusal of `measures` as the loop or punch range, if any (nil
    /// measures, clearing, are always fine).
    public func rangeRefusal(_ measures: ClosedRange<Int>?, punch: Bool) -> RangeRefusal? {
        guard let measures else { return nil }
        if context.schedule.loopRange(measures: measures) == nil { return .notInSong(notInSong(measures)) }
        if punch, let why = context.recordingRefused { return .recordingOff("recording is off: \(why)") }
        return nil
    }

    /// Measures outside the song, said with the song's own.
    func notInSong(_ measures: ClosedRange<Int>) -> String {
        let first = context.schedule.firstMeasureNumber
        return "measures \(measures.lowerBound)-\(measures.upperBound) are not in the song (\(first)-\(first + context.schedule.barlines.count - 1))"
    }

    /// What an engine action did, in the singer's words.
    func words(for action: ControlAction, commands: [EngineCommand], snapshot: EngineSnapshot) -> String {
        let state = snapshot.state
        switch action {
        case .playPause: return state == .stopped ? "play" : "pause at measure \(max(snapshot.measure, 0))"
        case .stop: return "stop"
        case .record, .punchIn, .punchOut:
            switch state {
            case .stopped: return context.countIn > 0 ? "record after \(context.countIn) measure\(context.countIn == 1 ? "" : "s") of count-in" : "record"
            case .countIn: return "count-in: record or not, toggled"
            case .playing: return "punch in at the next \(context.quantize == .immediate ? "moment" : context.quantize.rawValue)"
            case .recording: return "punch out at the next \(context.quantize == .immediate ? "moment" : context.quantize.rawValue)"
            }
        case .loop:
            if case .loop(let range)? = commands.first, let range { return "loop \(range.lowerBound)-\(range.upperBound) on" }
            return "loop off"
        case .loopEndHere:
            if case .loop(let range)? = commands.first, let range { return "loop \(range.lowerBound)-\(range.upperBound) on" }
            return "loop to measure \(snapshot.measure)"
        case .previousMeasure: return "measure \(snapshot.measure - 1)"
        case .nextMeasure: return "measure \(snapshot.measure + 1)"
        case .metronome: return dispatcher.metronomeOn ? "metronome on" : "metronome off"
        default: return action.rawValue
        }
    }

    /// Why an action did nothing now.
    func whyNot(_ action: ControlAction, snapshot: EngineSnapshot) -> String {
        switch action {
        case .stop: return "already stopped"
        case .punchIn:
            return snapshot.state == .countIn ? "punch in after the count-in (r toggles recording during it)" : "already recording"
        case .punchOut: return "not recording: nothing to punch out of"
        case .loop: return "no loop yet: [ sets its start, ] its end"
        case .loopStartHere: return "loop from measure \(snapshot.measure); ] sets its end"
        case .loopEndHere: return "loop to measure \(snapshot.measure): set its start first with ["
        default: return "\(action.rawValue): nothing to do now"
        }
    }

    /// Why the song or part may not change now (nil: it may): a take is
    /// being recorded or counted in — it ends only by a stop, never by a
    /// key, pedal or tap meant for another song.
    static func takeUnderWay(_ snapshot: EngineSnapshot) -> String? {
        [.recording, .countIn].contains(snapshot.state) ? "a take is being recorded: stop first" : nil
    }

    mutating func boxAction(_ request: ControlAction, snapshot: EngineSnapshot) -> [Effect] {
        let parts = context.partNames.count
        if [.nextSong, .previousSong, .nextPart, .previousPart, .nextTag, .previousTag].contains(request), let why = Self.takeUnderWay(snapshot) {
            return [say(why)]
        }
        switch request {
        case .nextSong, .previousSong:
            let count = max(1, context.songCount)
            let step = request == .nextSong ? 1 : count - 1
            // With a tag chosen, only the songs that have it.
            let here = context
            let song = (1...count).map { (here.songIndex + step * $0) % count }.first { here.songHas(here.tag, $0) } ?? here.songIndex
            if song == context.songIndex, let tag = context.tag { return [say("no other song is tagged \(tag); ( and ) choose another tag")] }
            return [.end(.switchTo(song: song, part: context.partIndex))]
        case .nextTag, .previousTag:
            let tags = context.allTags
            guard !tags.isEmpty else { return [say("the songs have no tags")] }
            // Every song, then each tag in turn.
            let choices: [String?] = [nil] + tags
            let at = choices.firstIndex { $0 == context.tag } ?? 0
            let chosen = choices[(at + (request == .nextTag ? 1 : choices.count - 1)) % choices.count]
            context.tag = chosen
            let count = (0..<context.songCount).filter { context.songHas(chosen, $0) }.count
            let words = chosen.map { "tag \($0): \(count) song\(count == 1 ? "" : "s"); { } step through them" } ?? "every song: \(context.songCount); ( ) choose a tag"
            if context.songHas(chosen, context.songIndex) { return [.tag(chosen), say(words)] }
            let first = (0..<context.songCount).first { context.songHas(chosen, $0) } ?? context.songIndex
            return [.tag(chosen), .log(words, .info), .end(.switchTo(song: first, part: context.partIndex))]
        case .nextPart, .previousPart:
            let part = (context.partIndex + (request == .nextPart ? 1 : parts - 1)) % parts
            return [.end(.switchTo(song: context.songIndex, part: part))]
        case .keepTake:
            guard let take = review else { return [say("no take to keep: takes are kept as they are recorded (d or u discards the newest)")] }
            review = nil
            return setGuide(muted: true) + confirm(.keep) + [say("take \(take.id) kept")]
        case .discardTake, .undoTake:
            return [.engine([.stop]), .undoLastTake]
        case .mutePart:
            let effects = setGuide(muted: !guideMuted)
            return effects + [say(guideMuted ? "\(guideNames) muted (\(setPartsBesideOwn.isEmpty ? "you sing it" : "you sing them"))" : "\(guideNames) on")]
        case .soloPart:
            soloed.toggle()
            var effects: [Effect] = [.engine([.solo(part: context.partIndex, soloed)])]
            if soloed && guideMuted { effects += setGuide(muted: false) }
            return effects + [say(soloed ? "\(context.partName) alone" : "all parts")]
        case .nextVerse:
            guard context.verseLines.count > 1 else {
                return [say(context.verseLines[0].lines.isEmpty ? "\(context.partName) has no words" : "one verse only")]
            }
            context.verse = context.verse % context.verseLines.count + 1
            return [say("verse \(context.verse) of \(context.verseLines.count)")]
        case .punchWorst:
            guard let analysis else { return [say("no analysis yet: record a take first")] }
            guard let range = analysis.punch else { return [say("take \(analysis.takeID) has nothing to punch in: every measure scores 75 or more")] }
            return [setPunch(range)]
        case .giveMeMyNote:
            let position = Self.referencePosition(snapshot)
            guard let tone = context.schedule.tones[context.partIndex].toneToSing(at: position) else { return [say("\(context.partName) has no notes")] }
            return [.engine([.reference(frequency: tone.frequency, samples: referenceSamples)]), say("your note: \(spelled(tone.midi, at: position))")]
        case .giveMeMyChord:
            let position = Self.referencePosition(snapshot)
            var commands: [EngineCommand] = []
            var names: [String] = []
            for (part, tones) in context.schedule.tones.enumerated() {
                guard let tone = tones.toneToSing(at: position) else { continue }
                commands.append(.tone(key: VoicePool.chordKey + part, frequency: tone.frequency, level: 0.6, samples: referenceSamples))
                names.append("\(context.partNames[part].prefix(1)) \(spelled(tone.midi, at: position))")
            }
            guard !commands.isEmpty else { return [say("no part has a note here")] }
            return [.engine(commands), say("the chord: " + names.joined(separator: ", "))]
        case .drone:
            droneOn.toggle()
            guard droneOn else { return [.engine([.releaseTones(VoicePool.droneKey..<(VoicePool.droneKey + 1))]), say("drone off")] }
            let position = Self.referencePosition(snapshot)
            let key = context.keys.key(atMeasure: context.schedule.measure(at: position))
            let tonic = soundingTonic(of: key)
            // The tonic at or below the singer's note (the part's next note), else in the octave below middle C.
            let under = context.schedule.tones[context.partIndex].toneToSing(at: position)?.midi ?? 59
            let midi = under - ((under - tonic) % 12 + 12) % 12
            return [.engine([.tone(key: VoicePool.droneKey, frequency: Tuning.frequency(midi: midi), level: 0.5, samples: 0)]), say("drone \(spelled(midi, at: position)) (the tonic of \(key)) on")]
        case .recordLine:
            if line != nil { return finishLine(at: snapshot.position) }
            if let why = context.recordingRefused { return [say("the song cannot be changed here: \(why)")] }
            line = ([:], [])
            if snapshot.state == .stopped {
                // Stopped: step entry from the measure the transport is at.
                let start = context.schedule.barline(ofMeasure: snapshot.measure) ?? 0
                let cursor = max(0, Int(context.schedule.timeMap.tick(atSample: max(0, start)).rounded()))
                steps = ([], cursor, ticksPerQuarter)
                return [say("line, note by note from measure \(snapshot.measure): each key a note (\(Self.stepWords(ticksPerQuarter)) now; 1 2 4 8 6: whole to 16th, 0: a rest); L writes it")]
            }
            return [say("line: play it on the keyboard while the song plays; L again (or stop) writes it into the song as a new part (\(context.lineGrid.words))")]
        case .stepWhole, .stepHalf, .stepQuarter, .stepEighth, .stepSixteenth, .stepRest:
            guard let step = steps else { return [say("\(request.rawValue): for a line entered note by note (L while stopped)")] }
            if request == .stepRest {
                steps?.cursor += step.length
                return [say("line: a \(Self.stepWords(step.length)) rest, \(stepPlace(step.cursor + step.length))")]
            }
            let lengths: [ControlAction: Int] = [.stepWhole: ticksPerWhole, .stepHalf: ticksPerWhole / 2, .stepQuarter: ticksPerWhole / 4, .stepEighth: ticksPerWhole / 8,
                                                 .stepSixteenth: ticksPerWhole / 16]
            steps?.length = lengths[request] ?? ticksPerQuarter
            return [say("line: the next notes \(Self.stepWords(steps?.length ?? ticksPerQuarter))s")]
        case .reference:
            guard var reference = context.reference else { return [say("this project has no reference recording ('acapella reference add' brings one)")] }
            referenceMuted.toggle()
            reference.mix.muted = referenceMuted
            context.reference = reference
            return [.engine([.mix(part: reference.part, reference.mix)]), say("reference \(reference.name) \(referenceMuted ? "muted" : "on")")]
        case .tempoUp, .tempoDown:
            let wanted = min(150, max(50, context.tempoPercent + (request == .tempoUp ? 5 : -5)))
            guard wanted != context.tempoPercent else { return [say("tempo \(wanted) % is the \(request == .tempoUp ? "fastest" : "slowest")")] }
            return [.retime(Retime(tempoPercent: wanted, countIn: context.countIn, transpose: context.schedule.options.transpose))]
        case .transposeUp, .transposeDown:
            let now = context.schedule.options.transpose
            let wanted = min(12, max(-12, now + (request == .transposeUp ? 1 : -1)))
            guard wanted != now else { return [say("tones \(wanted > 0 ? "+" : "")\(wanted) semitones is as far as they go")] }
            return [.retime(Retime(tempoPercent: context.tempoPercent, countIn: context.countIn, transpose: wanted))]
        case .countIn:
            return [.retime(Retime(tempoPercent: context.tempoPercent, countIn: (context.countIn + 1) % 3, transpose: context.schedule.options.transpose))]
        case .calibrate:
            return [say("calibrating: connect the output to the input (a cable, or headphones held to the microphone)"), .end(.calibrate)]
        case .shutdown:
            return [say("safe shutdown"), .end(.shutdown)]
        default:
            return [say("\(request.rawValue): not handled by the box")]
        }
    }

    // MARK: Readout

    /// What the readouts show now.
    public func readout(snapshot: EngineSnapshot, reading: PitchReading?, takes: Int) -> ReadoutState {
        let mode: ReadoutMode
        switch snapshot.state {
        case .stopped: mode = review == nil ? .stopped : .review
        case .countIn: mode = .countIn
        case .playing: mode = .playing
        case .recording: mode = .recording
        }
        let loop = snapshot.looping ? dispatcher.loopStart.map { "\($0)-\(dispatcher.loopEnd ?? $0)" } ?? "on" : nil
        var state = ReadoutState(
            song: context.songTitle, shortSong: context.shortTitle, part: context.partName, mode: mode, measure: snapshot.measure, beat: snapshot.beat,
            tempo: context.writtenTempo * Double(context.tempoPercent) / 100, loop: loop, takes: takes,
            inputDB: reading.map { $0.inputPeak > 0 ? 20 * log10(Double($0.inputPeak)) : -.infinity } ?? -.infinity,
            clipped: (reading?.inputPeak ?? 0) >= 0.999, note: reading?.expectedMIDI.map { spelled($0, at: snapshot.position) }, cents: reading?.cents,
            lyric: context.lyrics.line(at: snapshot.position), message: message?.text, helpPage: help?.page)
        state.lastNote = reading?.lastNote.map { spelled($0.midi, at: snapshot.position) }
        state.lastCents = reading?.lastNote?.cents
        if let reference = context.reference {
            state.reference = referenceMuted ? "ref off" : "ref " + reference.name
            // Its lyrics in time, while it is heard.
            if !referenceMuted && reference.lyrics != nil {
                state.referenceLyric = reference.lyric(at: snapshot.position)
                state.lyric = state.referenceLyric ?? ""
            }
        }
        state.web = now < (webUntil ?? 0) ? context.web : nil
        if let review, analysis?.takeID == review.id {
            state.takeSummary = analysis
            state.summaryTurn = Int(now / Self.summaryTurnMilliseconds)
        }
        return state
    }
}

extension BoxSession.Context {
    /// Pages of key help on the console (computed for a 14-line readout).
    var helpPageCount: Int { Readout.helpPages(ConsoleKeys.helpLines, width: 80, height: 14).count }
}

/// How important a log line is, as journald reads it from stderr (`<3>`…).
public enum LogPriority: Int, Hashable, Sendable {
    case error = 3
    case warning = 4
    case info = 6
}

