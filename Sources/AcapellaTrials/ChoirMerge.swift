public import AcapellaProject
public import AcapellaEngine
import AcapellaScore
import Foundation

/// A choir's takes brought together (issue 21's measure), shared by the
/// test suite and `acapella-bench merge`: `singers` singers, each on a box
/// of their own, record every part of a song `takesPerPart` times into
/// their own project; each project travels as a bundle and is merged into
/// one. The same takes are also recorded straight into a single project.
/// Then every take must be in the merged project, bit for bit, and the
/// mix of the merged project must equal the mix of the single one.
public enum ChoirMerge {
    /// What came of it.
    public struct Outcome: Sendable {
        /// Takes recorded, on all boxes.
        public var recorded = 0
        /// Takes in the merged project, and of those bit-identical to their recording.
        public var present = 0
        public var identical = 0
        /// Takes recorded that the merged project does not have.
        public var lost = 0
        /// Takes the second merge of the same bundles found already there (nothing copied twice).
        public var alreadyHereOnRepeat = 0
        /// The largest difference between the two mixes, per sample (0: equal).
        public var mixDifference: Float = .infinity
        /// Samples per channel in a mix.
        public var mixFrames = 0
        /// Bytes of take audio merged, and the seconds merging took (bundles unpacked and merged).
        public var bytes: Int64 = 0
        public var mergeSeconds = 0.0
        /// Seconds of audio per take.
        public var takeSeconds = 0.0
    }

    /// Runs it in `folder` (made empty first by the caller) on `songText`
    /// at `sampleRate`.
    public static func run(in folder: String, songText: String, sampleRate: Int, singers: Int = 5, takesPerPart: Int = 3) throws -> Outcome {
        let score = try Acasong.parse(songText)
        let parts = score.parts.map(\.name)
        let options = ScheduleOptions(sampleRate: sampleRate)
        let frames = Int(try Schedule(score: score, options: options).endSample) + sampleRate / 2
        var outcome = Outcome()
        outcome.takeSeconds = Double(frames) / Double(sampleRate)
        let single = try Project.create(at: folder + "/single.acaproj", songText: songText, sampleRate: sampleRate)
        defer { single.close() }
        var bundles: [String] = []
        var originals: [String: String] = [:]  // take file → the singer's project's copy
        for singer in 1...singers {
            let origin = TakeOrigin(box: "box\(singer)", singer: "Singer \(singer)")
            let own = try Project.create(at: folder + "/singer\(singer).acaproj", songText: songText, sampleRate: sampleRate)
            own.origin = origin
            single.origin = origin
            for (index, part) in parts.enumerated() {
                for take in 1...takesPerPart {
                    let samples = voice(singer: singer, part: index, take: take, frames: frames, sampleRate: sampleRate)
                    for project in [own, single] {
                        let file = try record(samples, part: part, into: project, options: options, offset: Int64(96 * take + singer))
                        if project === own { originals[file] = own.path + "/" + file }
                    }
                    outcome.recorded += 1
                }
            }
            own.close()
            let bundle = folder + "/singer\(singer).acaproj.zip"
            let (reader, _) = try Project.open(own.path, for: .read)
            try ProjectBundle.write(reader, to: bundle)
            reader.close()
            bundles.append(bundle)
        }

        // The bundles travel to one box and are merged there.
        let merged = try Project.create(at: folder + "/choir.acaproj", songText: songText, sampleRate: sampleRate)
        defer { merged.close() }
        let started = DispatchTime.now().uptimeNanoseconds
        for (index, bundle) in bundles.enumerated() {
            let unpacked = try ProjectBundle.unpack(bundle, into: try folderFor(folder + "/unpacked\(index)"))
            let (other, _) = try Project.open(unpacked.path, for: .read)
            _ = try merged.merge(other)
            other.close()
        }
        outcome.mergeSeconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        for index in bundles.indices {
            let (other, _) = try Project.open(folder + "/unpacked\(index)/singer\(index + 1).acaproj", for: .read)
            outcome.alreadyHereOnRepeat += try merged.merge(other).alreadyHere
            other.close()
        }

        // Every take there, bit for bit.
        for (file, original) in originals {
            guard merged.manifest.takes.contains(where: { $0.file == file }) else {
                outcome.lost += 1
                continue
            }
            outcome.present += 1
            if FileCopy.sameContents(original, merged.path + "/" + file) { outcome.identical += 1 }
            outcome.bytes += Int64((try? FileManager.default.attributesOfItem(atPath: original)[.size] as? Int) ?? 0)
        }

        // The choir: part k sung by singer k+1 (round the singers), their second take.
        for (index, part) in parts.enumerated() {
            let file = "takes/\(Project.slug(part))-box\(index % singers + 1)-"
            let choose = { (project: Project) throws in
                let theirs = project.manifest.takes.filter { $0.part == part && $0.file.hasPrefix(file) }.sorted { $0.id < $1.id }
                guard theirs.count >= min(2, takesPerPart) else { throw ProjectError(description: "\(project.path): \(part): the takes of singer \(index % singers + 1) are missing") }
                try project.activate(theirs[min(1, theirs.count - 1)].id)
            }
            try choose(merged)
            try choose(single)
        }
        let mixes = try [merged, single].map { project in
            let takes = project.activeTakes(for: options)
            guard takes.leftOut.isEmpty else { throw ProjectError(description: "\(project.path): \(takes.leftOut.map(\.description).joined(separator: "; "))") }
            var mixOptions = MixdownOptions()
            mixOptions.sampleRate = sampleRate
            return try Mixdown.mix(project.score, options: mixOptions, takes: takes.takes).audio
        }
        outcome.mixFrames = mixes[0].left.count
        if mixes[0].left.count == mixes[1].left.count {
            outcome.mixDifference = zip(mixes[0].left + mixes[0].right, mixes[1].left + mixes[1].right).reduce(0) { max($0, abs($1.0 - $1.1)) }
        }
        return outcome
    }

    /// A singer's take of a part: a tone of its own (so a take in the
    /// wrong place would change the mix) with a little breath.
    static func voice(singer: Int, part: Int, take: Int, frames: Int, sampleRate: Int) -> [Float] {
        let hertz = 110 * Double(part + 2) * (1 + 0.01 * Double(singer) + 0.003 * Double(take))
        var state = UInt64(singer * 1_000 + part * 10 + take)
        return (0..<frames).map { index in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let noise = Float(Int64(bitPattern: state >> 11) % 2_000 - 1_000) / 1_000_000
            return Float(0.2 * sin(2 * Double.pi * hertz * Double(index) / Double(sampleRate))) + noise
        }
    }

    /// Records `samples` as a kept, playing take of `part` whose frame
    /// `offset` holds song sample 0 (as a recording would leave it), the
    /// rest of its record as `describe` says (a punch-in's range, a nudge, a
    /// gain); returns its file.
    public static func record(_ samples: [Float], part: String, into project: Project, options: ScheduleOptions, offset: Int64,
                              describe: (inout TakeRecord) -> Void = { _ in }) throws -> String {
        var (record, writer) = try project.beginTake(part: part, options: options) {
            $0.alignmentOffsetSamples = offset
            describe(&$0)
        }
        try samples.withUnsafeBufferPointer { (buffer) throws(FileError) in try writer.write(buffer.baseAddress!, count: buffer.count) }
        try writer.finish()
        record.frames = Int64(samples.count)
        record.state = .kept
        try project.store(record)
        try project.activate(record.id)
        return record.file
    }

    static func folderFor(_ path: String) throws -> String {
        try Folders.make(path)
        return path
    }
}
