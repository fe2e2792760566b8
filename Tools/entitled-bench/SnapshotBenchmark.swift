import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Part 2: snapshot and recovery at scale, on one data directory:
/// load N memberships, snapshot, check latency without and during a second snapshot, graceful stop,
/// restart from the snapshot, a log of grants on top, kill -9, and timed restarts (snapshot plus log).
struct SnapshotBenchmark {
    let entitled: String
    let workDirectory: String
    let memberships: Int
    let logGrants: Int
    let checkConnections: Int
    let loadConnections: Int
    let loadWindow: Int
    let runs: Int
    /// The longest wait for a quiet machine before each timed step (0: no wait).
    let settle: Double

    func run() -> SnapshotSection {
        var section = SnapshotSection(memberships: memberships)
        var server: EntitledProcess?
        var directory: String?
        do {
            let made = try cleanup.makeTemporaryDirectory(in: workDirectory, prefix: "entitled-snapshot")
            directory = made
            try measure(in: made, section: &section, server: &server)
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

    /// The steps, each recorded into `section` as soon as it is measured, so a failure keeps what came
    /// before. `server` is the one running now, for the caller to stop.
    private func measure(in directory: String, section: inout SnapshotSection, server: inout EntitledProcess?) throws {
        progress("snapshot: starting entitled --fsync no on a fresh data directory")
        var current = try EntitledProcess.start(binary: entitled, dataDirectory: directory, fsync: "no")
        server = current
        let control = try TCPConnection(port: current.port, timeoutSeconds: 300)
        let controlReader = LineReader(control)
        let defined = try control.call(#"{"op":"define","entitlement":"pro","products":["p"]}"#, reader: controlReader)
        guard defined.hasPrefix(#"{"ok":true"#) else { throw BenchError("define answered \(defined)") }

        progress("snapshot: loading \(memberships) memberships over \(loadConnections) connections, \(loadWindow) lines in flight each")
        let load = try PipelinedLoader.grant(
            port: current.port, users: 0..<memberships, prefix: "u", connections: loadConnections, window: loadWindow
        )
        section.load = summary(of: load, grants: memberships, server: current)
        progress("  \(Int(Double(memberships) / load.seconds)) grants/s, \(load.errors) errors")
        guard load.answered == memberships else { throw BenchError("the load got \(load.answered) answers for \(memberships) grants") }

        progress("snapshot: first snapshot")
        settleDown()
        let first = try snapshot(control, controlReader)
        section.firstSnapshot = first
        progress("  server \(first.serverMs) ms, wall \(Int(first.wallMs)) ms, \(first.bytes) bytes")

        let window = max(1.0, first.wallMs / 1000)
        progress("snapshot: check latency without a snapshot (\(String(format: "%.1f", window)) s)")
        settleDown()
        section.checksWithoutSnapshot = try checks(port: current.port, serverPID: current.process.pid, window: window).checks

        progress("snapshot: check latency while a second snapshot is written")
        settleDown()
        let during = try checks(port: current.port, serverPID: current.process.pid) { try snapshot(control, controlReader) }
        section.checksDuringSnapshot = during.checks
        section.secondSnapshot = during.snapshot
        if let second = during.snapshot { progress("  server \(second.serverMs) ms, wall \(Int(second.wallMs)) ms") }

        progress("snapshot: graceful stop (SIGTERM; writes a final snapshot)")
        section.serverProblems += current.problemLines()
        let snapshotsBefore = current.snapshotLogLines()
        let stop = current.process.stop(signal: SIGTERM, timeout: 120)
        server = nil
        section.gracefulStop = StopTiming(
            seconds: stop.seconds, exit: current.process.exitDescription, killed: stop.killed,
            wroteFinalSnapshot: current.snapshotLogLines() > snapshotsBefore
        )

        progress("snapshot: restart from the snapshot")
        let restart = try timedStart(directory: directory)
        current = restart.server
        server = current
        section.restartFromSnapshot = restart.timing

        progress("snapshot: \(logGrants) grants for the log, then kill -9")
        let logLoad = try PipelinedLoader.grant(
            port: current.port, users: 0..<logGrants, prefix: "x", connections: 1, window: loadWindow
        )
        section.logLoad = summary(of: logLoad, grants: logGrants, server: current)
        section.serverProblems += current.problemLines()
        current.process.stop(signal: SIGKILL)
        server = nil

        let expected = memberships + logGrants
        for attempt in 1...runs {
            progress("snapshot: recovery \(attempt)/\(runs) (snapshot plus log) after kill -9")
            let restart = try timedStart(directory: directory)
            current = restart.server
            server = current
            let recovery = restart.timing.recovery
            section.recoveries.append(restart.timing)
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
                section.verificationProblems += try spotCheck(port: current.port)
                let stop = current.process.stop(signal: SIGTERM, timeout: 120)
                if stop.killed || current.process.exitDescription != "exit 0" {
                    section.serverProblems.append("final SIGTERM: \(current.process.exitDescription)")
                }
            }
            server = nil
        }
    }

    /// Waits for a quiet machine, if asked to, before a timed step.
    private func settleDown() {
        guard settle > 0 else { return }
        let quiet = CPUMeter.waitForQuiet(threshold: 0.25, limit: settle)
        if quiet.waited >= settle {
            progress("  the machine stayed busy (\(ReportTable.format(quiet.otherCores ?? 0, 2)) cores used by other processes); measuring anyway")
        }
    }

    /// Starts entitled on the existing directory after a quiet moment; times launch to ready.
    private func timedStart(directory: String) throws -> (server: EntitledProcess, timing: RestartTiming) {
        settleDown()
        let meter = CPUMeter()
        let started = try EntitledProcess.start(binary: entitled, dataDirectory: directory, fsync: "no")
        let other = meter.otherCores(newServer: started.process.pid)
        let timing = RestartTiming(secondsToReady: started.secondsToReady, recovery: started.recoveryLine(), otherCPUCores: other)
        return (started, timing)
    }

    private func summary(of load: LoadResult, grants: Int, server: EntitledProcess) -> LoadSummary {
        LoadSummary(
            grants: grants, seconds: load.seconds, grantsPerSecond: Double(grants) / max(load.seconds, 1e-9),
            errors: load.errors, firstError: load.firstError, connections: loadConnections, window: loadWindow,
            serverResidentBytes: server.process.residentBytes()
        )
    }

    /// Sends `{"op":"snapshot"}` and waits for its answer.
    private func snapshot(_ connection: TCPConnection, _ reader: LineReader) throws -> SnapshotTiming {
        let started = monotonicNanoseconds()
        let answer = try connection.call(#"{"op":"snapshot"}"#, reader: reader)
        let wallMs = Double(monotonicNanoseconds() - started) / 1e6
        guard
            let object = try? JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any],
            object["ok"] as? Bool == true
        else { throw BenchError("snapshot answered \(answer.prefix(500))") }
        let number = { (key: String) in (object[key] as? NSNumber)?.intValue ?? -1 }
        return SnapshotTiming(
            serverMs: number("durationMs"), wallMs: wallMs, bytes: number("bytes"), memberships: number("memberships"),
            sequence: number("sequence"), file: object["file"] as? String ?? "?"
        )
    }

    /// Check latency on `checkConnections` closed-loop connections: over `window` seconds, or while
    /// `action` runs (the window is then the action's own time). The checks start 0.3 s before the window
    /// so that they are at their pace when it opens.
    private func checks(
        port: UInt16, serverPID: pid_t, window: Double = 0, during action: (() throws -> SnapshotTiming)? = nil
    ) throws -> (checks: CheckWindow, snapshot: SnapshotTiming?) {
        let links = try (0..<checkConnections).map { _ in try TCPConnection(port: port, timeoutSeconds: 60) }
        let stop = StopFlag()
        let users = memberships
        let meter = CPUMeter(serverPID: serverPID)
        // A hard end far beyond any sane snapshot; the stop flag normally ends the loop.
        let hardDeadline = monotonicNanoseconds() + nanoseconds(seconds: 300)
        let loop = Background(name: "checks") {
            try ClosedLoop.run(
                connections: links, workload: .entitledCheck(users: users, seed: 0x5EED), measureFrom: 0,
                deadline: hardDeadline, stop: stop, recordStarts: true
            )
        }
        var opened: UInt64 = 0
        var closed: UInt64 = 0
        var timing: SnapshotTiming?
        var other: Double?
        do {
            sleep(seconds: 0.3)
            opened = monotonicNanoseconds()
            if let action { timing = try action() } else { sleep(seconds: window) }
            closed = monotonicNanoseconds()
            other = meter.otherCores()
            // A little longer, so checks stalled by the action come back inside the loop.
            sleep(seconds: 0.05)
            stop.set()
        } catch {
            stop.set()
            _ = try? loop.value()
            throw error
        }
        let result = try loop.value()
        var inWindow: [UInt64] = []
        var started = 0
        for (index, start) in result.starts.enumerated() {
            let latency = result.latencies[index]
            if start < closed && start + latency > opened { inWindow.append(latency) }
            if start >= opened && start < closed { started += 1 }
        }
        let seconds = Double(closed - opened) / 1e9
        let checks = CheckWindow(
            windowMs: seconds * 1000, connections: checkConnections, checksPerSecond: Double(started) / seconds,
            latency: LatencySummary(nanoseconds: inWindow), errors: result.errors, inactive: result.inactive,
            firstError: result.firstError, otherCPUCores: other
        )
        return (checks, timing)
    }

    /// After recovery: the first and last user of the load and of the log must be active.
    private func spotCheck(port: UInt16) throws -> [String] {
        let connection = try TCPConnection(port: port, timeoutSeconds: 30)
        let reader = LineReader(connection)
        var problems: [String] = []
        let users = ["u0", "u\(memberships - 1)"] + (logGrants > 0 ? ["x0", "x\(logGrants - 1)"] : [])
        for user in users {
            let answer = try connection.call(#"{"op":"check","user":"\#(user)","entitlement":"pro"}"#, reader: reader)
            if !answer.hasPrefix(#"{"ok":true,"active":true"#) {
                problems.append("after recovery, check of \(user) answered \(answer)")
            }
        }
        return problems
    }
}
