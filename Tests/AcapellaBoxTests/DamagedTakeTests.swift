@testable import AcapellaBox
@testable import AcapellaDevices
import AcapellaEngine
@testable import AcapellaProject
import AcapellaScore
import Foundation
import Testing

/// A take whose file holds samples that are not numbers (NaN or ∞: a disk
/// fault, a broken copy) never takes the rest down with it: it is read as
/// silence there and named — the mix (as streamed, and stretched to
/// another tempo) mixes every other take at its loudness, the analysis
/// judges no note whose entry the damage is over and says why, `correct` refuses to keep
/// the silence as sung, a blend leaves it out; a take damaged whole is
/// named by each and left out of what it cannot be part of.
@Suite(.serialized) struct DamagedTakeTests {
    /// Simple Harmony with a take of each part, sung by the quiet room.
    static func project() throws -> Project {
        let project = try temporaryProject("simple-harmony.acasong")
        for part in ["Soprano", "Bass"] {
            var request = RecordingRequest(part: part)
            request.singer = quietSinger()
            _ = try RecordingSession.record(project: project, request: request, device: try quietRoom())
        }
        return project
    }

    /// Writes NaN (or ∞) over `frames` of a 32-bit float WAV take (all of it: nil).
    static func damage(_ path: String, frames: Range<Int>?, with value: Float = .nan) throws {
        try rewrite(path, frames: frames) { _ in value }
    }

