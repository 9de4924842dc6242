import AcapellaProject
import AcapellaScore
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The `acapella` executable built beside this test bundle.
func acapellaExecutable() throws -> String {
    let directory = URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0]).deletingLastPathComponent()
    for candidate in [directory, directory.deletingLastPathComponent()] {
        let path = candidate.appendingPathComponent("acapella").path
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    struct Missing: Error, CustomStringConvertible { var description: String }
    throw Missing(description: "no acapella executable beside \(directory.path); build it first (swift build)")
}

@Suite(.serialized) struct CrashRecoveryTests {
    /// 20 recordings killed with SIGKILL at random moments: at the next
    /// open every take is recovered, each losing at most 0.5 s of what the
    /// recorder had received when it died.
    @Test(.fullSuiteOnly) func killedRecordingsAreRecovered() throws {
        let losses = try killRecordings(runs: 20, seed: 20, arguments: ["--part", "Alto"], parts: ["Alto"])
        print(String(format: "crash recovery: 20 of 20 takes recovered; loss median %.3f s, worst %.3f s", losses.sorted()[10], losses.max() ?? 0))
    }

    /// A quartet recorded at once, killed at random moments: all four takes
    /// are recovered every time, each losing at most 0.5 s.
    @Test func killedQuartetsAreRecoveredOnEveryInput() throws {
        let losses = try killRecordings(runs: 6, seed: 4, arguments: ["--parts", "Soprano=1,Alto=2,Tenor=3,Bass=4"], parts: ["Soprano", "Alto", "Tenor", "Bass"])
        print(String(format: "crash recovery, four inputs: 24 of 24 takes recovered; loss median %.3f s, worst %.3f s", losses.sorted()[12], losses.max() ?? 0))
    }

    /// Records with `arguments` in the room at 8× and kills the recorder
    /// (SIGKILL) a random while after capture began, `runs` times; every
    /// take of `parts` must be recovered. The losses, seconds, a take each.
    func killRecordings(runs: Int, seed: UInt64, arguments: [String], parts: [String]) throws -> [Double] {
        let executable = try acapellaExecutable()
        var rng = SplitMix64(seed: seed)
        var losses: [Double] = []
        for run in 0..<runs {
            let project = try temporaryProject("amazing-grace.acasong")
            project.close()  // the recorder below takes it
            defer { try? FileManager.default.removeItem(atPath: project.path) }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = ["record", project.path] + arguments + ["--device", "sim:speed=8", "--progress"]
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = FileHandle.nullDevice
            try process.run()
            // Wait for the take to be under way, then a random while longer.
            let reader = pipe.fileHandleForReading
            var received: Int64 = 0
            var buffer = ""
            let extra = 0.05 + Double(rng.next() % 1_000) / 1_000 * 0.9
            var killAt: Date?
            while process.isRunning {
                let data = reader.availableData
                if data.isEmpty { break }
                buffer += String(decoding: data, as: UTF8.self)
                while let newline = buffer.firstIndex(of: "\n") {
                    let line = buffer[..<newline]
                    buffer = String(buffer[buffer.index(after: newline)...])
                    if line.hasPrefix("captured "), let value = Int64(line.dropFirst(9)), value > 0 {
                        received = value
                        if killAt == nil { killAt = Date().addingTimeInterval(extra) }
                    }
                }
                if let killAt, Date() >= killAt {
                    kill(process.processIdentifier, SIGKILL)
                    break
                }
            }
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal, "run \(run): the recording ended before it could be killed")
            let (reopened, report) = try Project.open(project.path, for: .write(owner: "test"))
            // A take for every input (numbered as the writers began them: under load not always in the parts' order).
            #expect(reopened.manifest.takes.map(\.part).sorted() == parts.sorted(), "run \(run): \(reopened.manifest.takes.map(\.part))")
            for take in reopened.manifest.takes {
                #expect(take.state == .recovered && report.contains { $0.contains("recovered") }, "run \(run): \(report)")
                // `received` is the first part's; the others were captured with it.
                let lost = Double(max(0, received - take.frames)) / 48_000
                losses.append(lost)
                #expect(lost <= 0.5, "run \(run), \(take.part): \(lost) s lost")
                #expect(TakeFile.frameCount(project.path + "/" + take.file) == take.frames)
            }
        }
        return losses
    }
}
