import Foundation
import Testing

/// Every Swift file the documents name (`ServingLoop.swift`, `Writing/GroupCommit.swift`) exists. The
/// documents walk a request through the files (ARCHITECTURE.md) and point at the code that does what they
/// describe; a file renamed, split or moved by a refactoring must take its mentions with it.
@Suite("Documented source files")
struct DocumentedSourceFileTests {
    @Test func everySwiftFileAMarkdownDocumentNamesExists() throws {
        let root = MarkdownLinkTests.packageRoot
        let sourceFiles = Self.swiftFiles(under: root)
        var missing: [String] = []
        for document in try MarkdownDocument.all(under: root) {
            let text = try String(contentsOf: document.url, encoding: .utf8)
            for name in Self.namedSwiftFiles(in: text) where !Self.matches(name, sourceFiles) {
                missing.append("\(document.relativePath): \(name)")
            }
        }
        #expect(missing.isEmpty, "named but not found:\n\(missing.joined(separator: "\n"))")
    }

    @Test func aNameIsFoundByItsOwnPathOrByItsTail() {
        let files = ["Sources/EntitledServer/Writing/GroupCommit.swift", "Package.swift"]
        #expect(Self.matches("GroupCommit.swift", files))
        #expect(Self.matches("Writing/GroupCommit.swift", files))
        #expect(Self.matches("Package.swift", files))
        #expect(!Self.matches("Reactor/GroupCommit.swift", files))
        #expect(!Self.matches("ServingLoop+Ring.swift", files))
        #expect(!Self.matches("Commit.swift", files), "a name matches whole path components only")
        #expect(Self.namedSwiftFiles(in: "see `ServingLoop+Ring.swift`, `A/B.swift` and `x.swiftmodule`") == ["ServingLoop+Ring.swift", "A/B.swift"])
    }

    /// The `…swift` names in code spans of `text`.
    static func namedSwiftFiles(in text: String) -> [String] {
        let pattern = /`([A-Za-z0-9+_.\/-]+\.swift)`/
        return text.matches(of: pattern).map { String($0.output.1) }
    }

    /// Whether `name` is a file of `files` (paths from the package root), whole path components compared.
    static func matches(_ name: String, _ files: [String]) -> Bool {
        files.contains { $0 == name || $0.hasSuffix("/" + name) }
    }

    /// Every `.swift` file below `root`, as paths from it.
    static func swiftFiles(under root: URL) -> [String] {
        RepositoryFiles.urls(under: root, endingWith: ".swift").map { String($0.path.dropFirst(root.path.count + 1)) }
    }
}
