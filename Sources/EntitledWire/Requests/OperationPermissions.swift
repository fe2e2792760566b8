/// Which operations a connection may run, and how it is refused the others: `unauthorized` before it
/// authenticates, `forbidden` when its role does not cover the operation.
///
/// A bit set rather than a `Set`: the decoder consults it for every request, checks included.
public struct OperationPermissions: Sendable, Hashable {
    private var allowed: UInt32
    /// The code of a refusal: `unauthorized` or `forbidden`.
    public let refusalCode: ErrorCode

    /// Permits `operations` and refuses every other with `refusalCode`.
    public init(allowing operations: some Sequence<Request.Operation>, refusalCode: ErrorCode) {
        allowed = operations.reduce(0) { $0 | Self.bit($1) }
        self.refusalCode = refusalCode
    }

    /// Every operation: a server without authentication, or an `admin` connection.
    public static let everything = OperationPermissions(allowing: Request.Operation.allCases, refusalCode: .forbidden)

    /// Whether `operation` is allowed.
    @inline(__always)
    public func allows(_ operation: Request.Operation) -> Bool {
        allowed & Self.bit(operation) != 0
    }

    /// The operations allowed, in the order `Request.Operation` lists them.
    public var operations: [Request.Operation] { Request.Operation.allCases.filter(allows) }

    /// The error that refuses `operation`, or `nil` when it is allowed.
    @inline(__always)
    func refusal(of operation: Request.Operation) -> WireError? {
        allows(operation) ? nil : refusalError(of: operation)
    }

    private func refusalError(of operation: Request.Operation) -> WireError {
        let permitted = operations.map(\.rawValue).joined(separator: ", ")
        if refusalCode == .unauthorized {
            return WireError(
                .unauthorized,
                "\(operation.rawValue) needs authentication: send {\"op\":\"auth\",\"token\":\"...\"} first; until then only \(permitted) are answered"
            )
        }
        return WireError(
            refusalCode, "this connection's role may not run \(operation.rawValue); it may run \(permitted)"
        )
    }

    @inline(__always)
    private static func bit(_ operation: Request.Operation) -> UInt32 {
        UInt32(1) << UInt32(operation.bitIndex)
    }
}

extension Request.Operation {
    /// A small number for each operation, 0 up to the number of operations: an index for tables of
    /// counters (the server's statistics). Stable within a build, not part of the wire contract.
    @inline(__always)
    public var ordinal: Int { bitIndex }

    /// A stable small number for each operation, for `OperationPermissions`' bit set (at most 32).
    var bitIndex: Int {
        switch self {
        case .ping: 0
        case .grant: 1
        case .check: 2
        case .claim: 3
        case .revoke: 4
        case .memberships: 5
        case .define: 6
        case .catalog: 7
        case .snapshot: 8
        case .event: 9
        case .customer: 10
        case .history: 11
        case .watch: 12
        case .unwatch: 13
        case .hello: 14
        case .auth: 15
        case .stats: 16
        case .reload: 17
        case .undefine: 18
        case .erase: 19
        case .extend: 20
        case .changes: 21
        case .export: 22
        }
    }
}
