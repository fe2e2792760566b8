import EntitledClient

extension ResponseRenderer {
    /// A `stats` answer for a person: a few lines of totals, then a table of the operations run, with
    /// their latency percentiles. Operations never run and error codes never sent are left out.
    func statistics(_ response: EntitledResponse) -> String? {
        guard let server = response["server"]?.stringValue, let requests = response["requests"] else { return nil }
        func count(_ value: JSONValue?) -> Int { value?.intValue ?? 0 }
        func plural(_ number: Int, _ noun: String) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }

        var lines: [String] = []
        let uptime = count(response["uptimeSeconds"])
        var heading = style.bold(server) + ", up " + Self.duration(seconds: uptime)
        if let started = response["startedAt"]?.stringValue { heading += style.dim(" (since \(started))") }
        lines.append(heading)

        var summary = TextTable(headers: [])
        func row(_ name: String, _ text: String) { summary.append([.init(name, decorate: { [style] in style.dim($0) }), .init(text)]) }
        let connections = response["connections"]
        row(
            "connections",
            "\(count(connections?["open"])) open, \(count(connections?["accepted"])) accepted, "
                + "\(count(connections?["refused"])) refused (busy), \(count(connections?["closedIdle"])) closed idle"
        )
        let store = response["store"]
        row(
            "store",
            [
                plural(count(store?["users"]), "user"), plural(count(store?["devices"]), "device"),
                plural(count(store?["memberships"]), "membership"), plural(count(store?["entitlements"]), "entitlement"),
            ].joined(separator: ", ")
        )
        if let replication = response["replication"], !replication.isNull {
            replicationRows(replication, row: row)
        } else if let persistence = response["persistence"], !persistence.isNull {
            let since = count(persistence["changesSinceSnapshot"])
            row(
                "log",
                "fsync \(persistence["fsync"]?.stringValue ?? "?"); last change \(count(persistence["lastChange"])), "
                    + "\(plural(since, "change")) since the snapshot (\(Self.bytes(count(persistence["logBytesSinceSnapshot"]))))"
            )
            if let group = persistence["groupCommit"], count(group["groups"]) > 0 {
                row(
                    "commits",
                    "\(plural(count(group["groups"]), "group")), \(Self.number(group["meanSize"])) changes each on average "
                        + "(largest \(count(group["largest"]))); sync \(Self.number(group["meanSyncMicros"])) µs on average, "
                        + "oldest change waited \(Self.number(group["meanWaitMicros"])) µs on average, \(Self.number(group["maxWaitMicros"])) µs at most"
                )
            }
            if let unwritable = persistence["unwritable"], !unwritable.isNull {
                // The one state an operator must act on (or wait out): said in red, with the server's reason.
                let since = unwritable["since"]?.stringValue.map { " since " + time($0) } ?? ""
                row("writes", style.red("refused\(since): \(unwritable["reason"]?.stringValue ?? "the disk failed")"))
            }
            if let snapshot = persistence["snapshot"], let file = snapshot["file"]?.stringValue {
                var text = "\(file): through change \(count(snapshot["change"])), \(Self.bytes(count(snapshot["bytes"])))"
                if let written = snapshot["writtenAt"]?.stringValue {
                    text += ", written " + time(written) + " in \(count(snapshot["durationMs"])) ms"
                } else {
                    text += ", loaded at start"
                }
                row("snapshot", text)
            } else {
                row("snapshot", style.dim("none yet"))
            }
        } else {
            row("log", style.dim("none: the server keeps everything in memory"))
        }
        let errors = response["errors"]
        let errorCounts = (errors?["byCode"]?.objectMembers ?? []).filter { count($0.value) > 0 }
        row(
            "requests",
            "\(count(requests["total"])) in all, \(count(requests["invalid"])) invalid; "
                + plural(count(errors?["total"]), "error")
                + (errorCounts.isEmpty ? "" : " (" + errorCounts.map { "\($0.key) \(count($0.value))" }.joined(separator: ", ") + ")")
        )
        lines.append(summary.render(style: style))

