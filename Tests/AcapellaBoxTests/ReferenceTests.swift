import AcapellaTrials
@testable import AcapellaAnalysis
@testable import AcapellaBox
import AcapellaControl
@testable import AcapellaEngine
@testable import AcapellaProject
import AcapellaScore
import AcapellaStatus
import Foundation
import Testing

/// Reference recordings (issue 23): found in time, converted, kept, played
/// on the song's timeline like a part, mixed, and shown with their lyrics.
@Suite(.serialized) struct ReferenceTests {
    /// The issue's measure: 40 recordings of 5 shipped songs in another
    /// timbre, with noise, at 44.1 kHz, each starting at a known place —
    /// the offset found within 5 ms in at least 95 %; 10 more at tempos
    /// 2.5–6 % off are all refused, never placed. (Notes that swell are
    /// found late by about half their swell: `acapella-bench align`.)
    @Test(.fullSuiteOnly) func recordingsAreFoundWithinFiveMilliseconds() throws {
        let outcomes = try ReferenceTrials.run(ReferenceTrials.cases())
        let same = outcomes.filter { $0.trial.tempo == 1 }
        let other = outcomes.filter { $0.trial.tempo != 1 }
        #expect(same.count == 40 && other.count == 10)
        let errors = same.map { $0.errorMilliseconds.map(abs) ?? .infinity }
        let within = errors.filter { $0 <= 5 }.count
        #expect(within >= 38, "within 5 ms: \(within) of 40; errors \(errors.map { String(format: "%.1f", $0) })")
        for outcome in other {
            guard case .failure(let refusal) = outcome.result else {
                Issue.record("\(outcome.trial.song) at tempo \(outcome.trial.tempo) was placed, not refused")
                continue
            }
            // It says the tempo differs, and which way.
            guard case .tempo(let percent) = refusal else {
                Issue.record("\(outcome.trial.song) at tempo \(outcome.trial.tempo): \(refusal)")
                continue
            }
            #expect((percent > 0) == (outcome.trial.tempo < 1), "\(outcome.trial.tempo): \(percent) %")
        }
    }

    /// Too little audio, or audio that is not the song, is refused with why.
    @Test func whatIsNotTheSongIsRefused() throws {
        let guide = try Project.guideTones(of: BoxSessionTests.score, sampleRate: 48_000)
        guard case .failure(.tooShort) = ReferenceAligner.align(reference: [Float](repeating: 0.1, count: 48_000), guide: guide, sampleRate: 48_000) else {
            Issue.record("a second of audio was aligned")
            return
        }
        var rng = SplitMix64(seed: 5)
        let noise = (0..<(30 * 48_000)).map { _ in Float.random(in: -0.3...0.3, using: &rng) }
        guard case .failure(let refusal) = ReferenceAligner.align(reference: noise, guide: guide, sampleRate: 48_000) else {
            Issue.record("noise was aligned")
            return
        }
        #expect(refusal.description.contains("--offset"))
    }

    /// libsoxr's conversion keeps every moment where it was: a click at
    /// 1 s at 44.1 kHz is at frame 48,000 at 48 kHz.
    @Test func conversionKeepsTime() throws {
        var audio = [Float](repeating: 0, count: 2 * 44_100)
        audio[44_100] = 1
        let converted = try ReferenceAudio.convert(audio, from: 44_100, to: 48_000)
        #expect(abs(converted.count - 96_000) <= 1)
        let peak = converted.indices.max { abs(converted[$0]) < abs(converted[$1]) }
        #expect(peak == 48_000)
    }

    static func referenceAudio() -> [Float] {
        (0..<(20 * 48_000)).map { index -> Float in
            let t = Double(index)
            return Float(0.4 * sin(t * 0.013) + 0.2 * sin(t * 0.0021))
        }
    }

