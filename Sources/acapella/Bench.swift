import AcapellaScore
import Foundation

/// `acapella bench NAME`. Timing lives here, never in unit tests.
func runBench(_ arguments: ParsedArguments) throws -> Int32 {
    switch arguments.positionals[0] {
    case "parse": return try benchParse(arguments)
    default: throw CLIError("unknown benchmark '\(arguments.positionals[0])'; see 'acapella bench --help'")
    }
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
}

func benchParse(_ arguments: ParsedArguments) throws -> Int32 {
    let parts = try arguments.int("--parts", default: 8, range: 1...64)
    let measures = try arguments.int("--measures", default: 10_000, range: 1...100_000)
    let repeats = try arguments.int("--repeat", default: 5, range: 1...100)
    var rng = SplitMix64(seed: 2026)
    let score = ScoreGenerator.random(using: &rng, options: .init(parts: parts, measures: measures))
    let text = Acasong.serialize(score)
    let bytes = Array(text.utf8)
    let notes = score.parts.reduce(0) { $0 + $1.notes.count }
    print("bench parse: \(parts) parts × \(measures) measures, \(notes) notes, \(bytes.count) bytes of .acasong")

    let clock = ContinuousClock()
    var bestParse = Double.infinity
    var bestPrint = Double.infinity
    for _ in 0..<repeats {
        var parsed: Score?
        let parseTime = clock.measure { parsed = try? Acasong.parse(bytes: bytes) }
        guard let parsed, parsed == score else { throw CLIError("benchmark score did not round-trip", exitCode: 1) }
        var printed = ""
        let printTime = clock.measure { printed = Acasong.serialize(parsed) }
        guard printed.utf8.count == bytes.count else { throw CLIError("benchmark print differs", exitCode: 1) }
        bestParse = min(bestParse, seconds(parseTime))
        bestPrint = min(bestPrint, seconds(printTime))
    }
    let total = bestParse + bestPrint
    func rate(_ time: Double) -> String { String(format: "%.2f M notes/s", Double(notes) / time / 1e6) }
    print(String(format: "  parse + validate  %7.1f ms   %@", bestParse * 1000, rate(bestParse)))
    print(String(format: "  print             %7.1f ms   %@", bestPrint * 1000, rate(bestPrint)))
    print(String(format: "  round trip        %7.1f ms   %@   (best of %d)", total * 1000, rate(total), repeats))
    return 0
}
