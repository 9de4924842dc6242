import AcapellaCLI
import AcapellaProject
import AcapellaScore
import Testing

/// The command line's option words, parsed once into types and refused in
/// one line naming the words they take — checked here without running
/// any command (they were reachable only through `Tests/cli-tests.sh`).
@Suite struct OptionValueTests {
    static func arguments(_ values: [String: String]) -> ParsedArguments {
        var parsed = ParsedArguments()
        parsed.values = values
        return parsed
    }

    static func refusal(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test func choicesTakeTheirWordsAndNameThemWhenRefused() throws {
        #expect(try Self.arguments(["--tones": "omit"]).choice("--tones", default: IncludeOmit.include) == .omit)
        #expect(try Self.arguments([:]).choice("--tones", default: IncludeOmit.include) == .include)
        #expect(try Self.arguments(["--session": "ignore"]).choice("--session", default: SessionUse.use) == .ignore)
        #expect(try Self.arguments(["--takes": "memory"]).choice("--takes", as: TakeLoadingChoice.self) == .memory)
        #expect(Self.refusal { _ = try Self.arguments(["--tones": "maybe"]).choice("--tones", default: IncludeOmit.include) }
            == "--tones expects include or omit, not 'maybe'")
        #expect(Self.refusal { _ = try Self.arguments(["--singer": "yes"]).choice("--singer", as: OnOff.self) } == "--singer expects on or off, not 'yes'")
    }

    @Test func measureRangesAreParsedOnce() throws {
        #expect(MeasureRange.parse("5-8") == 5...8)
        #expect(MeasureRange.parse("0-0") == 0...0)
        for bad in ["8-5", "5", "5-", "-5-8", "a-b", "5-8-9", ""] { #expect(MeasureRange.parse(bad) == nil, "\(bad)") }
        #expect(try Self.arguments(["--loop": "off"]).measures("--loop", offWord: "off") == .some(nil))
        #expect(try Self.arguments(["--loop": "2-3"]).measures("--loop", offWord: "off") == .some(2...3))
        #expect(try Self.arguments([:]).measures("--range") == nil)
        #expect(Self.refusal { _ = try Self.arguments(["--range": "3"]).measures("--range") } == "--range expects measures like 5-8, not '3'")
        #expect(Self.refusal { _ = try Self.arguments(["--loop": "x"]).measures("--loop", offWord: "off") } == "--loop expects measures like 5-8, or off, not 'x'")
    }

    /// One `--tempo` in every command: a percent (90, 90%) or the same
    /// as a multiplier (0.9).
    @Test func theTempoIsAPercentOrTheSameMultiplier() throws {
        for same in ["0.9", "90", "90%", "90.0"] { #expect(try Self.arguments(["--tempo": same]).tempoMultiplier() == Rational(9, 10), "\(same)") }
        #expect(try Self.arguments(["--tempo": "0.25"]).tempoMultiplier() == Rational(1, 4))
        #expect(try Self.arguments(["--tempo": "400"]).tempoMultiplier() == Rational(4))
        #expect(try Self.arguments(["--tempo": "102.5"]).tempoMultiplier() == Rational(41, 40))
        #expect(try Self.arguments([:]).tempoMultiplier() == nil)
        for bad in ["0.2", "5", "0", "fast", "-1", "401", "%", "90%%", "90.25"] {
            #expect(Self.refusal { _ = try Self.arguments(["--tempo": bad]).tempoMultiplier() } == "--tempo expects a tempo from 25 to 400 % of the written one, like 90 (or 0.9), not '\(bad)'")
        }
        // Where a take keeps its tempo: a whole percent, 50 to 150.
        for same in ["0.8", "80", "80%"] { #expect(try Self.arguments(["--tempo": same]).tempoPercent(percents: 50...150) == 80, "\(same)") }
        #expect(Self.refusal { _ = try Self.arguments(["--tempo": "300"]).tempoPercent(percents: 50...150) } == "--tempo expects a tempo from 50 to 150 % of the written one, like 90 (or 0.9), not '300'")
        #expect(Self.refusal { _ = try Self.arguments(["--tempo": "0.905"]).tempoPercent(percents: 50...150) } == "--tempo expects a whole percent here (50 to 150), not '0.905'")
    }

    @Test func mixsOptionsBecomeOneRequest() throws {
        let request = try MixCommandOptions.parse(Self.arguments(["--lufs": "-20", "--tones": "omit", "--practice": "Alto", "--tempo": "0.8", "--transpose": "-2",
                                                                  "--session": "ignore", "--bits": "24", "--verse": "all"]))
        var expected = ProjectMixRequest(purpose: .practice(part: "Alto"))
        expected.targetLUFS = -20
        expected.includeTones = false
        expected.tempoScale = Rational(4, 5)
        expected.transpose = -2
        expected.session = .ignore
        expected.bits = 24
        expected.verse = .all
        #expect(request == expected)
        #expect(try MixCommandOptions.parse(Self.arguments([:])) == ProjectMixRequest())
        #expect(try MixCommandOptions.parse(Self.arguments(["--take": "7"])).purpose == .takeWithOthers(take: 7))
        #expect(Self.refusal { _ = try MixCommandOptions.parse(Self.arguments(["--take": "7", "--practice": "Alto"])) } == "--take and --practice: one or the other")
        #expect(Self.refusal { _ = try MixCommandOptions.parse(Self.arguments(["--bits": "20"])) } == "--bits expects 16 or 24")
        #expect(Self.refusal { _ = try MixCommandOptions.parse(Self.arguments(["--reference": "include", "--verse": "2"])) }
            == "--reference include plays the recording once, as it is; it cannot go with --verse")
        #expect(Self.refusal { _ = try MixCommandOptions.parse(Self.arguments(["--lufs": "-3"])) } == "--lufs expects a loudness from -40 to -5, not '-3'")
    }
}
