public import Foundation

// Settings and manifests are hand-edited: every problem is one line that
// names the file and the key, built from the decoder's coding path.

extension DecodingError {
    /// `KEY.PATH: what`, in words, for a one-line error naming the key
    /// (`midi.bindings[2].note: expected a whole number`).
    public var located: String { describe.oneLine }

    private var describe: String {
        switch self {
        case .typeMismatch(let type, let context):
            return "\(Self.path(context.codingPath)): expected \(DecodingError.words(for: type))"
        case .valueNotFound(let type, let context):
            return "\(Self.path(context.codingPath)): expected \(DecodingError.words(for: type)), found null"
        case .keyNotFound(let key, let context):
            return "\(Self.path(context.codingPath + [key])): missing"
        case .dataCorrupted(let context):
            let detail = context.debugDescription.contains("does not fit") ? "the number is out of range"
                : context.underlyingError != nil || context.debugDescription.hasPrefix("The given data was not valid JSON") ? "not valid JSON (truncated or damaged)"
                : context.debugDescription
            return context.codingPath.isEmpty ? detail : "\(Self.path(context.codingPath)): \(detail)"
        @unknown default:
            return "\(self)"
        }
    }

    /// `midi.bindings[2].note` for a coding path; `(top)` for the root.
    public static func path(_ keys: [any CodingKey]) -> String {
        var text = ""
        for key in keys {
            if let index = key.intValue, key.stringValue.hasPrefix("Index") || Int(key.stringValue) == index {
                text += "[\(index)]"
            } else {
                text += (text.isEmpty ? "" : ".") + key.stringValue
            }
        }
        return text.isEmpty ? "(top)" : text
    }

    static func words(for type: Any.Type) -> String {
        switch type {
        case is Int.Type, is Int64.Type, is Int32.Type, is UInt16.Type, is UInt8.Type: "a whole number"
        case is Double.Type, is Float.Type: "a number"
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        default:
            "\(type)".hasPrefix("Array") ? "a list" : "\(type)".hasPrefix("Dictionary") ? "an object" : "\(type)"
        }
    }
}

/// Any key, for looking at the keys an object really has.
public struct AnyCodingKey: CodingKey, Sendable {
    public var stringValue: String
    public var intValue: Int?
    public init(stringValue: String) { self.stringValue = stringValue }
    public init(intValue: Int) {
        stringValue = "Index \(intValue)"
        self.intValue = intValue
    }
}

extension Decoder {
    /// Throws at the first key of the object being decoded that `Keys`
    /// does not know: a misspelt setting is an error, never ignored.
    public func rejectUnknownKeys<Keys: CodingKey & CaseIterable>(_ keys: Keys.Type) throws {
        let container = try container(keyedBy: AnyCodingKey.self)
        let known = Keys.allCases.map(\.stringValue)
        for key in container.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) where !known.contains(key.stringValue) {
            throw DecodingError.dataCorrupted(.init(
                codingPath: codingPath + [key], debugDescription: "unknown key; known: \(known.joined(separator: ", "))"))
        }
    }
}

extension KeyedDecodingContainer {
    /// A whole number in `range`, or nil when the key is absent.
    public func decodeIfPresent(_ key: Key, in range: ClosedRange<Int>) throws -> Int? {
        guard let value = try decodeIfPresent(Int.self, forKey: key) else { return nil }
        guard range.contains(value) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "expected a whole number from \(range.lowerBound) to \(range.upperBound), not \(value)")
        }
        return value
    }

    /// A string from `choices`, or nil when the key is absent.
    public func decodeIfPresent(_ key: Key, oneOf choices: [String]) throws -> String? {
        guard let value = try decodeIfPresent(String.self, forKey: key) else { return nil }
        guard choices.contains(value) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "expected " + choices.map { "\"\($0)\"" }.joined(separator: ", ") + ", not '\(value)'")
        }
        return value
    }
}

/// Hand-edited JSON files read and written one way.
public enum JSONFile {
    /// Decodes `data`; a problem is one line, `FILE: KEY: what`. A key
    /// given twice in one object is a problem too (JSON decoders keep the
    /// last silently, so one of two foot switches would just vanish).
    public static func decode<Value: Decodable>(_ type: Value.Type, from data: Data, file: String) -> Result<Value, JSONFileError> {
        if let path = duplicateKey(in: data) { return .failure(JSONFileError(description: "\(file): \(path): given twice".oneLine)) }
        do {
            return .success(try JSONDecoder().decode(type, from: data))
        } catch let error as DecodingError {
            return .failure(JSONFileError(description: "\(file): \(explain(error, in: data))"))
        } catch {
            return .failure(JSONFileError(description: "\(file): not valid JSON"))
        }
    }

