/// Which server a load talks to, and so which protocol it writes.
enum Target: String, Sendable, Codable, CaseIterable {
    case entitled, redis
}

/// What a measured load sends: only checks (entitled `check` of entitlement `pro`, Redis `SISMEMBER
/// ents:<user> pro`), or 95% checks and 5% grants (entitled `grant` of `prod_pro`, a new membership each
/// time; Redis `SADD ents:<user> g<n>`, a new member each time: `appendMixedGrant`).
enum OperationMix: String, Sendable, Codable, CaseIterable {
    case checks, mixed

    var grantPercent: Int { self == .mixed ? 5 : 0 }
}

enum RequestKind: Sendable {
    case check, grant
}

/// The requests of both protocols, written straight into bytes with the user number as twelve zero-padded
/// digits (`000000012345`, the key shape `redis-benchmark -r` draws).
struct LoadRequests: Sendable {
    let target: Target

    /// Appends the request of `kind` for user number `user` to `bytes`.
    func append(_ kind: RequestKind, user: Int, to bytes: inout [UInt8]) {
        switch (target, kind) {
        case (.entitled, .check): bytes += Array(#"{"op":"check","user":""#.utf8)
        case (.entitled, .grant): bytes += Array(#"{"op":"grant","user":""#.utf8)
        case (.redis, .check): bytes += Array("*3\r\n$9\r\nSISMEMBER\r\n$17\r\nents:".utf8)
        case (.redis, .grant): bytes += Array("*3\r\n$4\r\nSADD\r\n$17\r\nents:".utf8)
        }
        Self.appendDigits(user, to: &bytes)
        switch (target, kind) {
        case (.entitled, .check): bytes += Array(#"","entitlement":"pro"}"#.utf8) + [10]
        case (.entitled, .grant): bytes += Array(#"","product":"prod_pro"}"#.utf8) + [10]
        case (.redis, _): bytes += Array("\r\n$3\r\npro\r\n".utf8)
        }
    }

    /// A grant of the mixed load for user number `user`: a real write on both servers. entitled's `grant`
    /// always creates a membership; Redis's would be `SADD ents:<user> pro` for a user who holds `pro`
    /// already, which adds nothing, logs nothing and syncs nothing, so the mix compared entitled's real
    /// writes with none. Its member is `g` and the generator's counter (`############`, replaced by the
    /// next number each time the request is sent), new every time.
    func appendMixedGrant(user: Int, to bytes: inout [UInt8]) {
        guard target == .redis else { return append(.grant, user: user, to: &bytes) }
        bytes += Array("*3\r\n$4\r\nSADD\r\n$17\r\nents:".utf8)
        Self.appendDigits(user, to: &bytes)
        bytes += Array("\r\n$13\r\ng############\r\n".utf8)
    }

    /// Whether an answer line (without its newline) to a grant is a success, read from its first bytes.
    func grantSucceeded(_ line: UnsafeRawBufferPointer) -> Bool {
        target == .entitled ? line.starts(with: #"{"ok":true"#) : line.starts(with: ":1") || line.starts(with: ":0")
    }

    /// Twelve decimal digits, zero-padded.
    static func appendDigits(_ value: Int, to bytes: inout [UInt8]) {
        let start = bytes.count
        bytes += Array(repeating: 48, count: 12)
        var (remaining, index) = (value, start + 11)
        while remaining > 0 && index >= start {
            bytes[index] = UInt8(48 + remaining % 10)
            remaining /= 10
            index -= 1
        }
    }
}

extension Array where Element == UInt8 {
    /// Appends a non-negative integer in decimal, in place (no String in between).
    mutating func appendDecimal(_ value: Int) {
        let first = count
        var rest = value
        repeat {
            append(UInt8(48 + rest % 10))
            rest /= 10
        } while rest > 0
        self[first...].reverse()
    }
}
