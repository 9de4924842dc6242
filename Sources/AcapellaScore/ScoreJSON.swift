extension Score {
    /// The score as JSON: the stable shape `acapella dump --json` prints and
    /// outside tools read (documented in docs/reference/json.md). Keys keep this order.
    public func jsonText() -> String {
        let json = JSONWriter()
        json.object {
            json.field("title") { json.string(title) }
            json.field("composer") { json.string(composer) }
            json.field("arranger") { json.string(arranger) }
            json.field("source") { json.string(source) }
            json.field("license") { json.string(license) }
            json.field("tags") { json.array(tags) { json.string($0) } }
            json.field("ppq") { json.number(ticksPerQuarter) }
            json.field("pickupTicks") { json.number(pickupTicks) }
            json.field("meterMap") {
                json.array(meters) { change in
                    json.object {
                        json.field("measure") { json.number(change.measure) }
                        json.field("num") { json.number(change.meter.numerator) }
                        json.field("den") { json.number(change.meter.denominator) }
                        if let symbol = change.symbol { json.field("symbol") { json.string(symbol.rawValue) } }
                        if !change.printed { json.field("printed") { json.raw("false") } }
                    }
                }
            }
            json.field("keyMap") {
                json.array(keys) { change in
                    json.object {
                        json.field("measure") { json.number(change.measure) }
                        json.field("fifths") { json.number(change.key.fifths) }
                        json.field("mode") { json.string(change.key.mode.rawValue) }
                        json.field("name") { json.string(change.key.description) }
                    }
                }
            }
            json.field("tempoMap") {
                json.array(tempos) { change in
                    json.object {
                        json.field("tick") { json.number(change.tick) }
                        json.field("bpm") { json.raw(change.tempo.description) }
                        if !change.printed { json.field("printed") { json.raw("false") } }
                    }
                }
            }
            json.field("measures") {
                json.number(endTick == 0 ? 0 : meterMap.measure(containing: endTick - 1))
            }
            json.field("writtenMeasures") {
                if writtenMeasures.isEmpty { json.raw("null") } else { json.array(writtenMeasures) { json.number($0) } }
            }
            json.field("verses") { json.number(verseCount) }
            json.field("parts") {
                json.array(parts) { part in
                    json.object {
                        json.field("name") { json.string(part.name) }
                        json.field("shortName") { json.string(part.displayShortName) }
                        json.field("clef") { json.string(part.effectiveClef.rawValue) }
                        let verses = (0..<max(1, verseCount)).map { part.syllabics(verse: $0 + 1) }
                        json.field("notes") {
                            json.array(Array(part.notes.indices), multiline: true) { index in
                                jsonNote(part.notes[index], syllabics: verses.map { $0[index] }, into: json)
                            }
                        }
                    }
                }
            }
            if let subtitle { json.field("subtitle") { json.string(subtitle) } }
            if !texts.isEmpty {
                json.field("texts") {
                    json.array(texts) { text in
                        json.object {
                            json.field("tick") { json.number(text.tick) }
                            json.field("kind") { json.string(text.kind.rawValue) }
                            json.field("text") { json.string(text.text) }
                        }
                    }
                }
            }
            if !barMarks.isEmpty {
                json.field("barMarks") {
                    json.array(barMarks) { mark in
                        json.object {
                            json.field("measure") { json.number(mark.measure) }
                            switch mark.kind {
                            case .repeatStart: json.field("kind") { json.string("repeatStart") }
                            case .repeatEnd(let times):
                                json.field("kind") { json.string("repeatEnd") }
                                json.field("times") { json.number(times) }
                            case .ending(let numbers, let measures):
                                json.field("kind") { json.string("ending") }
                                json.field("numbers") { json.array(numbers) { json.number($0) } }
                                json.field("measures") { json.number(measures) }
                            default:
                                json.field("kind") { json.string(BarMark.signWords.first { $0.0 == mark.kind }?.1) }
                            }
                        }
                    }
                }
            }
        }
        return json.text + "\n"
    }

    private func jsonNote(_ note: NoteEvent, syllabics: [Syllabic?], into json: JSONWriter) {
        json.object {
            json.field("start") { json.number(note.startTick) }
            json.field("duration") { json.number(note.durationTicks) }
            json.field("midi") { if let pitch = note.pitch { json.number(pitch.midi) } else { json.raw("null") } }
            json.field("pitch") { json.string(note.pitch?.description) }
            json.field("tie") { json.raw(note.tieToNext ? "true" : "false") }
            if let tuplet = note.tuplet {
                json.field("tuplet") { json.raw("[\(tuplet.actual),\(tuplet.normal)]") }
            }
            func syllable(_ verse: Int) {
                if let lyric = note.lyric(verse: verse) {
                    json.object {
                        json.field("text") { json.string(lyric.text) }
                        json.field("syllabic") { json.string(syllabics[verse - 1]?.rawValue) }
                    }
                } else {
                    json.raw("null")
                }
            }
            json.field("lyric") { syllable(1) }
            if syllabics.count > 1 {
                json.field("lyrics") { json.array(Array(1...syllabics.count)) { syllable($0) } }
            }
            if !note.marks.isEmpty {
                // The `.acasong` words of its marks: "fermata", "p", "<", "(" …
                json.field("marks") { json.array(Acasong.markTokens(note.marks)) { json.string(String($0.dropFirst())) } }
            }
        }
    }
}

/// A minimal streaming JSON writer: enough for the dump, with correct string
/// escaping, no Foundation. A class, because nested writes happen inside the
/// closures of enclosing ones. Arrays marked `multiline` put one element per
/// line (the dump's notes), everything else stays compact.
final class JSONWriter {
    private struct Container {
        var multiline: Bool
        var count = 0
    }

    private(set) var text = ""
    private var containers: [Container] = []
    private var afterKey = false

    /// Separator and line break before a value in the current container.
    private func beginValue() {
        if afterKey {
            afterKey = false
            return
        }
        guard !containers.isEmpty else { return }
        if containers[containers.count - 1].count > 0 { text += "," }
        if containers[containers.count - 1].multiline { text += "\n" + String(repeating: "  ", count: containers.count) }
        containers[containers.count - 1].count += 1
    }

    func raw(_ value: String) {
        beginValue()
        text += value
    }

    func number(_ value: Int) { raw(String(value)) }

    func string(_ value: String?) {
        guard let value else { return raw("null") }
        var escaped = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                escaped += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        raw(escaped + "\"")
    }

    func object(_ body: () -> Void) {
        beginValue()
        text += "{"
        containers.append(Container(multiline: false))
        body()
        containers.removeLast()
        text += "}"
    }

    func field(_ name: String, _ value: () -> Void) {
        beginValue()
        text += "\"\(name)\":"
        afterKey = true
        value()
    }

    func array<Element>(_ elements: [Element], multiline: Bool = false, _ body: (Element) -> Void) {
        beginValue()
        text += "["
        containers.append(Container(multiline: multiline))
        for element in elements { body(element) }
        containers.removeLast()
        if multiline && !elements.isEmpty { text += "\n" + String(repeating: "  ", count: containers.count) }
        text += "]"
    }
}
