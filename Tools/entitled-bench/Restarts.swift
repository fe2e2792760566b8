import Foundation

/// One server started again and again on the same directory and port, each start timed from launch until
/// it answers a request about data it held: what the services that call it see of a restart. Refused
/// connections and "loading" answers (Redis's `-LOADING`, entitled's `loading` error) are retried every
/// 2 ms, so the time includes no more than that of waiting.
struct Restarts {
    let target: Target
    let binary: String
    let directory: String
    let port: UInt16

    /// Launches the server and waits until it answers that `user` has access (entitled: a check of `pro`;
    /// Redis: `EXISTS m:<user>`), or, with no user, until it answers a ping. `secondsToReady` is that time.
    func start(waitingFor user: String?) throws -> Server {
        let arguments =
            target == .entitled
            ? Server.entitledArguments(port: port) + ["--data-dir", directory, "--fsync", "no"]
            : Server.redisArguments(port: port, directory: directory, appendfsync: "no")
        let process = try ChildProcess.launch(binary, arguments, name: target == .entitled ? "entitled" : "redis-server")
        do {
            let answeredAt = try firstAnswer(from: process, about: user)
            return Server(target: target, process: process, port: port, secondsToReady: Double(answeredAt - process.launchedAt) / 1e9)
        } catch {
            process.stop(signal: SIGKILL)
            throw error
        }
    }

    /// When `process` first answered the request about `user` other than "loading".
    private func firstAnswer(from process: ChildProcess, about user: String?) throws -> UInt64 {
        let (request, accepted): (String, String) =
            switch (target, user) {
            case (.entitled, let user?): (#"{"op":"check","user":"\#(user)","entitlement":"pro"}"#, #"{"ok":true,"active":true"#)
            case (.entitled, nil): (#"{"op":"ping"}"#, #"{"ok":true"#)
            case (.redis, let user?): ("EXISTS m:\(user)", ":1")
            case (.redis, nil): ("PING", "+PONG")
            }
        let deadline = monotonicNanoseconds() + nanoseconds(seconds: 3600)
        var link: (connection: TCPConnection, reader: LineReader)?
        while monotonicNanoseconds() < deadline {
            if process.hasExited() {
                let tail = process.errorOutput.text.split(separator: "\n").suffix(8).joined(separator: "\n    ")
                throw BenchError("\(process.name) exited (\(process.exitDescription)) before it answered; its standard error ends with:\n    \(tail)")
            }
            if link == nil, let connection = try? TCPConnection(port: port, timeoutSeconds: 3600) {
                link = (connection, LineReader(connection))
            }
            guard let (connection, reader) = link, let answer = try? connection.call(request, reader: reader) else {
                link = nil
                usleep(2_000)
                continue
            }
            let answeredAt = monotonicNanoseconds()
            if answer.hasPrefix("-LOADING") || answer.contains(#""code":"loading""#) {
                usleep(2_000)
                continue
            }
            guard answer.hasPrefix(accepted) else { throw BenchError("\(process.name) answered \(request) with \(answer.prefix(300)) after its start") }
            return answeredAt
        }
        throw BenchError("\(process.name) did not answer within an hour of its start")
    }
}