    /// The first key given twice in one object (`midi.bindings[2].note`),
    /// or nil: a scan of the text (strings with their escapes, nesting), so
    /// it sees what a decoder's dictionary has already merged away.
    public static func duplicateKey(in data: Data) -> String? {
        let bytes = [UInt8](data)
        // Per open container: its keys so far (nil for a list) and its path; the key of the value being read.
        var stack: [(keys: Set<String>?, path: String, index: Int)] = []
        var pendingKey: String?
        var expectKey = false
        var index = 0
        func childPath() -> String {
            guard let top = stack.last else { return "" }
            if top.keys != nil { return top.path.isEmpty ? (pendingKey ?? "") : top.path + "." + (pendingKey ?? "") }
            return top.path + "[\(top.index)]"
        }
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                var end = index + 1
                var text: [UInt8] = []
                while end < bytes.count, bytes[end] != UInt8(ascii: "\"") {
                    if bytes[end] == UInt8(ascii: "\\"), end + 1 < bytes.count { text.append(bytes[end]); end += 1 }
                    text.append(bytes[end])
                    end += 1
                }
                if expectKey, stack.last?.keys != nil {
                    // Escapes decoded, so "a" and "\u0061" are one key.
                    let raw = "\"" + String(decoding: text, as: UTF8.self) + "\""
                    let key = (try? JSONSerialization.jsonObject(with: Data(raw.utf8), options: [.fragmentsAllowed]) as? String) ?? String(decoding: text, as: UTF8.self)
                    if stack[stack.count - 1].keys!.contains(key) {
                        let path = stack[stack.count - 1].path
                        return (path.isEmpty ? key : path + "." + key).oneLine
                    }
                    stack[stack.count - 1].keys!.insert(key)
                    pendingKey = key
                    expectKey = false
                }
                index = end + 1
                continue
            case UInt8(ascii: "{"):
                stack.append((keys: [], path: childPath(), index: 0))
                expectKey = true
            case UInt8(ascii: "["):
                stack.append((keys: nil, path: childPath(), index: 0))
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if !stack.isEmpty { stack.removeLast() }
                expectKey = false
            case UInt8(ascii: ","):
                if let top = stack.last {
                    if top.keys != nil { expectKey = true } else { stack[stack.count - 1].index += 1 }
                }
            default:
                break
            }
            index += 1
        }
        return nil
    }

    /// `error.located`, except where the decoder says "not valid JSON" for
    /// valid JSON (it does for a whole number too large for its type, and
    /// names no key): then the number and its key.
    public static func explain(_ error: DecodingError, in data: Data) -> String {
        guard case .dataCorrupted(let context) = error, context.codingPath.isEmpty,
              let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]),
              let (path, number) = hugeNumber(in: object, path: "")
        else { return error.located }
        return "\(path.isEmpty ? "(top)" : path): \(number) is out of range".oneLine
    }

    /// The first number (keys in sorted order) that no whole-number field can hold.
    static func hugeNumber(in value: Any, path: String) -> (String, String)? {
        if let object = value as? [String: Any] {
            for key in object.keys.sorted() {
                if let found = hugeNumber(in: object[key]!, path: path.isEmpty ? key : path + "." + key) { return found }
            }
        } else if let list = value as? [Any] {
            for (index, item) in list.enumerated() {
                if let found = hugeNumber(in: item, path: path + "[\(index)]") { return found }
            }
        } else if let number = value as? NSNumber, !(value is Bool), String(cString: number.objCType) != "c" {
            let double = number.doubleValue
            if double.isFinite, double == double.rounded(), abs(double) >= 9.2e18 { return (path, number.stringValue) }
        }
        return nil
    }

    /// The text for `value`: sorted keys, indented, a final newline.
    public static func encode<Value: Encodable>(_ value: Value) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return ((try? encoder.encode(value)) ?? Data("{}".utf8)) + Data([10])
    }
}

/// A problem with a hand-edited JSON file, in one line naming it.
public struct JSONFileError: Error, CustomStringConvertible, Hashable, Sendable {
    /// `FILE: KEY: what is wrong`.
    public var description: String
}

extension String {
    /// This text on one line whatever a file held: control characters
    /// shown escaped (a newline as a backslash and n), and an overlong text cut.
    public var oneLine: String {
        let text = self
        var line = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": line += "\\n"
            case "\r": line += "\\r"
            case "\t": line += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F || (0x80..<0xA0).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029 {
                    line += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    line.unicodeScalars.append(scalar)
                }
            }
        }
        return line.count > 300 ? String(line.prefix(300)) + "…" : line
    }
}
