import AcapellaBox
import AcapellaCLI
import AcapellaEngrave
import AcapellaMusicXML
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
                    let score = try MusicXML.importScore(bytes: bytes, fileName: path).score
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
    let output = capture(["python3", "-c", script, String(repeats)] + paths)
    // One line per file: seconds, or "unreadable" when verovio cannot load it.
    let peer: [Double?] = output.map { text in text.split(separator: "\n").filter { Double($0) != nil || $0 == "unreadable" }.map { Double($0) } } ?? []
    print("bench engrave: \(names.count) files, MusicXML → layout → SVG, best of \(repeats)")
    print("  file".padding(toLength: 44, withPad: " ", startingAt: 0) + "acapella    verovio     ratio")
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
        print(line)
    }
    if peer.count == names.count {
        print("  faster than verovio on \(faster) of the \(names.count - unreadable) files it reads (goal: all)"
              + (unreadable > 0 ? "; \(unreadable) it cannot read" : ""))
    } else {
        print("  verovio   not installed (pip install verovio for the side-by-side figures)")
    }
    return 0
}
