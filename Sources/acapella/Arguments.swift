/// A command-line option a subcommand accepts.
struct OptionSpec: Sendable {
    /// The name commands look values up by: the long form (`--output` for
    /// `-o, --output`), so short aliases never change the lookup.
    var key: String { names.first { $0.hasPrefix("--") } ?? names[0] }

    /// `--json`, `-o`…
    var names: [String]
    /// Placeholder for the value, or `nil` for a flag.
    var valueName: String?
    /// One line of help.
    var help: String
}

/// A subcommand: its table entry in `commands`.
struct Subcommand: Sendable {
    var name: String
    var summary: String
    /// Positional arguments as shown in usage, e.g. `FILE…`.
    var positionals: String
    /// Bounds on the number of positional arguments.
    var positionalCount: ClosedRange<Int>
    var options: [OptionSpec]
    /// Extra help text after the options.
    var details: String
    var run: @Sendable (ParsedArguments) throws -> Int32

    var usage: String {
        let optionText = options.map { "[\($0.names[0])\($0.valueName.map { " \($0)" } ?? "")]" }.joined(separator: " ")
        return ["acapella", name, optionText, positionals].filter { !$0.isEmpty }.joined(separator: " ")
    }

    var help: String {
        var text = "\(summary)\n\nusage: \(usage)\n"
        if !options.isEmpty {
            text += "\noptions:\n"
            for option in options + [OptionSpec(names: ["--help", "-h"], valueName: nil, help: "show this help")] {
                let left = option.names.joined(separator: ", ") + (option.valueName.map { " \($0)" } ?? "")
                text += "  " + left.padding(to: 24) + option.help + "\n"
            }
        }
        if !details.isEmpty { text += "\n" + details + "\n" }
        return text
    }
}

/// What the user gave: flags, option values and positionals.
struct ParsedArguments {
    var flags: Set<String> = []
    var values: [String: String] = [:]
    var positionals: [String] = []

    func value(_ name: String) -> String? { values[name] }

    func int(_ name: String, default fallback: Int, range: ClosedRange<Int>) throws -> Int {
        guard let text = values[name] else { return fallback }
        guard let number = Int(text), range.contains(number) else {
            throw CLIError("\(name) expects a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return number
    }
}

/// A failure the CLI reports as one line and a non-zero exit.
struct CLIError: Error, CustomStringConvertible {
    var description: String
    var exitCode: Int32 = 2
    /// The error lines were already printed (located `FILE:LINE:COL: error:`
    /// lines); nothing more to say.
    var alreadyReported = false
    init(_ description: String, exitCode: Int32 = 2, alreadyReported: Bool = false) {
        self.description = description
        self.exitCode = exitCode
        self.alreadyReported = alreadyReported
    }
}

/// `--help` was asked for; not an error.
struct HelpRequested: Error {}

extension Subcommand {
    /// Matches arguments against the option table.
    func parse(_ arguments: [String]) throws -> ParsedArguments {
        var parsed = ParsedArguments()
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            // A negative number ("nudge 3 -12") is a value, not an option.
            if onlyPositionals || !argument.hasPrefix("-") || argument == "-" || Double(argument) != nil {
                parsed.positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            if argument == "--help" || argument == "-h" { throw HelpRequested() }
            var name = argument
            var inlineValue: String?
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            guard let spec = options.first(where: { $0.names.contains(name) }) else {
                throw CLIError("unknown option '\(name)' for '\(self.name)'; see 'acapella \(self.name) --help'")
            }
            let key = spec.key
            if spec.valueName != nil {
                if let inlineValue {
                    parsed.values[key] = inlineValue
                } else if index < arguments.count {
                    parsed.values[key] = arguments[index]
                    index += 1
                } else {
                    throw CLIError("option '\(name)' needs a value (\(spec.valueName!))")
                }
            } else {
                if inlineValue != nil { throw CLIError("option '\(name)' takes no value") }
                parsed.flags.insert(key)
            }
        }
        if !positionalCount.contains(parsed.positionals.count) {
            throw CLIError("wrong number of arguments; usage: \(usage)")
        }
        return parsed
    }
}

extension String {
    func padding(to width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