    /// Each sample over `frames` (all: nil) of a 32-bit float WAV take replaced by `change` of it.
    static func rewrite(_ path: String, frames: Range<Int>?, _ change: (Float) -> Float) throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var at = 12
        while at + 8 <= bytes.count {
            let size = Int(UInt32(bytes[at + 4]) | UInt32(bytes[at + 5]) << 8 | UInt32(bytes[at + 6]) << 16 | UInt32(bytes[at + 7]) << 24)
            if Array(bytes[at..<(at + 4)]) == Array("data".utf8) {
                let count = size / 4
                for frame in frames ?? 0..<count where frame < count {
                    let place = at + 8 + 4 * frame
                    let old = Float(bitPattern: UInt32(bytes[place]) | UInt32(bytes[place + 1]) << 8 | UInt32(bytes[place + 2]) << 16 | UInt32(bytes[place + 3]) << 24)
                    withUnsafeBytes(of: change(old).bitPattern.littleEndian) { bytes.replaceSubrange(place..<(place + 4), with: $0) }
                }
                try Data(bytes).write(to: URL(fileURLWithPath: path))
                return
            }
            at += 8 + size + size % 2
        }
        Issue.record("\(path): no data chunk")
    }

    static func mixed(_ project: Project, _ request: ProjectMixRequest = ProjectMixRequest()) throws -> (result: ProjectMixResult, samples: [Float]) {
        let path = NSTemporaryDirectory() + "damaged-\(UUID().uuidString).wav"
        defer { unlink(path) }
        let result = try ProjectExport.mix(project, request, to: path)
        return (result, try AudioFile.read(path).samples)
    }

    @Test func aDamagedTakeIsNamedAndTheRestStillPlays() throws {
        let project = try Self.project()
        defer { try? FileManager.default.removeItem(atPath: project.path) }
        let bass = try #require(project.manifest.takes.first { $0.part == "Bass" })
        // 0.1 s over the Bass's second entry, and ten infinities further on.
        let entry = Int(try Schedule(score: project.score).tones[1][1].startSample + bass.alignmentOffsetSamples)
        try Self.damage(project.path + "/" + bass.file, frames: (entry - 1_000)..<(entry + 3_800))
        try Self.damage(project.path + "/" + bass.file, frames: (entry + 100_000)..<(entry + 100_010), with: .infinity)
        let from = String(format: "0:%04.1f", Double(entry - 1_000) / 48_000)
        // The mix, streamed and stretched: every sample a number, at its loudness, the take named.
        var slower = ProjectMixRequest()
        slower.tempoScale = Rational(9, 10)
        for request in [ProjectMixRequest(), slower] {
            let (result, samples) = try Self.mixed(project, request)
            #expect(samples.allSatisfy(\.isFinite) && samples.contains { abs($0) > 0.05 } && samples.allSatisfy { abs($0) <= 1 })
            #expect(abs(result.loudness.integratedLUFS - -16) < 0.1, "\(result.loudness)")
            #expect(result.notes.contains("take \(bass.id) (Bass): 4,810 samples are damaged (not a number) from \(from) on; heard as silence there"), "\(result.notes)")
        }
        // The analysis: the note over the damage not judged, said why.
        let (report, _) = try TakeReport.analyze(bass, in: project)
        #expect(report.damage == "4,810 samples are damaged (not a number) from \(from) on; heard as silence there")
        #expect(report.notes.contains { !$0.judged } && report.lines.contains("its audio is damaged: " + (report.damage ?? "")))
        #expect(report.summary(takeID: bass.id).worst.first == "audio damaged")
        // Put in tune: refused, named. A blend: the take left out, named.
        #expect(throws: ProjectError.self) { try TakeCorrection.corrected(bass, in: project, selection: .all, strength: 1) }
        do {
            _ = try Blend.analyze(project)
            Issue.record("a blend was made of a damaged take and one other")
        } catch {
            #expect("\(error)".contains("Bass: take \(bass.id) left out (its audio is damaged: 4,810 samples"), "\(error)")
        }
    }

    @Test func aTakeDamagedWholeIsLeftOutOfWhatItCannotBePartOf() throws {
        let project = try Self.project()
        defer { try? FileManager.default.removeItem(atPath: project.path) }
        let bass = try #require(project.manifest.takes.first { $0.part == "Bass" })
        try Self.damage(project.path + "/" + bass.file, frames: nil)
        let (result, samples) = try Self.mixed(project)
        #expect(samples.allSatisfy(\.isFinite) && abs(result.loudness.integratedLUFS - -16) < 0.1, "the Soprano mixed: \(result.loudness)")
        #expect(result.notes.contains { $0.hasPrefix("take \(bass.id) (Bass): ") && $0.contains("damaged (not a number)") }, "\(result.notes)")
        #expect {
            try TakeReport.analyze(bass, in: project)
        } throws: { "\($0)".contains("every sample of its audio is damaged (not a number); there is nothing to analyse") }
        let decoded = try AudioFile.readMonoNamingDamage(project.path + "/" + bass.file)
        #expect(decoded.samples.allSatisfy { $0 == 0 } && decoded.damage.describe(sampleRate: 48_000).hasPrefix("every sample of its audio is damaged"))
    }

    /// A take of full-scale DC (a microphone's offset gone wild) mixed to
    /// AAC at another tempo: the DC is taken out of the mix before its gain
    /// (loudness cannot hear it, so it was raised to the ceiling and the
    /// encoder rebuilt its edge 3.4 dB over it); the file decodes under the
    /// −1 dBTP ceiling at −16 LUFS, and the ceiling is never given up for
    /// loudness.
    @Test func aDCTakeMixedToAACStaysUnderTheCeiling() throws {
        let project = try Self.project()
        defer { try? FileManager.default.removeItem(atPath: project.path) }
        let soprano = try #require(project.manifest.takes.first { $0.part == "Soprano" })
        try Self.damage(project.path + "/" + soprano.file, frames: nil, with: 1)
        let (_, decoded) = try Self.mixedSlower(project, as: "m4a")
        #expect(decoded.truePeakDBTP <= -1 && abs(decoded.integratedLUFS - -16) <= 0.1, "\(decoded)")
    }

    /// `project` mixed at 90 % to a file of `format` (at `lufs`), and that file measured as a player decodes it.
    static func mixedSlower(_ project: Project, as format: String, lufs: Double = -16) throws -> (result: ProjectMixResult, decoded: LoudnessMeasurement) {
        var slower = ProjectMixRequest()
        slower.tempoScale = Rational(9, 10)
        slower.targetLUFS = lufs
        let path = NSTemporaryDirectory() + "slower-\(UUID().uuidString).\(format)"
        defer { unlink(path) }
        let result = try ProjectExport.mix(project, slower, to: path)
        return (result, try AudioFile.decodedLoudness(path, frames: result.frames, sampleRate: 48_000, truePeakFloorDBTP: -1))
    }

    /// Loud bursts (a 5 ms knock every quarter second) over a small offset
    /// (a microphone's, below what is taken out), at another tempo: the
    /// bursts put the first pass over the ceiling; the limiter's ceiling
    /// comes down and the gain makes the loudness up again — −16 LUFS
    /// under −1 dBTP as AAC and as WAV (a pass over the ceiling once held
    /// the gain down for good: quieter than asked), nothing said missed.
    @Test(.fullSuiteOnly, arguments: ["m4a", "wav"]) func burstsOverAnOffsetStillReachTheTarget(_ format: String) throws {
        let project = try Self.project()
        defer { try? FileManager.default.removeItem(atPath: project.path) }
        for take in project.manifest.takes {
            var frame = 0
            try Self.rewrite(project.path + "/" + take.file, frames: nil) { value in
                frame += 1
                return value + 0.008 + (frame % 12_000 < 480 ? (frame % 48 < 24 ? 0.9 : -0.9) : 0)
            }
        }
        let (result, decoded) = try Self.mixedSlower(project, as: format)
        #expect(decoded.truePeakDBTP <= -1 && abs(decoded.integratedLUFS - -16) <= (format == "wav" ? 0.05 : 0.1), "\(decoded) \(result.notes)")
        #expect(!result.notes.contains { $0.contains("LUFS, not the") }, "\(result.notes)")
        guard format == "wav" else { return }
        // A target no mix reaches under the ceiling: the nearest pass under it stands, said.
        let (pushed, measured) = try Self.mixedSlower(project, as: "wav", lufs: -2)
        #expect(measured.truePeakDBTP <= -1 && measured.integratedLUFS < -2.1, "\(measured)")
        #expect(pushed.notes.contains { $0.hasSuffix("LUFS, not the -2.0 asked: as near as it comes under the -1.0 dBTP ceiling") }, "\(pushed.notes)")
    }

    /// Where the damage is, merged, however it is read; what a card is given for a NaN.
    @Test func damageIsNotedWhereItIs() {
        var damage = SampleDamage()
        var samples: [Float] = [0.1, .nan, .nan, 0.2, .infinity, -.infinity, 0.3]
        #expect(samples.withUnsafeMutableBufferPointer { damage.clean($0.baseAddress!, count: $0.count, from: 100) })
        #expect(samples == [0.1, 0, 0, 0.2, 0, 0, 0.3] && damage.spans == [101..<103, 104..<106] && damage.count == 4)
        damage.note(102..<105)
        #expect(damage.spans == [101..<106] && damage.count == 5, "read again, counted once")
        damage.note(10..<12)
        damage.note(106..<108)
        #expect(damage.spans == [10..<12, 101..<108], "before the first, and touching the last")
        // A take speckled with NaNs (every other sample of 10,000 blocks): 4,096 spans, the last grown over the rest.
        var speckled = SampleDamage()
        var block = [Float](repeating: 0, count: 64)
        for index in stride(from: 0, to: 64, by: 2) { block[index] = .nan }
        for number in 0..<10_000 {
            var samples = block
            samples.withUnsafeMutableBufferPointer { _ = speckled.clean($0.baseAddress!, count: 64, from: Int64(number * 64)) }
        }
        #expect(speckled.spans.count == 4_096 && speckled.spans.first == 0..<1 && speckled.spans.last?.upperBound == 639_999, "\(speckled.spans.suffix(2))")
        for format in SampleFormat.allCases {
            var buffer = [UInt8](repeating: 0xFF, count: 4)
            buffer.withUnsafeMutableBytes { format.store(.nan, $0.baseAddress!, 0) }
            #expect(buffer.withUnsafeBytes { format.load($0.baseAddress!, 0) } == 0, "\(format): a NaN is silence on the card")
        }
    }
}
