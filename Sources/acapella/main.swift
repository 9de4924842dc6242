// The `acapella` executable: a table of subcommands (Commands.swift), each
// with its own options and --help. Libraries throw; only this file exits.
import AcapellaCLI
import AcapellaProject
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())

func printTopLevelHelp() {
    var text = "acapella — the Acapella box rehearsal appliance\n\nusage: acapella COMMAND [options]\n\ncommands:\n"
    for command in commands { text += "  " + command.name.padding(to: 10) + command.summary + "\n" }
    text += "\nRun 'acapella COMMAND --help' for a command's options; 'acapella --version' for the versions.\n"
    print(text, terminator: "")
}

if arguments.first == "--version" || arguments.first == "-V" {
    exit((try? runVersion(ParsedArguments())) ?? 1)
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
// No command writes a file inside a project (a take, its song, its
// manifest): only the project does.
runCommand(command, arguments: Array(arguments.dropFirst()), program: "acapella \(command.name)") { path, inputs in
    ConfinedPath.checkOutput(path, inputs: inputs)?.description
}
