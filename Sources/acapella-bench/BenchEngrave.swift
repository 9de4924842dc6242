import AcapellaBox
import AcapellaCLI
import AcapellaEngrave
import AcapellaMusicXML
import AcapellaScore
import Foundation

/// Engraving speed beside verovio's Python toolkit, file by file: read the
/// MusicXML, lay it out, write SVG (every page for verovio, the one scroll
/// for the box), best of N each.
func benchEngrave(_ arguments: ParsedArguments) throws -> Int32 {
    let folder = arguments.value("--dir") ?? "../shared/data/musicxml"
    let repeats = try arguments.int("--repeat", default: 5, range: 1...100)
    let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter(MusicXML.isFile).sorted()
    guard !names.isEmpty else { throw CLIError("no MusicXML files in \(folder); pass --dir", exitCode: 1) }
    let engraver: Engraver
    do { engraver = try ShippedFiles.engraver().engraver } catch { throw CLIError(error.description, exitCode: 1) }
    let paths = names.map { (folder as NSString).appendingPathComponent($0) }
    let clock = ContinuousClock()
    var ours: [Double] = []
    for path in paths {
        let bytes = try readSongBytes(path)
        var best = Double.infinity
        for _ in 0..<repeats {
            var size = 0
            let time = try clock.measure {
                do {
                    let score = try MusicXML.importScore(bytes: bytes, fileName: path, options: ImportOptions(unfold: false)).score
                    let engraving = try engraver.engrave(score)
                    size = SVGWriter.svg(engraving.scroll, staffSpaceMM: engraving.staffSpaceMM, fontName: engraving.fontName, font: .url("Bravura.otf")).utf8.count
                } catch let error as ImportError {
                    throw CLIError(error.description, exitCode: 1)
                } catch let error as EngraveError {
                    throw CLIError("\(path): \(error.description)", exitCode: 1)
                }
            }
            precondition(size > 0)
            best = min(best, seconds(time))
        }
        ours.append(best)
    }
    let script = """
        import io, sys, time, zipfile
        try:
            import verovio
        except ImportError:
            print("missing"); sys.exit(0)
        verovio.enableLog(verovio.LOG_OFF) if hasattr(verovio, "enableLog") else None
        def text_of(path):
            # verovio cannot detect UTF-16: hand it the score as text.
            data = open(path, "rb").read()
            if data[:2] == b"PK":
                archive = zipfile.ZipFile(io.BytesIO(data))
                data = archive.read([n for n in archive.namelist() if not n.startswith("META-INF")][0])
            return data.decode("utf-16") if data[:2] in (b"\\xff\\xfe", b"\\xfe\\xff") else data.decode("utf-8")
        repeats = int(sys.argv[1])
        for path in sys.argv[2:]:
            best = float("inf")
            for _ in range(repeats):
                start = time.perf_counter()
                toolkit = verovio.toolkit()
                if not toolkit.loadFile(path) and not toolkit.loadData(text_of(path)):
                    best = None
                    break
                for page in range(1, toolkit.getPageCount() + 1):
                    toolkit.renderToSVG(page)
                best = min(best, time.perf_counter() - start)
            print("unreadable" if best is None else best)
        """
    // verovio from Tools/python-env (Tools/requirements.txt).
    let python = capture([ShippedFiles.path("Tools/python-env", installed: "share/acapella/tools/python-env") ?? "Tools/python-env"])?
        .trimmingCharacters(in: .whitespacesAndNewlines)
    let output = capture([python.flatMap { $0.isEmpty ? nil : $0 } ?? "python3", "-c", script, String(repeats)] + paths)
    // One line per file: seconds, or "unreadable" when verovio cannot load it.
    let peer: [Double?] = output.map { text in text.split(separator: "\n").filter { Double($0) != nil || $0 == "unreadable" }.map { Double($0) } } ?? []
    let lily = lilypondTimes(paths)
    print("bench engrave: \(names.count) files, MusicXML → layout → SVG, best of \(repeats); LilyPond (musicxml2ly + lilypond → PDF) once")
    print("  file".padding(toLength: 44, withPad: " ", startingAt: 0) + "acapella    verovio     ratio    LilyPond     ratio")
    var faster = 0
    var unreadable = 0
    for (index, name) in names.enumerated() {
        var line = "  " + name.padding(toLength: 42, withPad: " ", startingAt: 0) + String(format: "%7.1f ms", ours[index] * 1000)
        if index < peer.count {
            if let time = peer[index] {
                line += String(format: " %8.1f ms %7.1f×", time * 1000, time / ours[index])
                if time > ours[index] { faster += 1 }
            } else {
                line += "   verovio cannot read it"
                unreadable += 1
            }
        }
        if let time = lily[index] { line += String(format: " %8.0f ms %7.0f×", time * 1000, time / ours[index]) }
        print(line)
    }
    if peer.count == names.count {
        print("  faster than verovio on \(faster) of the \(names.count - unreadable) files it reads (goal: all)"
              + (unreadable > 0 ? "; \(unreadable) it cannot read" : ""))
    } else {
        print("  verovio   not installed (Tools/python-env installs it for the side-by-side figures)")
    }
    if lily.allSatisfy({ $0 == nil }) { print("  LilyPond  not installed (Debian's lilypond, for the side-by-side figures)") }
    try layoutAlone(engraver: engraver, repeats: max(repeats, 20))
    return 0
}

