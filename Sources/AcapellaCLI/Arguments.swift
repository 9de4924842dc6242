import Foundation

/// A command-line option a subcommand accepts.
public struct OptionSpec: Sendable {
    /// The name commands look values up by: the long form (`--output` for
    /// `-o, --output`), so short aliases never change the lookup.
    public var key: String { names.first { $0.hasPrefix("--") } ?? names[0] }

    /// `--json`, `-o`…
    public var names: [String]
    /// Placeholder for the value, or `nil` for a flag.
    public var valueName: String?
    /// One line of help.
    public var help: String
    /// The command cannot do without it (shown without brackets in usage).
    public var required = false
    /// Its value is a path the command writes (checked before the command
    /// runs: never inside a project, never the command's own input).
    public var writes = false

    /// An option.
    public init(names: [String], valueName: String?, help: String, required: Bool = false, writes: Bool = false) {
        self.names = names
        self.valueName = valueName
        self.help = help
        self.required = required
        self.writes = writes
    }
}

/// A subcommand: its table entry in `commands`.
public struct Subcommand: Sendable {
    public var name: String
    public var summary: String
    /// Positional arguments as shown in usage, e.g. `FILE…`.
    public var positionals: String
    /// Bounds on the number of positional arguments.
    public var positionalCount: ClosedRange<Int>
    public var options: [OptionSpec]
    /// Extra help text after the options.
    public var details: String
    public var run: @Sendable (ParsedArguments) throws -> Int32

    /// A subcommand.
    public init(name: String, summary: String, positionals: String, positionalCount: ClosedRange<Int>, options: [OptionSpec], details: String,
                run: @escaping @Sendable (ParsedArguments) throws -> Int32) {
        self.name = name
        self.summary = summary
        self.positionals = positionals
        self.positionalCount = positionalCount
        self.options = options
        self.details = details
        self.run = run
    }

    /// The usage line.
    public var usage: String {
        // Required options first and bare, the rest in brackets.
        let ordered = options.filter(\.required) + options.filter { !$0.required }
        let optionText = ordered.map { option in
            let text = option.names[0] + (option.valueName.map { " \($0)" } ?? "")
            return option.required ? text : "[\(text)]"
        }.joined(separator: " ")
        return [name == "bench" ? "acapella-bench" : "acapella " + name, optionText, positionals].filter { !$0.isEmpty }.joined(separator: " ")
    }

    /// The whole help text.
    public var help: String {
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
public struct ParsedArguments: Sendable {
    public var flags: Set<String> = []
    public var values: [String: String] = [:]
    public var positionals: [String] = []

    /// Nothing given.
    public init() {}

    /// An option's value, by its long name.
    public func value(_ name: String) -> String? { values[name] }

    /// An option's whole number in `range`, or `fallback` when absent.
    public func int(_ name: String, default fallback: Int, range: ClosedRange<Int>) throws -> Int {
        guard let text = values[name] else { return fallback }
        guard let number = Int(text), range.contains(number) else {
            throw CLIError("\(name) expects a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return number
    }
}

/// A failure the CLI reports as one line and a non-zero exit.
public struct CLIError: Error, CustomStringConvertible {
    public var description: String
    public var exitCode: Int32 = 2
    /// The error lines were already printed (located `FILE:LINE:COL: error:`
    /// lines); nothing more to say.
    public var alreadyReported = false
    public init(_ description: String, exitCode: Int32 = 2, alreadyReported: Bool = false) {
        self.description = description
        self.exitCode = exitCode
        self.alreadyReported = alreadyReported
    }
}

/// `--help` was asked for; not an error.
public struct HelpRequested: Error {
    public init() {}
}

extension Subcommand {
    /// Matches arguments against the option table.
    public func parse(_ arguments: [String]) throws -> ParsedArguments {
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
    /// Padded with spaces to `width` (one space at least).
    public func padding(to width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}

/// Runs one subcommand of `commands` as the program's main: help, usage
/// errors (exit 2) and failures (exit 1) as one line each. Only executables
/// call this; libraries throw.
/// `refuseOutput` is asked about every path an option that writes was
/// given (with the command's positional arguments, its inputs): a reason
/// refuses the command before it runs (exit 1).
public func runCommand(_ command: Subcommand, arguments: [String], program: String,
                       refuseOutput: (String, [String]) -> String? = { _, _ in nil }) -> Never {
    do {
        let parsed = try command.parse(arguments)
        for option in command.options where option.writes {
            if let path = parsed.value(option.key), let reason = refuseOutput(path, parsed.positionals) { throw CLIError(reason, exitCode: 1) }
        }
        exit(try command.run(parsed))
    } catch is HelpRequested {
        print(command.help, terminator: "")
        exit(0)
    } catch let error as CLIError {
        if !error.alreadyReported { writeError("\(program): error: \(error.description)") }
        exit(error.exitCode)
    } catch {
        writeError("\(program): error: \(error)")
        exit(1)
    }
}
