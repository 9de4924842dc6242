// The `acapella` executable: a table of subcommands (Commands.swift), each
// with its own options and --help. Libraries throw; only this file exits.
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())

func printTopLevelHelp() {
    var text = "acapella — the Acapella box rehearsal appliance\n\nusage: acapella COMMAND [options]\n\ncommands:\n"
    for command in commands { text += "  " + command.name.padding(to: 10) + command.summary + "\n" }
    text += "\nRun 'acapella COMMAND --help' for a command's options.\n"
    print(text, terminator: "")
}

guard let commandName = arguments.first, !["--help", "-h", "help"].contains(commandName) else {
    if arguments.count >= 2, arguments[0] == "help", let command = commands.first(where: { $0.name == arguments[1] }) {
        print(command.help, terminator: "")
    } else {
        printTopLevelHelp()
    }
    exit(arguments.isEmpty ? 2 : 0)
}
guard let command = commands.first(where: { $0.name == commandName }) else {
    writeError("acapella: error: unknown command '\(commandName)'; run 'acapella --help' for the list")
    exit(2)
}
do {
    let parsed = try command.parse(Array(arguments.dropFirst()))
    exit(try command.run(parsed))
} catch is HelpRequested {
    print(command.help, terminator: "")
    exit(0)
} catch let error as CLIError {
    if !error.alreadyReported { writeError("acapella \(command.name): error: \(error.description)") }
    exit(error.exitCode)
} catch {
    writeError("acapella \(command.name): error: \(error)")
    exit(1)
}
