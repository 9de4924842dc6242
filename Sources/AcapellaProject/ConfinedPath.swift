import AcapellaScore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Paths from outside — a manifest's file names, a bundle's entries, a USB
/// stick's folders, a command's output — checked before anything is opened
/// or written: a relative path is confined under its root (no `..`, no
/// absolute path, no symbolic link on the way out), and nothing but the
/// project itself writes inside a project.
public enum ConfinedPath {
    /// Why a path was refused, in one line.
    public struct Refusal: Error, CustomStringConvertible, Equatable, Sendable {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    /// `relative` under `root`, or a refusal: empty, absolute, with a `.` or
    /// `..` component or an empty one, a control character, or a component
    /// that is a symbolic link (a link could lead anywhere). Components that
    /// do not exist yet are fine (a file about to be written).
    public static func resolve(_ relative: String, under root: String) -> Result<String, Refusal> {
        guard !relative.isEmpty else { return .failure(Refusal("an empty path")) }
        guard !relative.hasPrefix("/") else { return .failure(Refusal("'\(printable(relative))' is an absolute path; only a path inside \(printable(root)) is allowed")) }
        guard !relative.unicodeScalars.contains(where: SafeText.isControl) else {
            return .failure(Refusal("'\(printable(relative))' has a control character in it"))
        }
        let components = relative.split(separator: "/", omittingEmptySubsequences: false)
        guard !components.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else {
            return .failure(Refusal("'\(printable(relative))' leaves its folder (an empty, '.' or '..' component)"))
        }
        var path = root
        for component in components {
            path += "/" + component
            var status = stat()
            if lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFLNK {
                return .failure(Refusal("'\(printable(relative))': \(printable(String(component))) is a symbolic link; links are not followed"))
            }
        }
        return .success(path)
    }

    /// The project (a `.acaproj` folder, or a folder holding a manifest and
    /// takes) that `path` would be inside once symbolic links are resolved,
    /// or nil. The path need not exist: its nearest existing folder is
    /// resolved and looked at, with each folder above it.
    public static func owningProject(of path: String) -> String? {
        var existing = (path as NSString).standardizingPath
        if !existing.hasPrefix("/") { existing = FileManager.default.currentDirectoryPath + "/" + existing }
        while existing != "/", realPath(existing) == nil { existing = (existing as NSString).deletingLastPathComponent }
        guard var folder = realPath(existing) else { return nil }
        var isFolder: ObjCBool = false
        if !(FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) && isFolder.boolValue) {
            folder = (folder as NSString).deletingLastPathComponent
        }
        while true {
            if isProject(folder) { return folder }
            if folder == "/" || folder.isEmpty { return nil }
            folder = (folder as NSString).deletingLastPathComponent
        }
    }

    /// Whether `folder` is a project package.
    public static func isProject(_ folder: String) -> Bool {
        if folder.hasSuffix(".acaproj") { return true }
        var isFolder: ObjCBool = false
        return FileManager.default.fileExists(atPath: folder + "/manifest.json")
            && FileManager.default.fileExists(atPath: folder + "/takes", isDirectory: &isFolder) && isFolder.boolValue
    }

    /// Refuses an output path a command was given when it lies inside a
    /// project (a take, the manifest, the song, a sidecar: the project's own
    /// files, written only by the project) or is one of the command's own
    /// inputs.
    public static func checkOutput(_ path: String, inputs: [String] = []) -> Refusal? {
        // A device or a pipe is no file: an output is written beside its name
        // and renamed over it, which would put a file where the device was
        // (as root, /dev/full itself) and say it was written. (A folder is
        // what some outputs are: `import-project --into`.)
        var status = stat()
        if stat(path, &status) == 0, ![S_IFREG, S_IFDIR].contains(status.st_mode & S_IFMT) {
            return Refusal("\(printable(path)): a device or a pipe, not a file; give the name of a file to write")
        }
        if let project = owningProject(of: path) {
            return Refusal("\(printable(path)): inside the project \(printable(project)); a project's files are written only by the project (takes, song, manifest): write it elsewhere")
        }
        let output = realPath(path)
        if let output, inputs.contains(where: { realPath($0) == output }) {
            return Refusal("\(printable(path)): that is the command's own input; write it elsewhere")
        }
        return nil
    }

    /// `path` with symbolic links resolved, when it exists.
    static func realPath(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }

    /// Text from outside made safe to print on a terminal or in a log
    /// (`SafeText.printable`).
    public static func printable(_ text: String) -> String { SafeText.printable(text) }
}
