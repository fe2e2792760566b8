import Foundation

extension DurabilityCommand {
    /// Part 2: snapshot and recovery at scale, on one data directory. Load the memberships, snapshot, check
    /// latency without and during a second snapshot, graceful stop, restart from the snapshot, a log of
    /// grants on top, kill -9, and timed restarts (snapshot plus log).
    func measureSnapshot(entitled: String, workRoot: String) -> SnapshotSection {
        var section = SnapshotSection(memberships: memberships)
        var server: Server?
        var directory: String?
        do {
            let made = try cleanup.makeTemporaryDirectory(in: workRoot, prefix: "entitled-snapshot")
            directory = made
            try measureSnapshot(entitled: entitled, in: made, section: &section, server: &server)
        } catch {
            section.failure = "\(error)"
            progress("snapshot benchmark failed: \(error)")
        }
        if let running = server {
            section.serverProblems += running.problemLines()
            running.process.stop(signal: SIGKILL)
        }
        if let directory { cleanup.removeDirectory(directory) }
        let recoveries = section.recoveries.map(\.secondsToReady)
        section.recoveryMedianSeconds = recoveries.isEmpty ? nil : median(recoveries)
        return section
    }

    /// The steps, each recorded into `section` as soon as it is measured, so that a failure keeps what came
    /// before. `server` is the one running now, for the caller to stop.
    private func measureSnapshot(entitled: String, in directory: String, section: inout SnapshotSection, server: inout Server?) throws {
        progress("snapshot: starting entitled --fsync no on a fresh data directory")
        var current = try Server.entitled(entitled, dataDirectory: directory, fsync: "no")
        server = current
        let control = try TCPConnection(port: current.port, timeoutSeconds: 300)
        let controlReader = LineReader(control)
        let defined = try control.call(#"{"op":"define","entitlement":"pro","products":["p"]}"#, reader: controlReader)
        guard defined.hasPrefix(#"{"ok":true"#) else { throw BenchError("define answered \(defined)") }

        progress("snapshot: loading \(memberships) memberships over \(loadConnections) connections, \(loadWindow) lines in flight each")
        let load = try grants(port: current.port, count: memberships, prefix: "u", connections: loadConnections)
        section.load = summary(of: load, grants: memberships, server: current)
        progress("  \(Int(Double(memberships) / load.seconds)) grants/s, \(load.errors) errors")
        guard load.answered == memberships else { throw BenchError("the load got \(load.answered) answers for \(memberships) grants") }

        progress("snapshot: first snapshot")
        let first = try snapshot(control, controlReader)
        section.firstSnapshot = first
        progress("  server \(first.serverMs) ms, wall \(Int(first.wallMs)) ms, \(first.bytes) bytes")

        let window = max(1.0, first.wallMs / 1000)
        progress("snapshot: check latency without a snapshot (\(String(format: "%.1f", window)) s)")
        section.checksWithoutSnapshot = try checks(current) {
            sleep(seconds: window)
            return nil
        }.checks

        progress("snapshot: check latency while a second snapshot is written")
        let during = try checks(current) { try snapshot(control, controlReader) }
        section.checksDuringSnapshot = during.checks
        section.secondSnapshot = during.snapshot
        if let second = during.snapshot { progress("  server \(second.serverMs) ms, wall \(Int(second.wallMs)) ms") }

        progress("snapshot: graceful stop (SIGTERM; writes a final snapshot)")
        section.serverProblems += current.problemLines()
        let snapshotsBefore = current.snapshotLogLines()
        let stop = current.process.stop(signal: SIGTERM, timeout: 120)
        server = nil
        section.gracefulStop = StopTiming(
            seconds: stop.seconds, exit: current.process.exitDescription, killed: stop.killed, wroteFinalSnapshot: current.snapshotLogLines() > snapshotsBefore
        )

        progress("snapshot: restart from the snapshot")
        let restart = try timedStart(entitled, directory: directory)
        (current, server) = (restart.server, restart.server)
        section.restartFromSnapshot = restart.timing

        progress("snapshot: \(logGrants) grants for the log, then kill -9")
        section.logLoad = summary(of: try grants(port: current.port, count: logGrants, prefix: "x", connections: 1), grants: logGrants, server: current)
        section.serverProblems += current.problemLines()
        current.process.stop(signal: SIGKILL)
        server = nil

        let expected = memberships + logGrants
        for attempt in 1...runs {
            progress("snapshot: recovery \(attempt)/\(runs) (snapshot plus log) after kill -9")
            let restart = try timedStart(entitled, directory: directory)
            (current, server) = (restart.server, restart.server)
            section.recoveries.append(restart.timing)
            let recovery = restart.timing.recovery
            progress("  ready after \(Int(current.secondsToReady * 1000)) ms; \(recovery?.line ?? "no recovery line")")
            if let recovery {
                if let replayed = recovery.replayed, replayed != logGrants {
                    section.verificationProblems.append("recovery \(attempt) replayed \(replayed) log records; \(logGrants) grants were acknowledged after the snapshot")
                }
                if let count = recovery.memberships, count != expected {
                    section.verificationProblems.append("recovery \(attempt) holds \(count) memberships; \(expected) were acknowledged")
                }
            } else {
                section.verificationProblems.append("recovery \(attempt): no \"recovered the data directory\" line on standard error")
            }
            section.serverProblems += current.problemLines()
            if attempt < runs {
                current.process.stop(signal: SIGKILL)
            } else {
                // The first and last user of the load and of the log must be active.
                let users = ["u0", "u\(memberships - 1)"] + (logGrants > 0 ? ["x0", "x\(logGrants - 1)"] : [])
                section.verificationProblems += try current.denied(users).map { "after recovery, " + $0 }
                let stop = current.process.stop(signal: SIGTERM, timeout: 120)
                if stop.killed || current.process.exitDescription != "exit 0" {
                    section.serverProblems.append("final SIGTERM: \(current.process.exitDescription)")
                }
            }
            server = nil
        }
    }

    /// Grants of product `p` to users `<prefix>0` to `<prefix><count - 1>`, pipelined.
    private func grants(port: UInt16, count: Int, prefix: String, connections: Int) throws -> PipelinedLoader.Result {
        let head = Array(#"{"op":"grant","user":"\#(prefix)"#.utf8)
        let tail = Array(#"","product":"p"}"#.utf8) + [10]
        return try PipelinedLoader.load(port: port, users: 0..<count, connections: connections, window: loadWindow) { _ in
            { user, bytes in
                bytes += head
                bytes.appendDecimal(user)
                bytes += tail
            }
        } accepts: { $0.starts(with: #"{"ok":true"#) }
    }

    /// Starts entitled on the existing directory; times launch to ready.
    private func timedStart(_ entitled: String, directory: String) throws -> (server: Server, timing: RestartTiming) {
        let meter = CPUMeter()
        let started = try Server.entitled(entitled, dataDirectory: directory, fsync: "no")
        let other = meter.otherCores(newServer: started.pid)
        return (started, RestartTiming(secondsToReady: started.secondsToReady, recovery: started.recoveryLine(), otherCPUCores: other))
    }

    private func summary(of load: PipelinedLoader.Result, grants: Int, server: Server) -> LoadSummary {
        LoadSummary(
            grants: grants, seconds: load.seconds, grantsPerSecond: Double(grants) / max(load.seconds, 1e-9), errors: load.errors,
            firstError: load.firstError, connections: loadConnections, window: loadWindow, serverResidentBytes: server.process.residentBytes()
        )
    }

    /// Sends `{"op":"snapshot"}` and waits for its answer.
    private func snapshot(_ connection: TCPConnection, _ reader: LineReader) throws -> SnapshotTiming {
        let started = monotonicNanoseconds()
        let answer = try connection.call(#"{"op":"snapshot"}"#, reader: reader)
        let wallMs = Double(monotonicNanoseconds() - started) / 1e6
        guard let object = try? JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any], object["ok"] as? Bool == true else {
            throw BenchError("snapshot answered \(answer.prefix(500))")
        }
        let number = { (key: String) in (object[key] as? NSNumber)?.intValue ?? -1 }
        return SnapshotTiming(
            serverMs: number("durationMs"), wallMs: wallMs, bytes: number("bytes"), memberships: number("memberships"), sequence: number("sequence"),
            file: object["file"] as? String ?? "?"
        )
    }

    /// Check latency on `checkConnections` closed-loop connections while `action` runs (the window is the
    /// action's own time). The checks start 0.3 s before the window, so that they are at their pace when it opens.
    private func checks(_ server: Server, during action: () throws -> SnapshotTiming?) throws -> (checks: CheckWindow, snapshot: SnapshotTiming?) {
        let links = try (0..<checkConnections).map { _ in try TCPConnection(port: server.port, timeoutSeconds: 60) }
        let stop = StopFlag()
        let meter = CPUMeter(serverPID: server.pid)
        var (opened, closed): (UInt64, UInt64) = (0, 0)
        var timing: SnapshotTiming?
        var other: Double?
        let result = try ClosedLoop.run(connections: links, users: memberships, seed: 0x5EED, stop: stop) {
            defer { stop.set() }
            sleep(seconds: 0.3)
            opened = monotonicNanoseconds()
            timing = try action()
            closed = monotonicNanoseconds()
            other = meter.otherCores()
            // A little longer, so that checks the action stalled come back inside the loop.
            sleep(seconds: 0.05)
        }
        var inWindow: [UInt64] = []
        var started = 0
        for (start, latency) in zip(result.starts, result.latencies) {
            if start < closed && start + latency > opened { inWindow.append(latency) }
            if start >= opened && start < closed { started += 1 }
        }
        let seconds = Double(closed - opened) / 1e9
        let checks = CheckWindow(
            windowMs: seconds * 1000, connections: checkConnections, checksPerSecond: Double(started) / seconds,
            latency: LatencySummary(nanoseconds: inWindow), errors: result.errors, inactive: result.inactive, firstError: result.firstError,
            otherCPUCores: other
        )
        return (checks, timing)
    }
}
