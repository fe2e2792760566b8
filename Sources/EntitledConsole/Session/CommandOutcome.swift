/// How one console command ended, which decides the exit status of one-shot and script runs.
public enum CommandOutcome: Sendable, Hashable {
    /// The line was empty or a comment: nothing was done.
    case nothing
    /// The server answered `"ok":true`, or the command was local (`help`).
    case succeeded
    /// The server answered with an error response.
    case failedOnServer
    /// The command was not understood; nothing was sent.
    case usageError
    /// The server could not be reached or the connection failed.
    case connectionError
    /// The console could not write a file it was asked to write (`export ... to FILE`).
    case fileError
    /// The person asked to leave.
    case quit

    /// 0 when the server answered ok, 1 on an error response, 2 on a usage or connection error or a file
    /// that could not be written.
    public var exitStatus: Int32 {
        switch self {
        case .nothing, .succeeded, .quit: 0
        case .failedOnServer: 1
        case .usageError, .connectionError, .fileError: 2
        }
    }

    /// Whether a script stops here (unless told to continue).
    public var isFailure: Bool { exitStatus != 0 }
}
