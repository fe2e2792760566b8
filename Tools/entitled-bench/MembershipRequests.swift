import Foundation

/// The request giving one user one membership, for the memory command, in the protocol of the target:
///
/// - entitled: `{"op":"grant","user":"<12 digits>","product":"prod_pro","source":"app_store","expiresAt":"…"}`;
///   its answer must start with `{"ok":true`.
/// - Redis: one hash per user with the fields of that membership, `HSET m:<12 digits> id <16 hex> product
///   prod_pro user <12 digits> source app_store created_at <ms> expires_at <ms>`; its answer must be `:6`
///   (six new fields).
struct MembershipRequests: Sendable {
    let target: Target
    private let entitledTail: [UInt8]
    private let redisExpiresField: [UInt8]

    /// - Parameter expiresAt: when every membership ends (entitled's `expiresAt`, Redis's `expires_at`).
    init(target: Target, expiresAt: Date) {
        self.target = target
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        entitledTail = Array((#"","product":"prod_pro","source":"app_store","expiresAt":""# + formatter.string(from: expiresAt) + "\"}\n").utf8)
        var field = Array("\r\n$10\r\nexpires_at".utf8)
        Self.appendBulk(Int(expiresAt.timeIntervalSince1970) * 1000, to: &field)
        redisExpiresField = field + [13, 10]
    }

    /// Whether `line` answers one of these requests as a success.
    func accepts(_ line: UnsafeRawBufferPointer) -> Bool {
        target == .entitled ? line.starts(with: #"{"ok":true"#) : line.count == 3 && line.starts(with: ":6\r")
    }

    /// A writer for one connection, with random ids of its own for Redis.
    func writer(seed: UInt64) -> PipelinedLoader.RequestWriter {
        var random = Xorshift(seed: seed ^ UInt64(truncatingIfNeeded: Int(Date().timeIntervalSince1970 * 1000)))
        return { user, bytes in append(user: user, random: &random, to: &bytes) }
    }

    private static let entitledHead = Array(#"{"op":"grant","user":""#.utf8)
    private static let redisHead = Array("*14\r\n$4\r\nHSET\r\n$14\r\nm:".utf8)
    private static let redisAfterKey = Array("\r\n$2\r\nid\r\n$16\r\n".utf8)
    private static let redisAfterId = Array("\r\n$7\r\nproduct\r\n$8\r\nprod_pro\r\n$4\r\nuser\r\n$12\r\n".utf8)
    private static let redisAfterUser = Array("\r\n$6\r\nsource\r\n$9\r\napp_store\r\n$10\r\ncreated_at".utf8)
    private static let hexDigits = Array("0123456789abcdef".utf8)

    private func append(user: Int, random: inout Xorshift, to bytes: inout [UInt8]) {
        switch target {
        case .entitled:
            bytes += Self.entitledHead
            LoadRequests.appendDigits(user, to: &bytes)
            bytes += entitledTail
        case .redis:
            bytes += Self.redisHead
            LoadRequests.appendDigits(user, to: &bytes)
            bytes += Self.redisAfterKey
            // 64 random bits, as entitled's membership ids hold, in 16 hex digits.
            let id = random.next()
            for shift in stride(from: 60, through: 0, by: -4) { bytes.append(Self.hexDigits[Int((id >> UInt64(shift)) & 0xF)]) }
            bytes += Self.redisAfterId
            LoadRequests.appendDigits(user, to: &bytes)
            bytes += Self.redisAfterUser
            Self.appendBulk(Int(Date().timeIntervalSince1970 * 1000), to: &bytes)
            bytes += redisExpiresField
        }
    }

    /// `\r\n$<length>\r\n<decimal>`: a number as the next bulk string of a RESP array.
    private static func appendBulk(_ value: Int, to bytes: inout [UInt8]) {
        bytes += [13, 10, UInt8(ascii: "$")]
        bytes.appendDecimal(String(value).utf8.count)
        bytes += [13, 10]
        bytes.appendDecimal(value)
    }
}
