import EntitledConsole
import Testing

/// The exit status of one-shot and script runs.
@Suite struct CommandOutcomeTests {
    @Test func successNothingAndQuitExitWithZero() {
        #expect(CommandOutcome.succeeded.exitStatus == 0)
        #expect(CommandOutcome.nothing.exitStatus == 0)
        #expect(CommandOutcome.quit.exitStatus == 0)
    }

    @Test func anErrorResponseExitsWithOne() {
        #expect(CommandOutcome.failedOnServer.exitStatus == 1)
    }

    @Test func usageConnectionAndFileErrorsExitWithTwo() {
        #expect(CommandOutcome.usageError.exitStatus == 2)
        #expect(CommandOutcome.connectionError.exitStatus == 2)
        // An export whose file cannot be written: the server was not the problem.
        #expect(CommandOutcome.fileError.exitStatus == 2)
    }

    @Test func exactlyTheNonZeroStatusesAreFailures() {
        let failures: [CommandOutcome] = [.nothing, .succeeded, .failedOnServer, .usageError, .connectionError, .fileError, .quit]
            .filter(\.isFailure)
        #expect(failures == [.failedOnServer, .usageError, .connectionError, .fileError])
    }
}
