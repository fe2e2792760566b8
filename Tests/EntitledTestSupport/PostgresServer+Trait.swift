import Testing

extension Trait where Self == ConditionTrait {
    /// Runs the test only where PostgreSQL can be had; elsewhere it is reported as skipped, with the reason
    /// (`PostgresServer.unavailableReason()`), never passed. Tools/test.sh installs PostgreSQL as root, so
    /// the project's test command runs these tests on a fresh Debian machine.
    public static var requiresPostgres: Self {
        let reason = PostgresServer.unavailableReason()
        return .enabled(if: reason == nil, Comment(rawValue: reason ?? "PostgreSQL is installed"))
    }
}
