import EntitledClient
import Foundation

/// Verified notifications that name a purchase no membership holds yet (an App Store purchase made before
/// the app set `appAccountToken`, a Google Play purchase naming no account, a Stripe refund of an invoice
/// not granted yet), kept in a directory, one file each, until a grant names their original transaction: the receiver tries them again periodically and removes each once applied. A file is
/// written whole before the store is answered (temporary file, fsync, rename), so a kept notification
/// survives a crash.
public struct UnmatchedNotifications: Sendable {
    public let directory: String

    /// One kept notification.
    public struct Entry: Sendable {
        public var file: String
        public var store: String
        public var originalTransaction: String
        public var reason: String
        /// Milliseconds since the epoch.
        public var receivedAt: Int64
        public var body: [UInt8]
    }

    public init(directory: String) throws {
        self.directory = directory
        // Owner only, as the server's data directory: the notifications kept hold user ids and purchases.
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700]
        )
    }

    /// Keeps `body` (verified, as received) of `store`'s notification `id`.
    public func keep(store: String, id: String, originalTransaction: String, reason: String, body: [UInt8], now: Int64) throws {
        let record = JSONValue.object([
            ("store", .string(store)), ("originalTransactionId", .string(originalTransaction)), ("reason", .string(reason)),
            ("receivedAt", .number(String(now))), ("body", .string(Data(body).base64EncodedString())),
        ])
        let name = "\(store)-" + String(id.unicodeScalars.map { CharacterSet.alphanumerics.contains($0) || $0 == "-" ? Character($0) : "_" }) + ".json"
        let path = directory + "/" + name
        let temporary = path + ".tmp"
        let data = Data(record.jsonText.utf8)
        guard FileManager.default.createFile(atPath: temporary, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: temporary])
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: temporary))
        try handle.synchronize()
        try handle.close()
        _ = rename(temporary, path)
    }

    /// Every kept notification, oldest first.
    public func entries() -> [Entry] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix(".json") }.compactMap { name -> Entry? in
            guard let data = FileManager.default.contents(atPath: directory + "/" + name),
                let json = try? JSONValue(parsing: String(decoding: data, as: UTF8.self)), let store = json["store"]?.stringValue,
                let original = json["originalTransactionId"]?.stringValue, let encoded = json["body"]?.stringValue,
                let body = Data(base64Encoded: encoded)
            else { return nil }
            return Entry(
                file: name, store: store, originalTransaction: original, reason: json["reason"]?.stringValue ?? "",
                receivedAt: Int64(json["receivedAt"]?.stringValue ?? "") ?? Int64(json["receivedAt"]?.intValue ?? 0), body: Array(body)
            )
        }.sorted { $0.receivedAt < $1.receivedAt }
    }

    public func remove(_ entry: Entry) {
        try? FileManager.default.removeItem(atPath: directory + "/" + entry.file)
    }
}
