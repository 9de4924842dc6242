/// The byte offset of the first byte that is not valid UTF-8, or nil when
/// all are. The standard library's validator answers the common case fast;
/// the bytes are walked only to locate the fault in a known-bad input.
public func firstInvalidUTF8Offset(in bytes: [UInt8]) -> Int? {
    if String(validating: bytes, as: UTF8.self) != nil { return nil }
    var iterator = bytes.makeIterator()
    var parser = Unicode.UTF8.ForwardParser()
    var offset = 0
    while case .valid(let scalar) = parser.parseScalar(from: &iterator) { offset += scalar.count }
    return offset
}
