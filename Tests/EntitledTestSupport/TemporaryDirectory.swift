import Foundation

/// A directory under the system's temporary directory, removed when the value is released.
public final class TemporaryDirectory: Sendable {
    public let path: String

    public init() throws {
        var template = Array((NSTemporaryDirectory() + "/entitled-test-XXXXXX").utf8CString)
        guard let created = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw TestSupportFailure(description: "mkdtemp failed: errno \(errno)")
        }
        path = String(cString: created)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// A test helper could not do its job (a process did not start, a file could not be made).
public struct TestSupportFailure: Error, CustomStringConvertible {
    public let description: String

    public init(description: String) {
        self.description = description
    }
}
