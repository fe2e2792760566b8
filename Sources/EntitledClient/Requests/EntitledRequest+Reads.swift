extension EntitledRequest {
    /// The operations that change nothing on the server: carrying one out twice answers twice, and
    /// changes nothing twice. `EntitledPool` sends such a request again, on another node, when the
    /// connection it was sent on drops before the answer came; any other request is never sent twice.
    public static let readOperations: Set<String> = ["ping", "hello", "check", "memberships", "customer", "catalog", "history", "stats", "changes"]

    /// Whether this request changes nothing on the server (`readOperations`).
    public var isRead: Bool { Self.readOperations.contains(op) }
}
