import Foundation
import Testing

/// Every relative link in every Markdown file of the repository leads somewhere: the file or folder exists
/// and, for a `#fragment`, the target document has a heading with that anchor (GitHub's spelling). The
/// documentation is spread over several files next to the code they describe, so a moved section must not
/// leave a dead link behind.
@Suite("Markdown links")
struct MarkdownLinkTests {
    @Test func everyRelativeLinkInEveryMarkdownFileResolves() throws {
        let documents = try MarkdownDocument.all(under: Self.packageRoot)
        #expect(documents.count >= 5, "found only \(documents.map(\.relativePath))")
        var broken: [String] = []
        for document in documents {
            for link in document.links {
                if let problem = Self.problem(with: link, in: document) {
                    broken.append("\(document.relativePath):\(link.line): \(link.target): \(problem)")
                }
            }
        }
        #expect(broken.isEmpty, "broken links:\n\(broken.joined(separator: "\n"))")
    }

    @Test func anchorsFollowGitHubsSpelling() {
        #expect(MarkdownDocument.anchor(of: "The two commands") == "the-two-commands")
        #expect(MarkdownDocument.anchor(of: "Durability benchmark") == "durability-benchmark")
        #expect(MarkdownDocument.anchor(of: "entitlectl, the admin console") == "entitlectl-the-admin-console")
        #expect(MarkdownDocument.anchor(of: "§1 `Limits` (v2)") == "1-limits-v2")
    }

    @Test func aLinkToAMissingFileOrHeadingIsReported() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("links-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try "# Here\n\n[ok](#here) [gone](missing.md) [bad](#nowhere)\n```\n[in code](ignored.md)\n```\n"
            .write(to: folder.appendingPathComponent("A.md"), atomically: true, encoding: .utf8)
        let document = try #require(try MarkdownDocument.all(under: folder).first)
        let problems = document.links.map { Self.problem(with: $0, in: document) }
        #expect(document.links.map(\.target) == ["#here", "missing.md", "#nowhere"])
        #expect(problems[0] == nil)
        #expect(problems[1] != nil)
        #expect(problems[2] != nil)
    }

    /// Why `link` does not resolve, or `nil` when it does.
    static func problem(with link: MarkdownDocument.Link, in document: MarkdownDocument) -> String? {
        let target = link.target
        if target.contains("://") || target.hasPrefix("mailto:") { return nil }
        let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
        let pathPart = String(parts[0])
        let fragment = parts.count > 1 ? String(parts[1]) : nil
        let file: URL
        if pathPart.isEmpty {
            file = document.url
        } else {
            if pathPart.hasPrefix("/") { return "an absolute path; links must be relative" }
            file = document.url.deletingLastPathComponent().appendingPathComponent(pathPart).standardizedFileURL
            guard FileManager.default.fileExists(atPath: file.path) else { return "no such file" }
        }
        guard let fragment, !fragment.isEmpty else { return nil }
        guard file.pathExtension == "md", let target = try? MarkdownDocument(url: file, root: document.root) else {
            return "a fragment on a file that is not Markdown"
        }
        return target.anchors.contains(fragment) ? nil : "no heading with the anchor #\(fragment) in \(target.relativePath)"
    }

    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
}
