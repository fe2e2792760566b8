/// Which server a load talks to, and so which protocol it writes.
enum Target: String, Sendable, Codable, CaseIterable {
    case entitled
    case redis
}

/// What a measured load sends.
enum OperationMix: String, Sendable, Codable, CaseIterable {
    /// Only checks: entitled `check` of entitlement `pro`, Redis `SISMEMBER ents:<user> pro`.
    case checks
    /// 95% checks and 5% grants (entitled `grant` of `prod_pro`, Redis `SADD ents:<user> pro`).
    case mixed

    var grantPercent: Int { self == .mixed ? 5 : 0 }
}

/// One request of a load, as it will be answered.
enum RequestKind: Sendable {
    case check
    case grant
}

/// Writes the requests of both protocols straight into a connection's outgoing bytes, user number as
/// twelve zero-padded digits (`000000012345`, the key shape `redis-benchmark -r` draws, so its runs hit
/// the same keys), and classifies answers without parsing them. Nothing here allocates per request.
struct LoadRequests {
    let target: Target

    private static let entitledCheckHead = Array(#"{"op":"check","user":""#.utf8)
    private static let entitledCheckTail = Array((#"","entitlement":"pro"}"# + "\n").utf8)
    private static let entitledGrantHead = Array(#"{"op":"grant","user":""#.utf8)
    private static let entitledGrantTail = Array((#"","product":"prod_pro"}"# + "\n").utf8)
    private static let redisCheckHead = Array("*3\r\n$9\r\nSISMEMBER\r\n$17\r\nents:".utf8)
    private static let redisGrantHead = Array("*3\r\n$4\r\nSADD\r\n$17\r\nents:".utf8)
    private static let redisTail = Array("\r\n$3\r\npro\r\n".utf8)

    /// Appends the request of `kind` for user number `user` to `bytes`.
    func append(_ kind: RequestKind, user: Int, to bytes: inout [UInt8]) {
        switch (target, kind) {
        case (.entitled, .check):
            bytes += Self.entitledCheckHead
            Self.appendDigits(user, to: &bytes)
            bytes += Self.entitledCheckTail
        case (.entitled, .grant):
            bytes += Self.entitledGrantHead
            Self.appendDigits(user, to: &bytes)
            bytes += Self.entitledGrantTail
        case (.redis, .check):
            bytes += Self.redisCheckHead
            Self.appendDigits(user, to: &bytes)
            bytes += Self.redisTail
        case (.redis, .grant):
            bytes += Self.redisGrantHead
            Self.appendDigits(user, to: &bytes)
            bytes += Self.redisTail
        }
    }

    /// How an answer line (without its newline) to a request of `kind` turned out. Both servers answer
    /// these requests with one line each.
    func classify(_ line: UnsafeRawBufferPointer, kind: RequestKind) -> AnswerKind {
        switch target {
        case .entitled:
            if line.starts(with: #"{"ok":true,"active":false"#) { return .inactive }
            return line.starts(with: #"{"ok":true"#) ? .success : .failure
        case .redis:
            if line.starts(with: ":1") { return .success }
            if line.starts(with: ":0") { return kind == .check ? .inactive : .success }
            return .failure
        }
    }

    /// Twelve decimal digits, zero-padded.
    @inline(__always)
    static func appendDigits(_ value: Int, to bytes: inout [UInt8]) {
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (48, 48, 48, 48, 48, 48, 48, 48, 48, 48, 48, 48)
        var remaining = value
        withUnsafeMutableBytes(of: &digits) { raw in
            var index = 11
            while remaining > 0 && index >= 0 {
                raw[index] = UInt8(48 + remaining % 10)
                remaining /= 10
                index -= 1
            }
            bytes.append(contentsOf: raw)
        }
    }
}