    /// Added to a project, the reference is kept as one channel at the
    /// project's rate with its lyrics; it plays after the song's parts with
    /// its frame `songStartFrame` on song sample 0, sample for sample; at
    /// another tempo or key it is left out; removed, nothing of it stays.
    @Test func theReferencePlaysOnTheSongsTimeline() throws {
        let project = try temporaryProject("amazing-grace.acasong")
        defer { try? FileManager.default.removeItem(atPath: project.path) }
        let audio = Self.referenceAudio()
        let lyrics = Array("[00:01.00]A-ma-zing grace\n[00:04.50]how sweet\n".utf8)
        try project.setReference(audio, record: ReferenceRecord(source: "director.mp3", songStartFrame: 12_345, found: "given", sourceRate: 44_100, sourceChannels: 2,
                                                                frames: 0, added: RecordStamp.now()), lyrics: lyrics)
        let record = try #require(try project.reference().get())
        #expect(record.frames == Int64(audio.count) && record.lyrics == ReferenceRecord.lyricsFile && record.name == "director")
        #expect(try project.referenceLyrics().get()?.lines.map(\.text) == ["A-ma-zing grace", "how sweet"])
        #expect(project.audioTracks == [ReferenceRecord.trackName])

        let options = ScheduleOptions(sampleRate: 48_000, audioTracks: project.audioTracks)
        let schedule = try Schedule(score: project.score, options: options)
        #expect(schedule.tones.count == 5 && schedule.tones[4].isEmpty && schedule.partNames.last == "Reference")
        let takes = project.activeTakes(for: options).takes
        #expect(takes.count == 5 && takes[4].layers.count == 1)
        // Only the reference heard, at gain 1 in the centre.
        let mixes = (0..<4).map { _ in PartMix(gain: 0, pan: 0, muted: true) } + [PartMix(gain: 1, pan: 0)]
        let rendered = OfflineRender.render(schedule, mixes: mixes, takes: takes)
        let centre = Float(cos(Double.pi / 4))
        var largest: Float = 0
        for song in stride(from: Int64(1_000), to: min(schedule.endSample, Int64(audio.count) - 12_345 - 1_000), by: 7) {
            let frame = Int(song - rendered.firstSample)
            largest = max(largest, abs(rendered.left[frame] - audio[Int(song + 12_345)] * centre))
        }
        #expect(largest < 1e-6, "largest difference \(largest)")
        // Where the recording ends (a 10 ms fade), the song goes on in silence.
        #expect(rendered.left[Int(Int64(audio.count) - 12_345 + 1_000 - rendered.firstSample)] == 0)

        // Another tempo or key: stretched from the song's start (its start at 90 % on 12,345 × 10/9).
        let slow = try #require(project.activeTakes(for: ScheduleOptions(sampleRate: 48_000, tempoScale: Rational(9, 10), audioTracks: project.audioTracks)).takes[4].layers.first)
        #expect(slow.alignmentOffsetSamples == 13_717 && slow.samples.count == (audio.count * 10 + 4) / 9, "\(slow.alignmentOffsetSamples) \(slow.samples.count)")
        let higher = try #require(project.activeTakes(for: ScheduleOptions(sampleRate: 48_000, transpose: 2, audioTracks: project.audioTracks)).takes[4].layers.first)
        #expect(higher.alignmentOffsetSamples == 12_345 && higher.samples.count == audio.count && higher.samples != audio)
        // Without the track named, the parts only.
        #expect(project.activeTakes(for: ScheduleOptions(sampleRate: 48_000)).takes.count == 4)

        let removed = try project.removeReference()
        #expect(removed.source == "director.mp3")
        #expect(try project.reference().get() == nil)
        let left = (try? FileManager.default.contentsOfDirectory(atPath: project.path + "/reference")) ?? []
        #expect(left.isEmpty, "\(left)")
        #expect(project.audioTracks.isEmpty)
    }

    /// A damaged record is an error naming the file and the key, and the
    /// project plays on without it.
    @Test func aDamagedRecordIsNamed() throws {
        let project = try temporaryProject("amazing-grace.acasong")
        defer { try? FileManager.default.removeItem(atPath: project.path) }
        try project.setReference(Self.referenceAudio(), record: ReferenceRecord(source: "a.wav", songStartFrame: 0, found: "given", sourceRate: 48_000, sourceChannels: 1,
                                                                                frames: 0, added: RecordStamp.now()), lyrics: nil)
        let file = project.path + "/" + ReferenceRecord.recordFile
        var text = try String(contentsOfFile: file, encoding: .utf8)
        text = text.replacingOccurrences(of: "\"found\" : \"given\"", with: "\"found\" : \"guessed\"")
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        guard case .failure(let error) = project.reference() else {
            Issue.record("a damaged record was read")
            return
        }
        #expect(error.description.contains("reference.json") && error.description.contains("found"))
        #expect(project.audioTracks.isEmpty)
        try "{\"format\": ".write(toFile: file, atomically: true, encoding: .utf8)
        guard case .failure(let truncated) = project.reference() else {
            Issue.record("a truncated record was read")
            return
        }
        #expect(truncated.description.contains("reference.json"))
        #expect(throws: ProjectError.self) { _ = try project.removeReference() }
        let left = (try? FileManager.default.contentsOfDirectory(atPath: project.path + "/reference")) ?? []
        #expect(left.isEmpty, "\(left)")
        #expect(throws: ProjectError.self) { _ = try project.removeReference() }  // nothing left to remove
    }

    static func context(lyrics: LRC?, tempoPercent: Int = 100) -> BoxSession.Context {
        var context = BoxSessionTests.context()
        context.tempoPercent = tempoPercent
        context.reference = .init(name: "director", part: 4, songStartFrame: 48_000, sampleRate: 48_000, lyrics: lyrics, mix: PartMix(gain: PartMix.trackGain))
        return context
    }

