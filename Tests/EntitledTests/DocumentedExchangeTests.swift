import EntitledTestSupport
import Foundation
import Testing

/// The README's shown exchanges are what a server answers today: each request of its sessions is sent
/// to a real server on a new data directory, and each answer must match the line shown, with membership
/// ids mapped to the ones this server made, times masked and `...` standing for anything.
@Suite("The README's exchanges against a real server")
struct DocumentedExchangeTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// One line of a shown exchange.
    enum Line {
        case request(String, watcher: Bool)
        case answer(String, watcher: Bool)
    }

    /// The lines of the first `text` code block after `heading` that holds requests (`> `).
    static func exchange(after heading: String, in document: String) throws -> [Line] {
        let start = try #require(document.range(of: heading)).upperBound
        var rest = document[start...]
        while let open = rest.range(of: "```text\n") {
            let body = rest[open.upperBound...]
            let close = try #require(body.range(of: "```"))
            let lines = body[..<close.lowerBound].split(separator: "\n").map(String.init)
            rest = body[close.upperBound...]
            guard lines.contains(where: { $0.hasPrefix("> ") || $0.hasPrefix("(watcher) > ") }) else { continue }
            // A plain answer is the answer to the request before it, on that request's connection; a line
            // marked (watcher) without `>` is pushed to the watcher.
            var lastRequestWasWatcher = false
            return lines.compactMap { line in
                if line.hasPrefix("$ ") { return nil }
                if line.hasPrefix("(watcher) > ") {
                    lastRequestWasWatcher = true
                    return .request(String(line.dropFirst(12)), watcher: true)
                }
                if line.hasPrefix("(watcher) ") { return .answer(String(line.dropFirst(10)), watcher: true) }
                if line.hasPrefix("> ") {
                    lastRequestWasWatcher = false
                    return .request(String(line.dropFirst(2)), watcher: false)
                }
                return .answer(line, watcher: lastRequestWasWatcher)
            }
        }
        Issue.record("no exchange after \(heading)")
        return []
    }

    /// A connection read a line at a time.
    final class LineConnection {
        let descriptor: Int32
        var buffered: [UInt8] = []

        init(port: Int) throws { descriptor = try LoopbackSocket.connect(port: port, receiveTimeoutSeconds: 10) }
        deinit { close(descriptor) }

        func send(_ line: String) {
            let bytes = Array(line.utf8) + [10]
            _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        }

        func readLine() -> String? {
            var chunk = [UInt8](repeating: 0, count: 65536)
            while !buffered.contains(10) {
                let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                guard count > 0 else { return nil }
                buffered += chunk[0..<count]
            }
            let end = buffered.firstIndex(of: 10)!
            defer { buffered.removeFirst(end + 1) }
            return String(decoding: buffered[..<end], as: UTF8.self)
        }
    }

    /// Matches shown answers against real ones, learning which real id each shown id stands for.
    struct Matcher {
        var ids: [String: String] = [:]
        static let id = try! NSRegularExpression(pattern: #"mem_[0-9a-z]{13}"#)
        static let time = #"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,3})?Z"#

        /// `line` with the shown ids it knows replaced by the real ones.
        func substituted(_ line: String) -> String {
            ids.reduce(line) { $0.replacingOccurrences(of: $1.key, with: $1.value) }
        }

        /// Whether `actual` is what `shown` shows; learns the ids `shown` names for the first time.
        mutating func matches(_ shown: String, _ actual: String) -> Bool {
            var pattern = "^"
            var newIDs: [String] = []
            var index = shown.startIndex
            let timeExpression = try! NSRegularExpression(pattern: Self.time)
            while index < shown.endIndex {
                let rest = String(shown[index...])
                let range = NSRange(rest.startIndex..., in: rest)
                if rest.hasPrefix("...") {
                    pattern += ".*?"
                    index = shown.index(index, offsetBy: 3)
                } else if let match = Self.id.firstMatch(in: rest, range: range), match.range.location == 0 {
                    let shownID = String(rest.prefix(match.range.length))
                    if let known = ids[shownID] {
                        pattern += NSRegularExpression.escapedPattern(for: known)
                    } else if let at = newIDs.firstIndex(of: shownID) {
                        pattern += "\\\(at + 1)"
                    } else {
                        newIDs.append(shownID)
                        pattern += "(mem_[0-9a-z]{13})"
                    }
                    index = shown.index(index, offsetBy: match.range.length)
                } else if let match = timeExpression.firstMatch(in: rest, range: range), match.range.location == 0 {
                    pattern += Self.time
                    index = shown.index(index, offsetBy: match.range.length)
                } else {
                    pattern += NSRegularExpression.escapedPattern(for: String(shown[index]))
                    index = shown.index(after: index)
                }
            }
            pattern += "$"
            guard let expression = try? NSRegularExpression(pattern: pattern),
                let match = expression.firstMatch(in: actual, range: NSRange(actual.startIndex..., in: actual))
            else { return false }
            for (offset, shownID) in newIDs.enumerated() {
                if let range = Range(match.range(at: offset + 1), in: actual) { ids[shownID] = String(actual[range]) }
            }
            return true
        }
    }

    @Test func theFirstSessionAndSubscriptionsOverTimeAreAnsweredAsShown() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let sessions = [try Self.exchange(after: "## A first session", in: readme), try Self.exchange(after: "### Subscriptions over time", in: readme)]
        #expect(sessions.allSatisfy { $0.count > 10 })
        let server = try RunningEntitled()
        let main = try LineConnection(port: server.port)
        let watcher = try LineConnection(port: server.port)
        var matcher = Matcher()
        for session in sessions {
            for line in session {
                switch line {
                case .request(let request, let isWatcher):
                    (isWatcher ? watcher : main).send(matcher.substituted(request))
                case .answer(let shown, let isWatcher):
                    let actual = (isWatcher ? watcher : main).readLine() ?? "(no answer)"
                    let matched = matcher.matches(shown, actual)
                    #expect(matched, "shown:  \(shown)\nserved: \(actual)")
                }
            }
        }
    }
}
