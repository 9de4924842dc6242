internal import CZip
import AcapellaScore

/// Reads the score out of a compressed MusicXML (`.mxl`) file: a zip whose
/// `META-INF/container.xml` names the root file.
///
/// Zip bombs are refused: every read stops at a byte limit, whatever sizes
/// the archive declares (those can lie).
enum MXLArchive {
    /// Most bytes taken from any one member.
    static let maximumMemberBytes = ScoreLimits.maximumFileBytes
    /// Most members an archive may list.
    static let maximumEntries = 10_000

    /// The root score document's bytes and its path inside the archive.
    static func rootDocument(in archive: [UInt8]) throws(ImportError) -> (path: String, bytes: [UInt8]) {
        try withArchive(archive) { (zip) throws(ImportError) in
            let entries = zip_get_num_entries(zip, 0)
            if entries > Int64(maximumEntries) {
                throw ImportError("the .mxl archive lists \(entries) files; refusing more than \(maximumEntries)")
            }
            let container = try read(member: "META-INF/container.xml", from: zip, limit: 1 << 20)
            guard let rootPath = ContainerXML.rootFilePath(container) else {
                throw ImportError("META-INF/container.xml names no rootfile")
            }
            return (rootPath, try read(member: rootPath, from: zip, limit: maximumMemberBytes))
        }
    }

    private static func withArchive<T>(_ archive: [UInt8], _ body: (OpaquePointer) throws(ImportError) -> T) throws(ImportError) -> T {
        var error = zip_error_t()
        zip_error_init(&error)
        defer { zip_error_fini(&error) }
        // libzip keeps a pointer to the bytes; they stay alive for the call.
        let result = archive.withUnsafeBytes { (raw) -> Result<T, ImportError> in
            guard let base = raw.baseAddress, let source = zip_source_buffer_create(base, zip_uint64_t(raw.count), 0, &error) else {
                return .failure(ImportError("not a zip archive (empty)"))
            }
            guard let zip = zip_open_from_source(source, Int32(ZIP_RDONLY), &error) else {
                zip_source_free(source)
                return .failure(ImportError("not a valid .mxl (zip) file: \(String(cString: zip_error_strerror(&error)))"))
            }
            defer { zip_discard(zip) }
            do throws(ImportError) {
                return .success(try body(zip))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private static func read(member name: String, from zip: OpaquePointer, limit: Int) throws(ImportError) -> [UInt8] {
        let index = zip_name_locate(zip, name, 0)
        guard index >= 0 else { throw ImportError("the .mxl archive has no '\(name)'") }
        guard let file = zip_fopen_index(zip, zip_uint64_t(index), 0) else {
            throw ImportError("cannot open '\(name)' in the .mxl archive (damaged or encrypted)")
        }
        defer { zip_fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { zip_fread(file, $0.baseAddress!, zip_uint64_t($0.count)) }
            if count < 0 { throw ImportError("'\(name)' in the .mxl archive is damaged") }
            if count == 0 { break }
            bytes += chunk[0..<Int(count)]
            if bytes.count > limit {
                throw ImportError("'\(name)' in the .mxl archive unpacks to more than \(limit >> 20) MiB; refusing (zip bomb?)")
            }
        }
        return bytes
    }
}
