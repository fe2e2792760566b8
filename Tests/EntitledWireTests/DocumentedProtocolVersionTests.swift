import EntitledWire
import Foundation
import Testing

/// PROTOCOL.md names the protocol version `hello` answers: a new version must update the document with it.
@Suite struct DocumentedProtocolVersionTests {
    @Test func protocolMDNamesTheVersionHelloAnswers() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let document = try String(contentsOf: root.appendingPathComponent("Protocol/PROTOCOL.md"), encoding: .utf8)
        let statements = [
            #"contract for \*\*protocol version (\d+)\*\*"#, #"This document is version (\d+)\."#,
            #"The protocol version: `(\d+)` for this document"#, #"\{"ok":true,"id":"hello-1","protocol":(\d+),"#,
        ]
        for pattern in statements {
            let expression = try NSRegularExpression(pattern: pattern)
            let versions = expression.matches(in: document, range: NSRange(document.startIndex..., in: document)).compactMap {
                Range($0.range(at: 1), in: document).flatMap { Int(document[$0]) }
            }
            #expect(!versions.isEmpty, "PROTOCOL.md no longer says \(pattern); update this test with the document")
            #expect(versions.allSatisfy { $0 == protocolVersion }, "PROTOCOL.md (\(pattern)) says \(versions); hello answers \(protocolVersion)")
        }
    }
}
