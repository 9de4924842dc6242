import AcapellaProject
import AcapellaScore
import Foundation
import Testing

/// Paths and text from outside, confined and made safe before use.
@Suite struct ConfinementTests {
    func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("confine-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path + "/takes", withIntermediateDirectories: true)
        return path
    }

    /// A relative path stays under its root: no absolute path, no `..`, `.`
    /// or empty component, no control character, no link on the way.
    @Test func relativePathsStayUnderTheirRoot() throws {
        let root = try folder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(try ConfinedPath.resolve("takes/a.wav", under: root).get() == root + "/takes/a.wav")
        for bad in ["", "/etc/passwd", "takes/../../x", "takes/./a.wav", "takes//a.wav", "../x", "takes/a\u{1B}.wav", "takes/a\u{202E}.wav"] {
            #expect(throws: ConfinedPath.Refusal.self, "\(bad)") { try ConfinedPath.resolve(bad, under: root).get() }
        }
        try FileManager.default.createSymbolicLink(atPath: root + "/takes/link.wav", withDestinationPath: "/etc/hostname")
        try FileManager.default.createSymbolicLink(atPath: root + "/elsewhere", withDestinationPath: "/tmp")
        #expect(throws: ConfinedPath.Refusal.self) { try ConfinedPath.resolve("takes/link.wav", under: root).get() }
        #expect(throws: ConfinedPath.Refusal.self) { try ConfinedPath.resolve("elsewhere/x", under: root).get() }
    }

    /// A path inside a project (directly, through a link, or not yet
    /// existing) is found to be; a path beside it is not.
    @Test func outputsInsideAProjectAreFound() throws {
        let root = try folder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let project = try Project.create(at: root + "/p.acaproj", songText: try String(contentsOfFile: "Songs/simple-harmony.acasong", encoding: .utf8))
        project.close()
        try FileManager.default.createSymbolicLink(atPath: root + "/link", withDestinationPath: root + "/p.acaproj/takes")
        #expect(ConfinedPath.owningProject(of: root + "/p.acaproj/takes/bass-1.wav") == root + "/p.acaproj")
        #expect(ConfinedPath.owningProject(of: root + "/p.acaproj/score.acasong") == root + "/p.acaproj")
        #expect(ConfinedPath.owningProject(of: root + "/link/new/deeper.wav") == root + "/p.acaproj")
        #expect(ConfinedPath.owningProject(of: root + "/mix.wav") == nil)
        #expect(ConfinedPath.checkOutput(root + "/p.acaproj/manifest.json")?.description.contains("inside the project") == true)
        _ = FileManager.default.createFile(atPath: root + "/song.acasong", contents: Data("x".utf8))
        #expect(ConfinedPath.checkOutput(root + "/song.acasong", inputs: [root + "/song.acasong"])?.description.contains("own input") == true)
        #expect(ConfinedPath.checkOutput(root + "/out.wav", inputs: [root + "/song.acasong"]) == nil)
    }

    /// Control characters shown as escapes, the rest untouched.
    @Test func controlCharactersPrintAsEscapes() {
        #expect(SafeText.printable("plain ünïcode ♩") == "plain ünïcode ♩")
        #expect(SafeText.printable("a\u{1B}]2;x\u{7}b") == "a\\u{1b}]2;x\\u{7}b")
        #expect(SafeText.printable("r\u{202E}l\u{9B}") == "r\\u{202e}l\\u{9b}")
        #expect(Project.nameProblem("choir\nhymn.acaproj") != nil && Project.nameProblem("Hymn (4 parts).acaproj") == nil)
    }
}