    /// On the box: the readouts name the reference and show its lyrics in
    /// its own time (the song's sample plus where the song starts in it);
    /// `reference` mutes it and brings it back, and is refused at another
    /// tempo; its mute is saved with the session.
    @Test func theBoxShowsAndMutesTheReference() throws {
        let lyrics = try LRC.parse(text: "[00:01.00]first line\n[00:02.00]second line\n")
        var session = BoxSession(Self.context(lyrics: lyrics))
        // Song sample 0 is 1.000 s into the recording: the first line.
        var readout = session.readout(snapshot: BoxSessionTests.snapshot(position: 0), reading: nil, takes: 0)
        #expect(readout.reference == "ref director" && readout.lyric == "first line")
        readout = session.readout(snapshot: BoxSessionTests.snapshot(position: 48_000), reading: nil, takes: 0)
        #expect(readout.lyric == "second line")
        #expect(Readout.console(readout, width: 80, height: 14)[1].contains("ref director"))

        let effects = session.handle(.action(.reference), snapshot: BoxSessionTests.snapshot())
        #expect(BoxSessionTests.commands(effects) == [.mix(part: 4, PartMix(gain: PartMix.trackGain, muted: true))])
        #expect(BoxSessionTests.said(effects) == ["reference director muted"])
        readout = session.readout(snapshot: BoxSessionTests.snapshot(position: 48_000), reading: nil, takes: 0)
        #expect(readout.reference == "ref off" && readout.lyric != "second line")
        let saved = session.rehearsal(over: SessionState(), looping: false)
        #expect(saved.parts[ReferenceRecord.trackName]?.mute == true)
        _ = session.handle(.action(.reference), snapshot: BoxSessionTests.snapshot())
        #expect(session.rehearsal(over: saved, looping: false).parts[ReferenceRecord.trackName] == nil)

        // At 90 %, the reference comes on again (stretched to the tempo).
        var slow = BoxSession(Self.context(lyrics: nil, tempoPercent: 90))
        _ = slow.handle(.action(.reference), snapshot: BoxSessionTests.snapshot())  // mutes
        let again = slow.handle(.action(.reference), snapshot: BoxSessionTests.snapshot())
        #expect(BoxSessionTests.commands(again) == [.mix(part: 4, PartMix(gain: PartMix.trackGain, muted: false))])
        #expect(BoxSessionTests.said(again) == ["reference director on"])
        // A tempo change loads the takes and the reference again, stretched to it.
        let slower = try Schedule(score: BoxSessionTests.score, options: ScheduleOptions(tempoScale: Rational(9, 10), countInMeasures: 1, audioTracks: ["Reference"]))
        var moving = BoxSession(Self.context(lyrics: nil))
        #expect(moving.handle(.retimed(.success(slower)), snapshot: BoxSessionTests.snapshot()).contains(.reloadAllTakes))
        // Without a reference too: the parts' takes of the new tempo (a part whose Takes came on at another).
        var plain0 = BoxSession(BoxSessionTests.context())
        #expect(plain0.handle(.retimed(.success(slower)), snapshot: BoxSessionTests.snapshot()).contains(.reloadAllTakes))
        // A count-in change alone loads nothing again.
        let counted = try Schedule(score: BoxSessionTests.score, options: ScheduleOptions(tempoScale: Rational(9, 10), countInMeasures: 2))
        #expect(!plain0.handle(.retimed(.success(counted)), snapshot: BoxSessionTests.snapshot()).contains(.reloadAllTakes))
        // Without a reference, the action says how to get one.
        var plain = BoxSession(BoxSessionTests.context())
        #expect(BoxSessionTests.said(plain.handle(.action(.reference), snapshot: BoxSessionTests.snapshot())).first?.contains("reference add") == true)
    }

    /// The control changes the tempo and key under the reference (heard:
    /// the caller sends it again stretched), as under any take.
    @Test func aTempoChangeUnderTheReference() throws {
        let score = BoxSessionTests.score
        let options = ScheduleOptions(sampleRate: 48_000, audioTracks: [ReferenceRecord.trackName])
        let schedule = try Schedule(score: score, options: options)
        let core = EngineCore(schedule: schedule, mixes: PartMix.spread(count: 5), maximumFrames: 256)
        let control = EngineControl(link: core.link, score: score, options: options)
        control.send(.takes(part: 4, PartTakes([TakePlayback(samples: Self.referenceAudio(), alignmentOffsetSamples: 0)])))
        try control.setTempo(Rational(9, 10))
        try control.setTranspose(1)
        #expect(control.options.tempoScale == Rational(9, 10) && control.options.transpose == 1)
    }
}
