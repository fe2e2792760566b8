import Foundation
import Testing

@testable import EntitledStorage

/// The documents name the data directory's format version the code writes: a new version must update
/// README.md and Protocol/STORAGE.md with it.
@Suite struct DocumentedFormatVersionTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func text(_ path: String) throws -> String {
        try String(contentsOf: packageRoot.appendingPathComponent(path), encoding: .utf8)
    }

    /// Every number `pattern`'s first group captures in `text`.
    static func numbers(_ pattern: String, in text: String) throws -> [Int] {
        let expression = try NSRegularExpression(pattern: pattern)
        return expression.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap {
            Range($0.range(at: 1), in: text).flatMap { Int(text[$0]) }
        }
    }

    @Test func theLogAndTheSnapshotsAreWrittenInOneVersion() {
        #expect(LogFormat.version == SnapshotFormat.version)
    }

    @Test func readmeAndStorageNameTheVersionTheCodeWrites() throws {
        let written = Int(LogFormat.version)
        let storage = try Self.text("Protocol/STORAGE.md")
        let readme = try Self.text("README.md")
        let statements = [
            ("STORAGE.md title", try Self.numbers(#"^# The `entitled` data directory, format version (\d+)"#, in: storage)),
            ("STORAGE.md 'writes format version'", try Self.numbers(#"The server writes format version (\d+)"#, in: storage)),
            ("STORAGE.md header tables", try Self.numbers(#"Format version: `(\d+)` in the files this server writes"#, in: storage)),
            ("STORAGE.md 'This server writes version'", try Self.numbers(#"This server writes version (\d+)"#, in: storage)),
            ("README.md", try Self.numbers(#"the data directory's format (\d+)"#, in: readme)),
        ]
        for (place, versions) in statements {
            #expect(!versions.isEmpty, "\(place): the statement is gone; update this test with the document")
            #expect(versions.allSatisfy { $0 == written }, "\(place) says \(versions), the code writes \(written)")
        }
    }
}
