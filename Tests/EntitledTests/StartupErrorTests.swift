import EntitledTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Starts that fail, on the real executable: a one-line message naming the cause and the fix, nothing left
/// behind that the start created, and nothing of anyone else's touched.
@Suite struct StartupErrorTests {
    /// Runs `entitled` with `arguments` in `directory`, expecting it to fail; returns its stderr.
    static func failedStart(_ arguments: [String], in directory: TemporaryDirectory) throws -> String {
        let process = ServerProcess(arguments: arguments, workingDirectory: directory.path)
        let status = try process.runToExit()
        let errors = process.standardErrorText()
        #expect(status == 1, "\(errors)")
        #expect(!process.standardOutputText().contains("listening on"))
        return errors
    }

    static func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    @Test func aMetricsPortInUseNamesThePortAndTheFlagAndLeavesNoDataDirectory() throws {
        let directory = try TemporaryDirectory()
        let occupied = try SilentListener()
        let errors = try Self.failedStart(
            ["--port", "0", "--metrics-port", String(occupied.port), "--data-dir", "fresh/data"], in: directory
        )
        let line = try #require(errors.split(separator: "\n").first { $0.contains("cannot serve metrics") }.map(String.init), "\(errors)")
        #expect(line.contains("127.0.0.1:\(occupied.port)"), "\(line)")
        #expect(line.contains("already in use"), "\(line)")
        #expect(line.contains("--metrics-port"), "\(line)")
        // The data directory, and the parent the start made for it, are gone again.
        #expect(!Self.exists(directory.path + "/fresh"))
    }

    @Test func aProtocolPortInUseLeavesNoDataDirectoryTheStartCreatedAndKeepsOneThatExisted() throws {
        let directory = try TemporaryDirectory()
        let occupied = try SilentListener()
        _ = try Self.failedStart(["--port", String(occupied.port), "--data-dir", "created"], in: directory)
        #expect(!Self.exists(directory.path + "/created"))

        let existing = directory.path + "/existing"
        try FileManager.default.createDirectory(atPath: existing, withIntermediateDirectories: false)
        try "keep me".write(toFile: existing + "/note.txt", atomically: true, encoding: .utf8)
        _ = try Self.failedStart(["--port", String(occupied.port), "--data-dir", "existing"], in: directory)
        #expect(Self.exists(existing))
        #expect(try String(contentsOfFile: existing + "/note.txt", encoding: .utf8) == "keep me")
    }

    @Test func aSocketPathThatIsARegularFileIsRefusedAndTheFileLeftAlone() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/important.txt"
        let content = "not a socket: someone's data\n"
        try content.write(toFile: path, atomically: true, encoding: .utf8)
        let errors = try Self.failedStart(["--port", "0", "--socket", path, "--data-dir", "data"], in: directory)
        let line = try #require(errors.split(separator: "\n").first { $0.contains("not a socket") }.map(String.init), "\(errors)")
        #expect(line.contains("--socket \(path) is a regular file, not a socket"), "\(line)")
        #expect(line.contains("left alone"), "\(line)")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == content)
        #expect(!Self.exists(directory.path + "/data"))
    }
}
