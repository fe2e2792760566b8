extension AppStoreServerAPI {
    /// Where a transaction history continues: Apple's `revision`, in the environment that knew the
    /// transaction (a sandbox history's revision means nothing in production).
    public struct HistoryPosition: Sendable, Hashable {
        public var revision: String
        public var environment: Environment

        public init(revision: String, environment: Environment) {
            self.revision = revision
            self.environment = environment
        }
    }
}
