// `acapella-bench NAME`: the benchmarks, apart from the appliance (the
// box's binary does not carry the peers' runners). Each prints its figures
// beside a peer's run side by side when that peer is installed.
import AcapellaCLI
import Foundation

let benchCommand = Subcommand(
        name: "bench", summary: "run a benchmark and print its figures",
        positionals: "NAME", positionalCount: 1...1,
        options: [
            OptionSpec(names: ["--parts"], valueName: "N", help: "parts in the generated score (default 8)"),
            OptionSpec(names: ["--measures"], valueName: "N", help: "measures in the generated score (default 10000)"),
            OptionSpec(names: ["--repeat"], valueName: "N", help: "timed repetitions; the best (box: the median) is reported (default 5)"),
            OptionSpec(names: ["--dir"], valueName: "DIR", help: "data folder for 'import' (MusicXML) and 'pitch' (voice files)"),
            OptionSpec(names: ["--corpus"], valueName: "bach", help: "'import' on music21's Bach chorales, with the note-for-note comparison"),
            OptionSpec(names: ["--periods"], valueName: "N", help: "periods for 'render' (default 100000)"),
            OptionSpec(names: ["--frames"], valueName: "N", help: "period size for 'render' (default 128)"),
            OptionSpec(names: ["--no-slope"], valueName: nil, help: "'render' of the given periods only, without the cost-per-part runs (Tools/pi-budget.sh counts their instructions)"),
            OptionSpec(names: ["--minutes"], valueName: "N", help: "length of the long project for 'stream' (default 10)"),
            OptionSpec(names: ["--seconds"], valueName: "N", help: "how long 'load' plays (default 600); 'stretch', each way (default 20)"),
            OptionSpec(names: ["--without"], valueName: "LOADS", help: "'load' without some of its loads (stress, web, analysis; commas between): what each costs"),
            OptionSpec(names: ["--unlocked"], valueName: nil, help: "'load' with the box's memory not locked (what mlockall is worth)"),
            OptionSpec(names: ["--only"], valueName: "1,2,…", help: "the sections of 'analyze' to run (default 1-4; 5: the public trackers, 6: real singers beside swift-f0 and basic-pitch); of 'stream': memory, disk, device"),
        ],
        details: "Benchmarks:\n  parse   parse + validate + print of a generated score, in notes per second\n  import  import every MusicXML file in --dir; music21 on the same files side by side when installed;\n          --corpus bach: music21's 410 Bach chorales, then every part compared with music21's reading\n  engrave MusicXML → layout → SVG for every file in --dir; verovio's toolkit side by side when installed\n  render  worst-case time of one period (8 parts: tones, takes, punch-ins, clicks) as a share of the period's duration\n  mix     mixdown of a 3-minute 4-part song from 4 take files; sox -m on the same files side by side\n  tones   guide tones of a 3-minute 4-part song to WAV; fluidsynth -F on the same notes as MIDI side by side\n  calibrate  a calibration in the simulated room; the FFT correlation beside a direct one\n  pitch   YIN on the voice files in --dir (default ../shared/data/voice); aubio's YIN side by side\n  box     the box as a process: start-up to ready, and resident size with an 8-part 3-minute project's takes loaded\n  latency the box in a terminal: from a key read to the start of the period applying its command (p99 goal: a period + 1 ms)\n  web     the web page in Chromium: cursor accuracy, publication to event, recording under load, first paint\n          of a 3-minute score (--repeat: seconds of playing for the first two, default 12)\n  analyze the take analysis against the synthetic singer's truth (8 songs, 3 singers) with aubio's pitch and\n          onsets on the same takes; pitch without a score on the voice files and their harmonic-heavy\n          re-syntheses, aubio's YIN beside; note splitting against aubionotes (mir_eval); a 3-minute take analysed\n  merge   5 singers × 4 parts × 3 takes merged from bundles: every take bit-identical, the mix equal; cp beside\n  usb     a 3-minute 4-part project exported as to a USB stick (an ext4 image on a loop device as root); cp beside\n  stream  takes streamed from disk: the box's peak memory on 32 parts × 10 minutes (3 takes each) and on 8 × 3 minutes,\n          decoded takes beside; the slowest shared read rate (a simulated slow card) at which 32 parts play clean\n  align   reference recordings aligned to their song (40 + 10 at other tempos); waveform cross-correlation beside\n  load    the render loop under a box's real load at real time: 32 parts (16 streamed), the needle, 10 web clients,\n          an analysis beside, the other core busy (stress-ng): p99.9 of a 128-frame period and periods late\n  needle  the live pitch needle on the synthetic singer's vibrato takes: readings within ±5 cents of the note's centre, the raw reading beside\n  stretch takes at 80 % a tone lower: the render loop at real time with 8 stretched streams (p99.9, frames missed) beside\n          as written; the sung voice stretched, its pitch against the truth, ours beside rubberband (R2, R3) and sox",
        run: runBench)

let benchArguments = Array(CommandLine.arguments.dropFirst())
if benchArguments.isEmpty {
    print(benchCommand.help, terminator: "")
    exit(2)
}
runCommand(benchCommand, arguments: benchArguments, program: "acapella-bench")
