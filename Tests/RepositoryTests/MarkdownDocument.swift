import Foundation

/// A Markdown file of the repository, read for its links and its headings' anchors. Only what the link
/// check needs: inline links `[text](target)` outside fenced code blocks and inline code, and ATX headings.
struct MarkdownDocument {
    struct Link {
        let target: String
        let line: Int
    }

    let url: URL
    let root: URL
    let links: [Link]
    /// The anchors GitHub gives the headings, `-1`, `-2` ... for repeats.
    let anchors: Set<String>

    var relativePath: String { String(url.path.dropFirst(root.path.count + 1)) }

    init(url: URL, root: URL) throws {
        self.url = url.standardizedFileURL
        self.root = root.standardizedFileURL
        let text = try String(contentsOf: url, encoding: .utf8)
        var links: [Link] = []
        var anchors: Set<String> = []
        var inFence = false
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.drop { $0 == " " }
            if trimmed.hasPrefix("```") || trimmed.hasPrefix("~~~") {
                inFence.toggle()
                continue
            }
            if inFence { continue }
            if trimmed.hasPrefix("#") {
                let title = trimmed.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces)
                var anchor = Self.anchor(of: title)
                if anchors.contains(anchor) {
                    var count = 1
                    while anchors.contains("\(anchor)-\(count)") { count += 1 }
                    anchor = "\(anchor)-\(count)"
                }
                anchors.insert(anchor)
            }
            links += Self.linkTargets(in: Self.withoutInlineCode(String(line))).map { Link(target: $0, line: index + 1) }
        }
        self.links = links
        self.anchors = anchors
    }

    /// GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces as hyphens.
    static func anchor(of title: String) -> String {
        var anchor = ""
        for character in title.lowercased() {
            if character.isLetter || character.isNumber || character == "-" || character == "_" {
                anchor.append(character)
            } else if character == " " {
                anchor.append("-")
            }
        }
        return anchor
    }

    /// The line with its `inline code` spans removed: a link written as code is an example, not a link.
    private static func withoutInlineCode(_ line: String) -> String {
        var result = ""
        var inCode = false
        for character in line {
            if character == "`" { inCode.toggle(); continue }
            if !inCode { result.append(character) }
        }
        return result
    }

    /// The targets of `[text](target)` links (and images) on a line, without an optional `"title"`.
    private static func linkTargets(in line: String) -> [String] {
        var targets: [String] = []
        var rest = Substring(line)
        while let close = rest.range(of: "](") {
            let after = rest[close.upperBound...]
            guard let end = after.firstIndex(of: ")") else { break }
            let target = after[..<end].split(separator: " ").first.map(String.init) ?? ""
            if !target.isEmpty { targets.append(target) }
            rest = after[end...]
        }
        return targets
    }

    /// Every Markdown file under `root`, build folders and hidden folders excluded.
    static func all(under root: URL) throws -> [MarkdownDocument] {
        try RepositoryFiles.urls(under: root, endingWith: ".md").map { try MarkdownDocument(url: $0, root: root) }
    }
}