/// The seed's bar: a 4-part, 100-measure song with words laid out (no
/// import, no SVG) in under 50 ms — BWV 40.8 (20 measures of 4/4, four
/// parts, words, fermatas) five times over; and a random song of the same
/// size with every kind of note, tuplet and mark (far denser than a choir
/// prints) beside it.
func layoutAlone(engraver: Engraver, repeats: Int) throws {
    guard let file = ShippedFiles.path("Songs/bach-bwv40.8-freuet-euch-ihr-christen.acasong", installed: "share/acapella/songs/bach-bwv40.8-freuet-euch-ihr-christen.acasong")
    else { throw CLIError("the shipped song bach-bwv40.8 is missing", exitCode: 1) }
    let chorale = try loadScore(file)
    var score = chorale
    let length = chorale.endTick
    for pass in 1..<5 {
        for (index, part) in chorale.parts.enumerated() {
            score.parts[index].notes += part.notes.map { note in
                var moved = note
                moved.startTick += pass * length
                return moved
            }
        }
    }
    try time(score, "BWV 40.8 ×5: 4 parts, 100 measures")
    var rng = SplitMix64(seed: 100)
    try time(ScoreGenerator.random(using: &rng, options: ScoreGenerator.Options(parts: 4, measures: 100)), "random, 4 parts, 100 measures",
             goal: "a stress denser than any choir prints: no goal")

    func time(_ score: Score, _ name: String, goal: String = "goal: under 50 ms") throws {
        let clock = ContinuousClock()
        var best = Double.infinity
        var systems = 0
        for _ in 0..<repeats {
            let time = try clock.measure { systems = try engraver.engrave(score).systems.count }
            best = min(best, seconds(time))
        }
        let notes = score.parts.reduce(0) { $0 + $1.notes.count }
        print("  layout alone, " + name + String(format: " (%d notes, %d systems): %6.1f ms, best of %d (", notes, systems, best * 1000, repeats) + goal + ")")
    }
}

/// LilyPond's time on each file (musicxml2ly, then lilypond to PDF), once;
/// nil where it is not installed or fails.
func lilypondTimes(_ paths: [String]) -> [Double?] {
    guard capture(["lilypond", "--version"]) != nil, capture(["musicxml2ly", "--version"]) != nil else { return paths.map { _ in nil } }
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("acapella-bench-lilypond-\(getpid())").path
    try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let clock = ContinuousClock()
    return paths.map { path in
        let ly = folder + "/score.ly"
        var ok = true
        let time = clock.measure {
            ok = capture(["musicxml2ly", "--output", ly, path]) != nil
                && capture(["lilypond", "-dno-point-and-click", "--loglevel=ERROR", "-o", folder + "/score", ly]) != nil
                && FileManager.default.fileExists(atPath: folder + "/score.pdf")
        }
        try? FileManager.default.removeItem(atPath: folder + "/score.pdf")
        return ok ? seconds(time) : nil
    }
}
