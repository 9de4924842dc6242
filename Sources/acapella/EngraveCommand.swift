import AcapellaBox
import AcapellaCLI
import AcapellaEngrave
import AcapellaEngravePDF
import AcapellaProject
import AcapellaScore
import Foundation

func runEngrave(_ arguments: ParsedArguments) throws -> Int32 {
    guard let output = arguments.value("--output") else { throw CLIError("engrave needs -o OUT.svg or OUT.pdf") }
    let pdf = output.lowercased().hasSuffix(".pdf")
    guard pdf || output.lowercased().hasSuffix(".svg") else {
        throw CLIError("\(output): engrave writes .svg (for the screen) or .pdf (pages to print)")
    }
    var options = EngraveOptions()
    if let parts = arguments.value("--part") {
        let names = parts.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        guard !names.isEmpty, !names.contains(where: \.isEmpty) else { throw CLIError("--part expects part names separated by commas, not '\(parts)'") }
        options.parts = names
    }
    if arguments.value("--verse") != nil { options.verse = try arguments.int("--verse", default: 1, range: 1...Score.maximumVerses) }
    options.highlight = arguments.value("--highlight")
    options.closed = arguments.flags.contains("--closed")
    switch arguments.value("--page") ?? "a4" {
    case "a4": break
    case "letter": options.letter()
    case let other: throw CLIError("--page expects a4 or letter, not '\(other)'")
    }
    if let width = arguments.value("--width") {
        guard let value = Double(width), value.isFinite, (60.0...1000.0).contains(value) else {
            throw CLIError("--width expects millimetres from 60 to 1000, not '\(width)'")
        }
        options.pageWidthMM = value
    }
    let source = arguments.positionals[0]
    // Printed as written: repeats as signs, not written out, unless asked.
    var imported = try importOptions(arguments)
    imported.unfold = imported.unfold ?? false
    let score = try loadScore(source, options: imported)
    let engraver: Engraver, fontFile: String, textFiles: TextFontFiles
    do { (engraver, fontFile, textFiles) = try ShippedFiles.engraver() } catch { throw CLIError(error.description, exitCode: 1) }
    let engraving: Engraving
    do {
        engraving = try engraver.engrave(score, options: options)
    } catch {
        throw CLIError("\(source): \(error.description)", exitCode: 1)
    }
    if pdf {
        do {
            try PDFWriter.write(engraving.pages, staffSpaceMM: engraving.staffSpaceMM, fontFile: fontFile, textFonts: textFiles, to: output)
        } catch {
            throw CLIError(error.description, exitCode: 1)
        }
    }
    func fontSource(_ file: String) throws -> SVGWriter.FontSource {
        guard arguments.flags.contains("--embed-font") else { return .url(URL(fileURLWithPath: file).absoluteString) }
        guard let bytes = FileManager.default.contents(atPath: file) else { throw CLIError("\(file): cannot read the font", exitCode: 1) }
        return .embedded([UInt8](bytes))
    }
    if !pdf {
        let text = SVGWriter.TextFontSource(family: textFiles.family, faces: try ShippedFiles.textFaces.compactMap { face in
            try textFiles.files[face.style].map { (face.style, try fontSource($0)) }
        })
        let svg = SVGWriter.svg(engraving.scroll, staffSpaceMM: engraving.staffSpaceMM, fontName: engraving.fontName, font: try fontSource(fontFile), text: text)
        do {
            try AtomicFile.write(Array(svg.utf8), to: output)
        } catch {
            throw CLIError(error.description, exitCode: 1)
        }
    }
    if let timemap = arguments.value("--timemap") {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            try AtomicFile.write(Array(try encoder.encode(engraving.timeMap)), to: timemap)
        } catch {
            throw CLIError("\(timemap): \(error)", exitCode: 1)
        }
    }
    let notes = engraving.notes.filter { $0.staffPosition != nil }.count
    let parts = options.parts?.count ?? score.parts.count
    let pages = pdf ? ", \(engraving.pages.count) page\(engraving.pages.count == 1 ? "" : "s")" : ""
    print("wrote \(output): \(engraving.systems.count) system\(engraving.systems.count == 1 ? "" : "s"), \(notes) notes, \(parts) part\(parts == 1 ? "" : "s")" + pages)
    return 0
}

func runPageScore(_ arguments: ParsedArguments) throws -> Int32 {
    if arguments.flags.contains("--background") { _ = nice(10) }
    guard let part = arguments.value("--part"), let folder = arguments.value("--out") else { throw CLIError("page-score needs --part NAME and --out DIR") }
    var widthMM: Double?
    if let width = arguments.value("--width") {
        guard let value = Double(width), value.isFinite, (60.0...1000.0).contains(value) else {
            throw CLIError("--width expects millimetres from 60 to 1000, not '\(width)'")
        }
        widthMM = value
    }
    let source = arguments.positionals[0]
    let score = try loadScore(source, options: importOptions(arguments))
    guard score.parts.contains(where: { $0.name == part }) else {
        throw CLIError("\(source): no part named '\(part)'; the parts are: " + score.parts.map(\.name).joined(separator: ", "))
    }
    let engraver: Engraver
    do { engraver = try ShippedFiles.engraver().engraver } catch { throw CLIError(error.description, exitCode: 1) }
    let said: String
    do { said = try WebHub.engravePage(score, part: part, engraver: engraver, widthMM: widthMM, into: folder) } catch {
        throw CLIError("\(source): \(error)", exitCode: 1)
    }
    print(said + String(format: "; peak %.0f MB", Double(ProcessStatus.read()["VmHWM"] ?? 0) / 1_024))
    return 0
}