        let latency = response["latencyMicros"]?.objectMembers ?? []
        guard !latency.isEmpty else { return lines.joined(separator: "\n") }
        var table = TextTable(headers: ["OPERATION", "REQUESTS", "P50 µs", "P90 µs", "P99 µs", "P99.9 µs", "MAX µs"])
        for (operation, summary) in latency {
            table.append(
                [.init(operation), .init(String(count(summary["count"])))]
                    + ["p50", "p90", "p99", "p999", "max"].map { .init(Self.number(summary[$0])) }
            )
        }
        lines.append("")
        lines.append(table.render(style: style))
        return lines.joined(separator: "\n")
    }

    /// "3d 4h", "2h 5m", "42s".
    static func duration(seconds: Int) -> String {
        let (days, hours, minutes) = (seconds / 86_400, seconds / 3600 % 24, seconds / 60 % 60)
        if days > 0 { return "\(days)d \(hours)h" }
        if hours > 0 { return "\(hours)h \(minutes)m" }
        if minutes > 0 { return "\(minutes)m \(seconds % 60)s" }
        return "\(seconds)s"
    }

    /// "812 bytes", "4.2 KiB", "17.0 MiB".
    static func bytes(_ count: Int) -> String {
        if count < 1024 { return "\(count) byte\(count == 1 ? "" : "s")" }
        let units = ["KiB", "MiB", "GiB", "TiB"]
        var value = Double(count) / 1024
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return "\((value * 10).rounded() / 10) \(units[unit])"
    }

    private static func number(_ value: JSONValue?) -> String {
        guard case .number(let text)? = value else { return "-" }
        return text
    }
}

extension ResponseRenderer {
    /// The rows of a cluster node's `replication`: which node of which database, whether it is connected
    /// and takes writes (said in red when not: the state an operator must act on), how far behind, and its
    /// groups of writes.
    func replicationRows(_ replication: JSONValue, row: (String, String) -> Void) {
        func count(_ value: JSONValue?) -> Int { value?.intValue ?? 0 }
        let node = replication["node"]?.stringValue ?? "?"
        let source = replication["source"]?.stringValue ?? "?"
        let connected = replication["connected"]?.boolValue == true
        var contact = "never heard from it"
        if case .number(let seconds)? = replication["secondsSinceContact"] { contact = "last contact \(seconds) s ago" }
        row("cluster", "node \(node) of \(source); " + (connected ? "connected" : style.red("not connected")) + ", \(contact)")
        row(
            "replica",
            "applied change \(count(replication["appliedSequence"])), \(count(replication["lagChanges"])) behind; "
                + "\(count(replication["changesReplicated"])) changes from other nodes"
        )
        if replication["writable"]?.boolValue != true {
            row("writes", style.red("refused: \(replication["lastError"]?.stringValue ?? "the database does not take them now")"))
        }
        row(
            "commits",
            "\(count(replication["groupsCommitted"])) groups (\(count(replication["writesCommitted"])) writes) committed, "
                + "\(count(replication["groupsFailed"])) failed; \(count(replication["reconnects"])) reconnects"
        )
        if let database = replication["database"]?.stringValue {
            var text = database
            if case .number(let offset)? = replication["clockOffsetSeconds"] { text += "; its clock \(offset) s ahead of this node's" }
            row("database", text)
        }
        // A failover that lost what this node had served: said in red, as what an operator must look into.
        if count(replication["divergences"]) > 0 || replication["withholdingReads"]?.boolValue == true {
            var text = "\(count(replication["divergences"])) divergences (the database lost changes this node held)"
            if let last = replication["lastDivergence"]?.stringValue { text += ", the last: \(last)" }
            if replication["withholdingReads"]?.boolValue == true { text += "; reads answered loading while the replica reloads" }
            row("history", style.red(text))
        }
    }
}
