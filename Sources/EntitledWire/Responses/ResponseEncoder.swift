import EntitledCore
import NIOCore

/// Writes response lines: one JSON object and a `\n` each.
public enum ResponseEncoder {
    /// Writes a success line for `response`, echoing `id` when the request had one.
    public static func write(_ response: Response, id: ByteBuffer?, into buffer: inout ByteBuffer) {
        write(response, id: id, sequence: nil, into: &buffer)
    }

    /// Writes a success line for `response`, echoing `id` when the request had one, and `"seq"` when a
    /// write gives the number of the change it committed as (or the newest it saw, when it changed nothing).
    public static func write(_ response: Response, id: ByteBuffer?, sequence: UInt64?, into buffer: inout ByteBuffer) {
        switch response {
        case .access(let result):
            write(result, id: id, into: &buffer)
            return
        case .membership(let membership, let moment):
            writeMembershipLine(membership, at: moment, id: id, sequence: sequence, into: &buffer)
            return
        default:
            break
        }
        buffer.writeStaticString("{\"ok\":true")
        writeID(id, into: &buffer)
        if let sequence {
            buffer.writeStaticString(",\"seq\":")
            buffer.writeJSONInteger(sequence)
        }
        switch response {
        case .pong:
            break
        case .access, .membership:
            break  // Written whole above.
        case .claimed(let count):
            buffer.writeStaticString(",\"claimed\":")
            buffer.writeJSONInteger(count)
        case .memberships(let memberships, let moment, let next):
            buffer.writeStaticString(",\"memberships\":[")
            for (index, membership) in memberships.enumerated() {
                if index > 0 { buffer.writeStaticString(",") }
                write(membership, at: moment, into: &buffer)
            }
            buffer.writeStaticString("]")
            if let next {
                buffer.writeStaticString(",\"next\":")
                buffer.writeJSONString(next)
            }
        case .defined(let entitlement, let products), .undefined(let entitlement, let products):
            buffer.writeStaticString(",\"entitlement\":")
            buffer.writeJSONString(entitlement)
            buffer.writeStaticString(",\"products\":")
            writeStrings(products, into: &buffer)
        case .erased(let memberships, let historyEntries):
            writeErased(memberships: memberships, historyEntries: historyEntries, into: &buffer)
        case .catalog(let entries):
            buffer.writeStaticString(",\"entitlements\":")
            writeStringArrays(entries, name: \.entitlement, strings: \.products, into: &buffer)
        case .replayedGrant(let membership, let moment):
            buffer.writeStaticString(",\"membership\":")
            write(membership, at: moment, into: &buffer)
            buffer.writeStaticString(",\"idempotentReplay\":true")
        case .transferredGrant(let membership, let moment, let previous):
            buffer.writeStaticString(",\"membership\":")
            write(membership, at: moment, into: &buffer)
            buffer.writeStaticString(",\"transferredFrom\":{")
            if let user = previous.user {
                buffer.writeStaticString("\"user\":")
                buffer.writeJSONString(user)
            } else if let device = previous.device {
                buffer.writeStaticString("\"device\":")
                buffer.writeJSONString(device)
            }
            buffer.writeStaticString("}")
        case .extended(let membership, let moment, let previousExpiresAt):
            buffer.writeStaticString(",\"membership\":")
            write(membership, at: moment, into: &buffer)
            buffer.writeStaticString(",\"previousExpiresAt\":")
            buffer.writeJSONTimestamp(previousExpiresAt)
        case .event(let membership, let moment, let outcome):
            buffer.writeStaticString(",\"membership\":")
            write(membership, at: moment, into: &buffer)
            switch outcome {
            case .applied:
                buffer.writeStaticString(",\"applied\":true")
            case .ignored(let reason):
                buffer.writeStaticString(",\"applied\":false,\"reason\":")
                buffer.writeJSONString(reason.rawValue)
            }
        case .customer(let info):
            buffer.writeStaticString(",\"customer\":")
            write(info, into: &buffer)
        case .history(let entries, let next):
            buffer.writeStaticString(",\"history\":")
            writeArray(entries, into: &buffer) { write($0, into: &$1) }
            if let next {
                buffer.writeStaticString(",\"next\":")
                buffer.writeJSONString(next.text)
            }
        case .changes(let page):
            buffer.writeStaticString(",\"changes\":")
            writeArray(page.items, into: &buffer) { write($0, into: &$1) }
            buffer.writeStaticString(",\"next\":")
            buffer.writeJSONInteger(page.next)
            buffer.writeStaticString(",\"newest\":")
            buffer.writeJSONInteger(page.newest)
            buffer.writeStaticString(",\"oldestAfterSeq\":")
            buffer.writeJSONInteger(page.oldestAfter)
        case .export(let answer):
            buffer.writeStaticString(",\"export\":{\"seq\":")
            buffer.writeJSONInteger(answer.sequence)
            buffer.writeStaticString(",\"time\":")
            buffer.writeJSONTimestamp(answer.moment)
            buffer.writeStaticString("}")
            if let catalog = answer.catalog {
                buffer.writeStaticString(",\"entitlements\":")
                writeStringArrays(catalog, name: \.entitlement, strings: \.products, into: &buffer)
            }
            buffer.writeStaticString(",\"memberships\":")
            writeArray(answer.memberships, into: &buffer) { write($0, at: answer.moment, into: &$1) }
            if let history = answer.history {
                buffer.writeStaticString(",\"history\":")
                writeArray(history, into: &buffer) { write($0, into: &$1) }
            }
            if let next = answer.next {
                buffer.writeStaticString(",\"next\":")
                buffer.writeJSONString(next.text)
            }
        case .watches(let count):
            buffer.writeStaticString(",\"watches\":")
            buffer.writeJSONInteger(count)
        case .hello(let version, let server, let operations, let authRequired):
            buffer.writeStaticString(",\"protocol\":")
            buffer.writeJSONInteger(version)
            buffer.writeStaticString(",\"server\":")
            buffer.writeJSONString(server)
            buffer.writeStaticString(",\"operations\":")
            writeStrings(operations.map(\.rawValue), into: &buffer)
            // What each operation takes besides `op` and `id`: a client learns what this server would
            // refuse, since unknown fields are refused rather than skipped.
            buffer.writeStaticString(",\"fields\":")
            writeStringArrays(operations, name: \.rawValue, strings: \.acceptedFieldNames, into: &buffer)
            buffer.writeStaticString(authRequired ? ",\"authRequired\":true" : ",\"authRequired\":false")
        case .authenticated(let name, let role, let authRequired):
            buffer.writeStaticString(",\"name\":")
            buffer.writeJSONString(name)
            buffer.writeStaticString(",\"role\":")
            buffer.writeJSONString(role)
            buffer.writeStaticString(authRequired ? ",\"authRequired\":true" : ",\"authRequired\":false")
        case .stats(let statistics):
            write(statistics, into: &buffer)
        case .reloaded(let tokens):
            buffer.writeStaticString(",\"tokens\":")
            buffer.writeJSONInteger(tokens)
        case .snapshot(let snapshot):
            buffer.writeStaticString(",\"file\":")
            buffer.writeJSONString(snapshot.location)
            buffer.writeStaticString(",\"sequence\":")
            buffer.writeJSONInteger(snapshot.sequence)
            buffer.writeStaticString(",\"bytes\":")
            buffer.writeJSONInteger(snapshot.bytes)
            buffer.writeStaticString(",\"durationMs\":")
            buffer.writeString(String(snapshot.milliseconds))
            buffer.writeStaticString(",\"memberships\":")
            buffer.writeJSONInteger(snapshot.memberships)
        }
        buffer.writeStaticString("}\n")
    }

