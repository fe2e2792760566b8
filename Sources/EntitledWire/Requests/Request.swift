import EntitledCore

/// A decoded, validated request: everything an operation needs, typed.
public enum Request: Sendable {
    case ping
    case grant(Grant)
    case check(AccessQuery)
    case claim(device: String, user: String)
    case revoke(MembershipID, reason: String?)
    /// List what `subject` sees; statuses are computed at `moment` (now if `nil`).
    case memberships(Subject, moment: Timestamp?)
    case define(entitlement: String, products: [String])
    case catalog
    /// Write a snapshot of the whole state now (an admin operation).
    case snapshot

    /// The operation's name on the wire.
    public var op: Operation {
        switch self {
        case .ping: return .ping
        case .grant: return .grant
        case .check: return .check
        case .claim: return .claim
        case .revoke: return .revoke
        case .memberships: return .memberships
        case .define: return .define
        case .catalog: return .catalog
        case .snapshot: return .snapshot
        }
    }

    /// The operations, by their names on the wire.
    public enum Operation: String, Sendable, CaseIterable {
        case ping, grant, check, claim, revoke, memberships, define, catalog, snapshot
    }
}

extension Request.Operation {
    /// The operation whose name is exactly these UTF-8 bytes.
    ///
    /// Matched in place rather than through `init(rawValue:)`: building the String and the standard
    /// library's string switch cost about 700 instructions of a check's 8,000 in callgrind.
    init?(utf8 name: UnsafeRawBufferPointer) {
        guard !name.isEmpty else { return nil }
        let candidate: Self
        switch (name.count, name[0]) {
        case (4, UInt8(ascii: "p")): candidate = .ping
        case (5, UInt8(ascii: "c")): candidate = name[1] == UInt8(ascii: "h") ? .check : .claim
        case (5, UInt8(ascii: "g")): candidate = .grant
        case (6, UInt8(ascii: "r")): candidate = .revoke
        case (6, UInt8(ascii: "d")): candidate = .define
        case (7, UInt8(ascii: "c")): candidate = .catalog
        case (8, UInt8(ascii: "s")): candidate = .snapshot
        case (11, UInt8(ascii: "m")): candidate = .memberships
        default: return nil
        }
        guard candidate.wireName.isSpelled(by: name) else { return nil }
        self = candidate
    }

    /// `rawValue`, as a static string for byte comparisons.
    var wireName: StaticString {
        switch self {
        case .ping: return "ping"
        case .grant: return "grant"
        case .check: return "check"
        case .claim: return "claim"
        case .revoke: return "revoke"
        case .memberships: return "memberships"
        case .define: return "define"
        case .catalog: return "catalog"
        case .snapshot: return "snapshot"
        }
    }
}
