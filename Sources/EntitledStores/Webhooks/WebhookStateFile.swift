import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Where a deliverer keeps an endpoint's `WebhookEndpointState`: `<directory>/<endpoint>.json`, replaced
/// whole (a temporary file, `fsync`, rename, `fsync` of the directory), so that a crash leaves the old state
/// or the new one, never a mix. Losing the last moments' progress only delivers their messages again, with
/// the same `webhook-id`.
public struct WebhookStateFile: Sendable {
    public let path: String
    private let directory: String

    public init(directory: String, endpoint: String) {
        self.directory = directory
        self.path = directory + "/" + endpoint + ".json"
    }

    /// The state kept, or `nil` when the endpoint has none yet (its first start).
    /// - Throws: `WebhookStateError` when the file exists but cannot be read as a state.
    public func read() throws(WebhookStateError) -> WebhookEndpointState? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            return try JSONDecoder().decode(WebhookEndpointState.self, from: data)
        } catch {
            throw WebhookStateError(path: path, problem: "cannot be read as a webhook endpoint's state (\(error)); move it away to start the endpoint afresh from the newest change")
        }
    }

    /// Replaces the state kept with `state`, durably.
    public func write(_ state: WebhookEndpointState) throws(WebhookStateError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data: Data
        do { data = try encoder.encode(state) } catch { throw WebhookStateError(path: path, problem: "cannot be encoded: \(error)") }
        let temporary = path + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw WebhookStateError(path: temporary, problem: "cannot be created: \(String(cString: strerror(errno)))") }
        let written = data.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard written == data.count, synced else {
            throw WebhookStateError(path: temporary, problem: "cannot be written: \(String(cString: strerror(errno)))")
        }
        guard rename(temporary, path) == 0 else { throw WebhookStateError(path: path, problem: "cannot be replaced: \(String(cString: strerror(errno)))") }
        let directoryDescriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryDescriptor >= 0 {
            _ = fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }
}

/// A webhook endpoint's state file that cannot be read or written.
public struct WebhookStateError: Error, Sendable, Hashable, CustomStringConvertible {
    public var path: String
    public var problem: String
    public var description: String { "webhook state \(path) \(problem)" }
}