    /// Writes a check's answer, the hot path's line: `{"ok":true[,"id":ID],"active":...}`, reserving the
    /// buffer once (see `UnsafeLineWriter`).
    static func write(_ result: AccessResult, id: ByteBuffer?, into buffer: inout ByteBuffer) {
        let id = minified(id)
        // `{"ok":true` + `,"id":` + `,"active":true,"expiresAt":"` + the time + `"}\n`
        let longest = 10 + 6 + (id?.readableBytes ?? 0) + 28 + Timestamp.maximumRFC3339Length + 3
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: longest) { memory in
            var line = UnsafeLineWriter(memory)
            line.append("{\"ok\":true")
            if let id {
                line.append(",\"id\":")
                id.withUnsafeReadableBytes { line.append($0) }
            }
            switch result {
            case .inactive:
                line.append(",\"active\":false}\n")
            case .active(nil):
                line.append(",\"active\":true,\"expiresAt\":null}\n")
            case .active(let until?):
                line.append(",\"active\":true,\"expiresAt\":\"")
                until.withRFC3339Bytes { line.append(UnsafeRawBufferPointer($0)) }
                line.append("\"}\n")
            }
            return line.count
        }
    }

    /// Writes a failure line: `{"ok":false,"id":...,"error":{"code":...,"message":...}}`.
    public static func write(_ error: WireError, id: ByteBuffer?, into buffer: inout ByteBuffer) {
        buffer.writeStaticString("{\"ok\":false")
        writeID(id, into: &buffer)
        buffer.writeStaticString(",\"error\":{\"code\":")
        buffer.writeJSONString(error.code.rawValue)
        buffer.writeStaticString(",\"message\":")
        buffer.writeJSONString(error.message)
        if let oldest = error.oldestAfterSeq {
            buffer.writeStaticString(",\"oldestAfterSeq\":")
            buffer.writeJSONInteger(oldest)
        }
        buffer.writeStaticString("}}\n")
    }

    /// The answer of a server still loading its data at a start (`ErrorCode.loading`): the error object
    /// also says how many memberships are loaded (`loaded`) of how many are known to come (`total`).
    public static func writeLoading(loaded: Int, total: Int, id: ByteBuffer?, into buffer: inout ByteBuffer) {
        let known = total > 0 ? "\(loaded) of \(total) memberships loaded" : "how much there is to load is not known yet"
        let message = "the server is starting and loading its data (\(known)); retry in a moment, on a new connection once it is ready"
        buffer.writeStaticString("{\"ok\":false")
        writeID(id, into: &buffer)
        buffer.writeStaticString(",\"error\":{\"code\":\"loading\",\"message\":")
        buffer.writeJSONString(message)
        buffer.writeString(",\"loaded\":\(loaded),\"total\":\(total)}}\n")
    }

    /// The answer to a read while a cluster node reloads its replica (`ErrorCode.loading`): `reason` says
    /// why; nothing is known of how much is to load.
    public static func writeLoading(reason: String, id: ByteBuffer?, into buffer: inout ByteBuffer) {
        buffer.writeStaticString("{\"ok\":false")
        writeID(id, into: &buffer)
        buffer.writeStaticString(",\"error\":{\"code\":\"loading\",\"message\":")
        buffer.writeJSONString(reason)
        buffer.writeStaticString(",\"loaded\":0,\"total\":0}}\n")
    }

    private static func writeID(_ id: ByteBuffer?, into buffer: inout ByteBuffer) {
        guard let id else { return }
        buffer.writeStaticString(",\"id\":")
        buffer.writeMinifiedJSON(id)
    }

    /// `id` as it is echoed: minified, so that the answer stays one line.
    private static func minified(_ id: ByteBuffer?) -> ByteBuffer? {
        guard let raw = id, raw.readableBytesView.contains(where: \.isJSONWhitespace) else { return id }
        // Rare: an id with whitespace in it.
        var compact = ByteBuffer()
        compact.writeMinifiedJSON(raw)
        return compact
    }

    /// A write's answer with one membership, a grant's or a revocation's: `{"ok":true[,"id":ID][,"seq":N],"membership":{...}}`.
    ///
    /// Reserved once, like a check's answer: the five `ByteBuffer` writes around the membership object
    /// were about a third of this answer's cost in `perf` (3.6% of a bulk load's CPU per grant).
    static func writeMembershipLine(
        _ membership: Membership, at moment: Timestamp, id: ByteBuffer?, sequence: UInt64?, into buffer: inout ByteBuffer
    ) {
        let id = minified(id)
        // `{"ok":true` + `,"id":` + `,"seq":` and 20 digits + `,"membership":` + the object + `}\n`
        let longest = 10 + 6 + (id?.readableBytes ?? 0) + 27 + 14 + membershipBound(membership) + 2
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: longest) { memory in
            var line = UnsafeLineWriter(memory)
            line.append("{\"ok\":true")
            if let id {
                line.append(",\"id\":")
                id.withUnsafeReadableBytes { line.append($0) }
            }
            if let sequence {
                line.append(",\"seq\":")
                line.appendDecimal(sequence)
            }
            line.append(",\"membership\":")
            append(membership, at: moment, to: &line)
            line.append("}\n")
            return line.count
        }
    }

    /// A membership object; `status` and `isActive` are computed at `moment`.
    ///
    /// Reserved once and written with `UnsafeLineWriter`: through forty `ByteBuffer` writes it was about
    /// 16,000 instructions, over a third of a durable grant's.
    static func write(_ membership: Membership, at moment: Timestamp, into buffer: inout ByteBuffer) {
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: membershipBound(membership)) { memory in
            var out = UnsafeLineWriter(memory)
            append(membership, at: moment, to: &out)
            return out.count
        }
    }

    /// The most bytes `append(_:at:to:)` writes for `membership`.
    private static func membershipBound(_ membership: Membership) -> Int {
        func bound(_ text: String?) -> Int { UnsafeLineWriter.jsonStringBound(text?.utf8.count ?? 0) }
        // The keys, punctuation, literals and enum values take under 200 bytes.
        return 256 + UnsafeLineWriter.jsonStringBound(membership.id.utf8Count) + bound(membership.productId) + bound(membership.planId)
            + bound(membership.user) + bound(membership.device) + bound(membership.revocation?.reason)
            + 3 * UnsafeLineWriter.timestampBound + (membership.hasLifecycle ? lifecycleBound(membership.lifecycle) : 256)
    }

    /// Appends a membership object (at most `membershipBound` bytes).
    private static func append(_ membership: Membership, at moment: Timestamp, to out: inout UnsafeLineWriter) {
        let status = membership.status(at: moment)
        out.append("{\"id\":")
        membership.id.withUTF8 { out.appendJSONString($0) }
        out.append(",\"productId\":")
        out.appendJSONString(membership.productId)
        if let planId = membership.planId {
            out.append(",\"planId\":")
            out.appendJSONString(planId)
        }
        if let user = membership.user {
            out.append(",\"user\":")
            out.appendJSONString(user)
        }
        if let device = membership.device {
            out.append(",\"device\":")
            out.appendJSONString(device)
        }
        out.append(",\"status\":")
        out.appendJSONString(status.rawValue)
        out.append(status.grantsAccess ? ",\"isActive\":true" : ",\"isActive\":false")
        out.append(",\"createdAt\":")
        out.appendTimestamp(membership.createdAt)
        out.append(",\"expiresAt\":")
        if let expiresAt = membership.expiresAt {
            out.appendTimestamp(expiresAt)
        } else {
            out.append("null")
        }
        out.append(",\"source\":")
        out.appendJSONString(membership.source.rawValue)
        if let revocation = membership.revocation {
            out.append(",\"revokedAt\":")
            out.appendTimestamp(revocation.revokedAt)
            out.append(",\"reason\":")
            out.appendJSONString(revocation.reason)
        }
        if membership.hasLifecycle {
            appendLifecycle(membership.lifecycle, to: &out)
        } else {
            // Most memberships: one copy of a constant instead of a copied lifecycle and eight writes.
            out.append(Self.standardLifecycleFields)
        }
        out.append("}")
    }

    /// What `appendLifecycle` writes for `MembershipLifecycle.standard` (`standardLifecycleIsWrittenAsTheConstant`
    /// proves the two agree).
    static let standardLifecycleFields: StaticString =
        #","willRenew":false,"periodType":"normal","renewState":"non_renewable","renewsCount":0,"environment":"production","ownership":"purchased","grantType":"purchase""#

    /// The most bytes `appendLifecycle` writes for `lifecycle`.
    private static func lifecycleBound(_ lifecycle: MembershipLifecycle) -> Int {
        // Keys, literals and enum values: under 250 bytes; four optional times.
        var bound = 256 + 4 * (UnsafeLineWriter.timestampBound + 32)
        for transaction in lifecycle.transactions {
            bound += 128 + 3 * UnsafeLineWriter.timestampBound + UnsafeLineWriter.jsonStringBound(transaction.id.utf8.count)
                + UnsafeLineWriter.jsonStringBound(transaction.originalTransactionId.utf8.count)
                + UnsafeLineWriter.jsonStringBound(transaction.type.utf8.count)
        }
        return bound
    }

    /// The lifecycle fields of a membership object (see PROTOCOL.md): always the renewal fields and the
    /// purchase's kind; the detection times only when set; `transactions` only when there are any.
    static func appendLifecycle(_ lifecycle: MembershipLifecycle, to out: inout UnsafeLineWriter) {
        out.append(lifecycle.willRenew ? ",\"willRenew\":true" : ",\"willRenew\":false")
        out.append(",\"periodType\":")
        out.appendJSONString(lifecycle.periodType.rawValue)
        out.append(",\"renewState\":")
        out.appendJSONString(lifecycle.renewState.rawValue)
        out.append(",\"renewsCount\":")
        out.appendInteger(lifecycle.renewsCount)
        out.append(",\"environment\":")
        out.appendJSONString(lifecycle.environment.rawValue)
        out.append(",\"ownership\":")
        out.appendJSONString(lifecycle.ownership.rawValue)
        out.append(",\"grantType\":")
        out.appendJSONString(lifecycle.grantType.rawValue)
        if let time = lifecycle.unsubscribeDetectedAt {
            out.append(",\"unsubscribeDetectedAt\":")
            out.appendTimestamp(time)
        }
        if let time = lifecycle.billingIssueDetectedAt {
            out.append(",\"billingIssueDetectedAt\":")
            out.appendTimestamp(time)
        }
        if let time = lifecycle.gracePeriodExpiresAt {
            out.append(",\"gracePeriodExpiresAt\":")
            out.appendTimestamp(time)
        }
        if let time = lifecycle.pausedAt {
            out.append(",\"pausedAt\":")
            out.appendTimestamp(time)
        }
        guard !lifecycle.transactions.isEmpty else { return }
        out.append(",\"transactions\":[")
        for (index, transaction) in lifecycle.transactions.enumerated() {
            out.append(index == 0 ? "{\"id\":" : ",{\"id\":")
            out.appendJSONString(transaction.id)
            out.append(",\"originalTransactionId\":")
            out.appendJSONString(transaction.originalTransactionId)
            out.append(",\"type\":")
            out.appendJSONString(transaction.type)
            out.append(",\"time\":")
            out.appendTimestamp(transaction.time)
            out.append(",\"expiresAt\":")
            out.appendTimestamp(transaction.expiresAt)
            out.append(",\"revokedAt\":")
            out.appendTimestamp(transaction.revokedAt)
            out.append("}")
        }
        out.append("]")
    }

    /// `,"erased":{"memberships":N,"historyEntries":M}`: an `erase` answer and an erasure's audit entry.
    static func writeErased(memberships: Int, historyEntries: Int, into buffer: inout ByteBuffer) {
        buffer.writeStaticString(",\"erased\":{\"memberships\":")
        buffer.writeJSONInteger(memberships)
        buffer.writeStaticString(",\"historyEntries\":")
        buffer.writeJSONInteger(historyEntries)
        buffer.writeStaticString("}")
    }

    /// `[` the elements, each written by `element`, separated by commas `]`.
    static func writeArray<Element>(_ elements: [Element], into buffer: inout ByteBuffer, _ element: (Element, inout ByteBuffer) -> Void) {
        buffer.writeStaticString("[")
        for (index, item) in elements.enumerated() {
            if index > 0 { buffer.writeStaticString(",") }
            element(item, &buffer)
        }
        buffer.writeStaticString("]")
    }

    static func writeStrings(_ strings: [String], into buffer: inout ByteBuffer) {
        buffer.writeStaticString("[")
        for (index, string) in strings.enumerated() {
            if index > 0 { buffer.writeStaticString(",") }
            buffer.writeJSONString(string)
        }
        buffer.writeStaticString("]")
    }

    /// A JSON object with one array of strings per element, under the element's name: the catalog's
    /// entitlements and `hello`'s fields per operation.
    static func writeStringArrays<Element>(
        _ elements: [Element],
        name: (Element) -> String,
        strings: (Element) -> [String],
        into buffer: inout ByteBuffer
    ) {
        buffer.writeStaticString("{")
        for (index, element) in elements.enumerated() {
            if index > 0 { buffer.writeStaticString(",") }
            buffer.writeJSONString(name(element))
            buffer.writeStaticString(":")
            writeStrings(strings(element), into: &buffer)
        }
        buffer.writeStaticString("}")
    }
}
