/// Why a MusicXML file could not be imported: one line, with where.
public struct ImportError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong.
    public var message: String
    /// The file, when known.
    public var file: String?
    /// 1-based line in the XML document, when known.
    public var line: Int?
    /// 1-based column, when known.
    public var column: Int?

    /// An import error.
    public init(_ message: String, file: String? = nil, line: Int? = nil, column: Int? = nil) {
        self.message = message
        self.file = file
        self.line = line
        self.column = column
    }

    /// `FILE:LINE:COL: error: MESSAGE`.
    public var description: String {
        var origin = file ?? "<musicxml>"
        if let line {
            origin += ":\(line)"
            if let column { origin += ":\(column)" }
        }
        return "\(origin): error: \(message)"
    }
}
