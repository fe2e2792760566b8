import Foundation
import Testing

@testable import EntitledConsole

/// The file of `export ... to FILE`: written under a temporary name, mode 0600, and renamed to FILE only
/// once complete; a failed export leaves nothing, and a FILE that was there stays as it was.
@Suite struct ExportFileTests {
    /// A new empty directory, removed at the end of the test.
    final class Directory {
        let path: String
        init() throws {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("export-file-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        }
        deinit { try? FileManager.default.removeItem(atPath: path) }

        var entries: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() }
    }

    func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test func theLinesGoToAHiddenTemporaryFileAndAreRenamedToTheFileWhenComplete() throws {
        let directory = try Directory()
        let path = directory.path + "/export.jsonl"
        let file = try ExportFile(path: path)
        try file.write([#"{"export":{"seq":1}}"#, #"{"membership":{"id":"m1"}}"#])
        try file.write([#"{"membership":{"id":"m2"}}"#])
        // Until the export is complete, the file is not there; its temporary one is, beside it, mode 0600.
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(file.temporaryPath.hasPrefix(directory.path + "/.export.jsonl.export-"))
        #expect(directory.entries == [String(file.temporaryPath.dropFirst(directory.path.count + 1))])
        #expect(try mode(file.temporaryPath) == 0o600)
        try file.finish()
        #expect(directory.entries == ["export.jsonl"])
        #expect(try String(contentsOfFile: path, encoding: .utf8) == #"{"export":{"seq":1}}"# + "\n" + #"{"membership":{"id":"m1"}}"# + "\n" + #"{"membership":{"id":"m2"}}"# + "\n")
        #expect(try mode(path) == 0o600)
    }

    @Test func aDiscardedExportLeavesNoFileAndAnEarlierFileAsItWas() throws {
        let directory = try Directory()
        let path = directory.path + "/export.jsonl"
        try "the export of yesterday\n".write(toFile: path, atomically: false, encoding: .utf8)
        let file = try ExportFile(path: path)
        try file.write(["half"])
        file.discard()
        #expect(directory.entries == ["export.jsonl"])
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "the export of yesterday\n")
        // A file dropped without being finished (the command failed another way) is removed as well.
        var dropped: ExportFile? = try ExportFile(path: directory.path + "/other.jsonl")
        try dropped?.write(["half"])
        dropped = nil
        #expect(directory.entries == ["export.jsonl"])
    }

    @Test func aCompleteExportReplacesAnEarlierFileAndMakesIt0600() throws {
        let directory = try Directory()
        let path = directory.path + "/export.jsonl"
        try "old\n".write(toFile: path, atomically: false, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        let file = try ExportFile(path: path)
        try file.write(["new"])
        try file.finish()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "new\n")
        #expect(try mode(path) == 0o600)
    }

    @Test func aPathThatCannotBeWrittenFailsAtOnceNamingWhy() throws {
        let directory = try Directory()
        #expect(throws: ExportFailure.cannotWrite(path: directory.path, reason: "it is a directory; name a file in it")) {
            try ExportFile(path: directory.path)
        }
        #expect(throws: ExportFailure.cannotWrite(path: directory.path + "/", reason: "it is a directory; name a file in it")) {
            try ExportFile(path: directory.path + "/")
        }
        let missing = directory.path + "/no/such/dir/x.jsonl"
        #expect(
            throws: ExportFailure.cannotWrite(path: missing, reason: "cannot create a file in \(directory.path)/no/such/dir: no such file or directory")
        ) {
            try ExportFile(path: missing)
        }
        #expect(directory.entries == [])
    }

    @Test func aRelativePathIsCreatedInTheWorkingDirectory() {
        #expect(ExportFile.split("x.jsonl") == ("", "x.jsonl"))
        #expect(ExportFile.split("/tmp/x.jsonl") == ("/tmp/", "x.jsonl"))
        #expect(ExportFile.split("/x.jsonl") == ("/", "x.jsonl"))
        #expect(ExportFile.split("out/") == ("out/", ""))
    }
}
