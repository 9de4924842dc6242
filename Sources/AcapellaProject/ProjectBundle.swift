internal import CZip
import Foundation

/// A project as one file to carry away: a zip of its folder as a reader
/// sees it — the manifest, the song and every finished take with its
/// sidecar, under `NAME.acaproj/`. A take still being recorded is left out
/// (it is not whole yet). Audio is stored, text compressed.
public enum ProjectBundle {
    /// Writes the bundle of `project` (opened for reading) to `output`;
    /// a partial file is removed on failure.
    public static func write(_ project: Project, to output: String) throws(ProjectError) {
        let folder = (project.path as NSString).lastPathComponent
        var files = ["manifest.json", "score.acasong"]
        for take in project.manifest.takes where take.state != .recording {
            files.append(take.file)
            let sidecar = (take.file as NSString).deletingPathExtension + ".json"
            if FileManager.default.fileExists(atPath: project.path + "/" + sidecar) { files.append(sidecar) }
        }
        var code: Int32 = 0
        guard let archive = zip_open(output, ZIP_CREATE | ZIP_TRUNCATE, &code) else {
            throw ProjectError(description: "\(output): cannot make the bundle (libzip error \(code))")
        }
        func fail(_ what: String) -> ProjectError {
            let why = String(cString: zip_strerror(archive))
            zip_discard(archive)
            unlink(output)
            return ProjectError(description: "\(output): \(what): \(why)")
        }
        for file in files {
            guard let source = zip_source_file(archive, project.path + "/" + file, 0, -1) else { throw fail("cannot read \(file)") }
            let index = zip_file_add(archive, folder + "/" + file, source, zip_flags_t(ZIP_FL_ENC_UTF_8))
            guard index >= 0 else {
                zip_source_free(source)
                throw fail("cannot add \(file)")
            }
            if file.hasSuffix(".wav") { zip_set_file_compression(archive, zip_uint64_t(index), ZIP_CM_STORE, 0) }
        }
        guard zip_close(archive) == 0 else { throw fail("cannot write") }
    }
}
