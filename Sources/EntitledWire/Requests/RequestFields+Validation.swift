import EntitledCore

extension RequestFields {
    /// The typed request these fields make, or the first reason they make none.
    func request(permitting permissions: OperationPermissions) throws(WireError) -> Request {
        if isNotAnObject { throw .badRequest("a request must be a JSON object such as {\"op\":\"ping\"}") }
        // An unknown op is reported before any field problem: the fields mean nothing without an op.
        guard let op else {
            throw opTypeError ?? .badRequest("field \"op\" is required: the operation to run, such as \"check\"")
        }
        let operation =
            op.isPlain
            ? Request.Operation(utf8: op.rawBytes(in: line)) : Request.Operation(rawValue: text(of: op) ?? "")
        guard let operation else {
            let known = Request.Operation.allCases.map(\.rawValue).joined(separator: ", ")
            throw WireError(.unknownOp, "unknown op \"\(Self.printable(text(of: op) ?? ""))\"; known ops: \(known)")
        }
        // Whether the client may run it is decided before its fields are looked at: a client that may not
        // learns nothing from their validation.
        if let refusal = permissions.refusal(of: operation) { throw refusal }
        // Then what the request names: a field the operation does not take is refused before any value is
        // looked at, since the request does not say what its sender meant.
        if hasUnacceptedField(for: operation) { throw unacceptedFieldError(for: operation) }
        if let fieldError { throw fieldError }
        switch operation {
        case .ping:
            return .ping
        case .hello:
            return .hello
        case .grant:
            return .grant(try grant(), reason: try text(.reason, text(of: reason)))
        case .check:
            return .check(try accessQuery())
        case .claim:
            return .claim(
                device: try required(.device, text(of: device), for: operation),
                user: try required(.user, text(of: user), for: operation),
                reason: try text(.reason, text(of: reason))
            )
        case .revoke:
            let id = try required(.membership, text(of: membership), for: operation)
            return .revoke(MembershipID(rawValue: id), reason: try text(.reason, text(of: reason)))
        case .memberships:
            let selection = try membershipSelection()
            let limit = try pageLimit(default: Limits.defaultMembershipsPerPage, maximum: Limits.maximumMembershipsPerPage)
            if case .source = selection { return .memberships(selection, moment: nil, limit: limit, after: nil) }
            return .memberships(selection, moment: try time(.at, text(of: at)), limit: limit, after: try membershipCursor())
        case .define:
            return .define(
                entitlement: try required(.entitlement, text(of: entitlement), for: operation),
                products: try productList(for: operation),
                reason: try text(.reason, text(of: reason))
            )
        case .catalog:
            return .catalog
        case .stats:
            return .stats
        case .reload:
            return .reload
        case .snapshot:
            return .snapshot
        case .event:
            let id = try required(.membership, text(of: membership), for: operation)
            return .event(MembershipID(rawValue: id), try lifecycleEvent(), reason: try text(.reason, text(of: reason)))
        case .customer:
            return .customer(try subject(for: operation))
        case .history:
            return .history(
                try historyTarget(), limit: try pageLimit(default: Limits.defaultHistoryEntries, maximum: Limits.maximumHistoryEntries),
                after: try historyCursor()
            )
        case .watch:
            guard let target = try watchTarget(for: operation) else {
                throw .badRequest("watch needs \"user\" or \"device\" (or both), or \"all\": true")
            }
            return .watch(target)
        case .unwatch:
            return .unwatch(try watchTarget(for: operation))
        case .auth:
            return .auth(token: try authToken())
        case .undefine:
            return .undefine(
                entitlement: try required(.entitlement, text(of: entitlement), for: operation),
                reason: try text(.reason, text(of: reason))
            )
        case .erase:
            return .erase(try subject(for: operation), reason: try text(.reason, text(of: reason)))
        case .extend:
            let id = try required(.membership, text(of: membership), for: operation)
            return .extend(MembershipID(rawValue: id), try expiryExtension(), reason: try text(.reason, text(of: reason)))
        case .changes:
            let waited = wait ?? 0
            guard (0...Request.maximumFeedWaitMilliseconds).contains(waited) else {
                throw .badRequest("field \"wait\" must be from 0 to \(Request.maximumFeedWaitMilliseconds) milliseconds")
            }
            return .changes(
                after: afterSeq, limit: try pageLimit(default: Limits.defaultFeedItems, maximum: Limits.maximumFeedItems),
                waitMilliseconds: waited,
                subject: text(of: user) == nil && text(of: device) == nil ? nil : try subject(for: operation)
            )
        case .export:
            var cursor: ExportCursor?
            if let text = try identifier(.after, text(of: after)) {
                guard let parsed = ExportCursor(text: text) else {
                    throw .badRequest("field \"after\" is not an export cursor: pass the \"next\" of the page before unchanged")
                }
                cursor = parsed
            }
            return .export(
                after: cursor, limit: try pageLimit(default: Limits.maximumMembershipsPerPage, maximum: Limits.maximumMembershipsPerPage),
                history: history ?? false
            )
        }
    }

    /// What an `extend` asks for: `duration` (later by that much) or `expiresAt` (until then), one of them.
    private func expiryExtension() throws(WireError) -> ExpiryExtension {
        switch (text(of: expiresAt), text(of: duration)) {
        case (.some, .some):
            throw .badRequest("give \"expiresAt\" or \"duration\", not both")
        case (.some(let moment), nil):
            return .until(try time(.expiresAt, moment)!)
        case (nil, .some(let text)):
            return .by(try span(text))
        case (nil, nil):
            throw .badRequest("extend needs \"duration\" (such as \"1mo\": that much later) or \"expiresAt\" (the new expiry)")
        }
    }

    /// A `duration` field's span (`TimeSpan.parse`), or the reason it is none.
    private func span(_ text: String) throws(WireError) -> TimeSpan {
        switch TimeSpan.parse(text) {
        case .success(let span):
            return span
        case .failure(.minutesOrMonths):
            let count = text.dropLast()
            throw .badRequest(
                "field \"duration\" \"\(text)\" is ambiguous: write \"\(count)min\" for minutes or \"\(count)mo\" for calendar months"
            )
        case .failure(.tooLong):
            throw .badRequest("field \"duration\" is longer than 1000 years (365250 days, 12000 months)")
        case .failure(.malformed):
            throw .badRequest(
                "field \"duration\" must be a positive whole number and a unit s, min, h, d, w, mo or y, such as \"30d\" or \"1mo\""
            )
        }
    }

    private func grant() throws(WireError) -> Grant {
        let subject = try subject(for: .grant)
        let productId = try required(.product, text(of: product), for: .grant)
        let planId = try identifier(.plan, text(of: plan))
        let purchaseSource = try purchaseSource() ?? .default
        let expiry: Grant.Expiry
        let expiresAt = text(of: expiresAt)
        switch (expiresAt, text(of: duration)) {
        case (.some, .some):
            throw .badRequest("give \"expiresAt\" or \"duration\", not both")
        case (.some, nil):
            expiry = .at(try time(.expiresAt, expiresAt)!)
        case (nil, .some(let text)):
            expiry = .after(try span(text))
        case (nil, nil):
            expiry = .lifetime
        }
        let terms = PurchaseTerms(
            willRenew: willRenew ?? false,
            periodType: try name(.periodType, text(of: periodType)) ?? .normal,
            environment: try name(.environment, text(of: environment)) ?? .production,
            ownership: try name(.ownership, text(of: ownership)) ?? .purchased,
            grantType: try name(.grantType, text(of: grantType)) ?? .purchase,
            renewsCount: try importedRenewals()
        )
        var transaction: Grant.Transaction?
        let originalTransactionId = try identifier(.originalTransactionId, text(of: originalTransactionId))
        if let transactionId = try identifier(.transactionId, text(of: transactionId)) {
            transaction = Grant.Transaction(id: transactionId, originalTransactionId: originalTransactionId)
        } else if originalTransactionId != nil {
            throw .badRequest("field \"originalTransactionId\" needs \"transactionId\"")
        }
        return Grant(
            subject: subject, productId: productId, planId: planId, source: purchaseSource, expiry: expiry,
            terms: terms, transaction: transaction,
            idempotencyKey: try identifier(.idempotencyKey, text(of: idempotencyKey)),
            purchasedAt: try time(.purchasedAt, text(of: purchasedAt))
        )
    }

    /// `source`, one of the sources; `nil` when the request has none.
    private func purchaseSource() throws(WireError) -> PurchaseSource? {
        guard let source = text(of: source) else { return nil }
        guard let parsed = PurchaseSource(rawValue: source) else {
            let known = PurchaseSource.allCases.map(\.rawValue).joined(separator: ", ")
            throw .badRequest("field \"source\" must be one of \(known)")
        }
        return parsed
    }

    /// A grant's `renewsCount`: the renewals an imported purchase had before, 0 when absent.
    private func importedRenewals() throws(WireError) -> Int {
        guard let renewsCount else { return 0 }
        guard renewsCount <= Limits.maximumImportedRenewals else {
            throw .badRequest("field \"renewsCount\" must be from 0 to \(Limits.maximumImportedRenewals)")
        }
        return renewsCount
    }

    /// Which fields each event type needs or refuses is documented in Protocol/PROTOCOL.md ("Lifecycle
    /// events") and restated by the console in its own words (Sources/EntitledConsole/Commands/
    /// EventArguments.swift, held to that table by EventArgumentsProtocolTests): change the three together.
    private func lifecycleEvent() throws(WireError) -> LifecycleEvent {
        let typeName = try required(.type, text(of: type), for: .event)
        let eventId = try required(.eventId, text(of: eventId), for: .event)
        guard let eventTime = try time(.eventTime, text(of: eventTime)) else {
            throw .badRequest("field \"eventTime\" is required for event: when the store says it happened")
        }
        let expiresAt = try time(.expiresAt, text(of: expiresAt))
        let grace = try time(.gracePeriodExpiresAt, text(of: gracePeriodExpiresAt))
        let productId = try identifier(.product, text(of: product))
        func need(_ value: Timestamp?, _ field: RequestField) throws(WireError) -> Timestamp {
            guard let value else { throw .badRequest("field \"\(field.description)\" is required for a \(typeName) event") }
            return value
        }
        guard let name = LifecycleEvent.Kind.Name(rawValue: typeName) else {
            throw .badRequest("field \"type\" must be one of \(LifecycleEvent.Kind.allNames.joined(separator: ", "))")
        }
        let kind: LifecycleEvent.Kind
        switch name {
        case .renewal: kind = .renewal(expiresAt: try need(expiresAt, .expiresAt))
        case .extension: kind = .extension(expiresAt: try need(expiresAt, .expiresAt))
        case .cancellation: kind = .cancellation
        case .uncancellation: kind = .uncancellation
        case .billingIssue: kind = .billingIssue(gracePeriodExpiresAt: grace)
        case .billingRecovered: kind = .billingRecovered
        case .expiration: kind = .expiration
        case .pause: kind = .pause
        case .resume: kind = .resume(expiresAt: expiresAt)
        case .refund: kind = .refund
        case .refundReversal: kind = .refundReversal
        case .productChange:
            guard let productId else { throw .badRequest("field \"product\" is required for a product_change event: the new product") }
            kind = .productChange(productId: productId)
        }
        // A field the type does not use is refused rather than ignored: it is a sender's mistake that
        // would otherwise go unnoticed (an expiry sent with a cancellation).
        let uses: (expiresAt: Bool, grace: Bool, product: Bool) =
            switch kind {
            case .renewal, .extension, .resume: (true, false, false)
            case .billingIssue: (false, true, false)
            case .productChange: (false, false, true)
            default: (false, false, false)
            }
        for (field, present, used) in [
            (RequestField.expiresAt, expiresAt != nil, uses.expiresAt), (.gracePeriodExpiresAt, grace != nil, uses.grace),
            (.product, productId != nil, uses.product),
        ] where present && !used {
            throw .badRequest("field \"\(field.description)\" does not apply to a \(typeName) event")
        }
        return LifecycleEvent(
            id: eventId, time: eventTime, kind: kind, transactionId: try identifier(.transactionId, text(of: transactionId))
        )
    }

    private func historyTarget() throws(WireError) -> HistoryTarget {
        let entitlement = try identifier(.entitlement, text(of: entitlement))
        let subject = Subject(user: try identifier(.user, text(of: user)), device: try identifier(.device, text(of: device)))
        if erasures == true {
            guard subject == nil, entitlement == nil else {
                throw .badRequest("give \"erasures\": true alone: the erasures name no user, device or entitlement")
            }
            return .erasures
        }
        switch (subject, entitlement) {
        case (.some, .some): throw .badRequest("give \"user\"/\"device\" or \"entitlement\", not both")
        case (.some(let subject), nil): return .subject(subject)
        case (nil, .some(let entitlement)): return .entitlement(entitlement)
        case (nil, nil): throw .badRequest("history needs \"user\" or \"device\" (or both), \"entitlement\", or \"erasures\": true")
        }
    }

    /// `limit`: how many items a page of `memberships` or `history` holds at most.
    private func pageLimit(default defaultLimit: Int, maximum: Int) throws(WireError) -> Int {
        guard let limit else { return defaultLimit }
        guard (1...maximum).contains(limit) else {
            throw .badRequest("field \"limit\" must be from 1 to \(maximum)")
        }
        return limit
    }

    /// `after` of `memberships`: the id of the last membership of the page before (its `next`).
    private func membershipCursor() throws(WireError) -> MembershipID? {
        guard let text = try identifier(.after, text(of: after)) else { return nil }
        let id = MembershipID(rawValue: text)
        guard id.bits != nil else {
            throw .badRequest("field \"after\" must be a membership id (the \"next\" of the page before), not \"\(text)\"")
        }
        return id
    }

    /// `after` of `history`: the `next` of the page before, passed back unchanged.
    private func historyCursor() throws(WireError) -> HistoryCursor? {
        guard let text = try identifier(.after, text(of: after)) else { return nil }
        guard let cursor = HistoryCursor(text: text) else {
            throw .badRequest("field \"after\" is not a history cursor: pass the \"next\" of the page before unchanged")
        }
        return cursor
    }

    private func watchTarget(for operation: Request.Operation) throws(WireError) -> WatchTarget? {
        let subject = Subject(user: try identifier(.user, text(of: user)), device: try identifier(.device, text(of: device)))
        switch (subject, all ?? false) {
        case (.some, true): throw .badRequest("give \"user\"/\"device\" or \"all\", not both")
        case (.some(let subject), false): return .subject(subject)
        case (nil, true): return .all
        case (nil, false): return nil
        }
    }

    /// One of an enumeration's protocol names.
    private func name<Name: RawRepresentable<String> & CaseIterable>(_ field: RequestField, _ value: String?) throws(WireError) -> Name? {
        guard let value else { return nil }
        guard let parsed = Name(rawValue: value) else {
            throw .badRequest("field \"\(field.description)\" must be one of \(Name.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return parsed
    }

    private func accessQuery() throws(WireError) -> AccessQuery {
        let subject = try subject(for: .check)
        let filter: AccessFilter
        switch (try identifier(.product, text(of: product)), try identifier(.entitlement, text(of: entitlement))) {
        case (.some, .some): throw .badRequest("give \"product\" or \"entitlement\", not both")
        case (.some(let product), nil): filter = .product(product)
        case (nil, .some(let entitlement)): filter = .entitlement(entitlement)
        case (nil, nil): filter = .anyProduct
        }
        return AccessQuery(subject: subject, filter: filter, moment: try time(.at, text(of: at)))
    }

    private func subject(for operation: Request.Operation) throws(WireError) -> Subject {
        let user = try identifier(.user, text(of: user))
        guard let subject = Subject(user: user, device: try identifier(.device, text(of: device))) else {
            throw .badRequest("\(operation.rawValue) needs \"user\" or \"device\" (or both)")
        }
        return subject
    }

    /// A `memberships` request's selection: a subject, a transaction, an original transaction or a source,
    /// one of them.
    private func membershipSelection() throws(WireError) -> MembershipSelection {
        let transaction = try identifier(.transactionId, text(of: transactionId))
        let original = try identifier(.originalTransactionId, text(of: originalTransactionId))
        let subject = Subject(user: try identifier(.user, text(of: user)), device: try identifier(.device, text(of: device)))
        let source = try purchaseSource()
        let selectors = [subject != nil, transaction != nil, original != nil, source != nil].filter { $0 }.count
        guard selectors == 1 else {
            if selectors == 0 {
                throw .badRequest(
                    "memberships needs \"user\" or \"device\" (or both), \"transactionId\", \"originalTransactionId\" or \"source\""
                )
            }
            throw .badRequest(
                "memberships takes one of \"user\"/\"device\", \"transactionId\", \"originalTransactionId\" and \"source\", not several"
            )
        }
        if source == nil, endedAfter != nil { throw .badRequest("field \"endedAfter\" goes with \"source\"") }
        if let subject { return .visible(to: subject) }
        // A transaction's or a source's memberships are listed as they are now: their history is per subject.
        let selector = transaction != nil ? "transactionId" : original != nil ? "originalTransactionId" : "source"
        if at != nil { throw .badRequest("field \"at\" goes with \"user\" or \"device\", not with \"\(selector)\"") }
        if let transaction { return .transaction(transaction) }
        if let original { return .originalTransaction(original) }
        guard let source else { preconditionFailure("exactly one selector, counted above") }
        return .source(source, endedAfter: try time(.endedAfter, text(of: endedAfter)), after: try sourceCursor())
    }

    /// `after` of a source's listing: the `next` of the page before, a position passed back unchanged.
    private func sourceCursor() throws(WireError) -> SourceCursor? {
        guard let text = try identifier(.after, text(of: after)) else { return nil }
        guard let cursor = SourceCursor(text: text) else {
            throw .badRequest(
                "field \"after\" is not a position in a listing of a source's memberships: pass the \"next\" of the page before unchanged"
            )
        }
        return cursor
    }

    private func productList(for operation: Request.Operation) throws(WireError) -> [String] {
        guard let products else {
            throw .badRequest("field \"products\" is required for \(operation.rawValue): an array of product ids")
        }
        // An empty list used to leave the entitlement defined with nothing unlocking it, which a command
        // with its products forgotten did without a word: removing one is `undefine`'s, and says so.
        guard !products.isEmpty else {
            throw .badRequest(
                "field \"products\" must list at least one product; to remove the entitlement, use {\"op\":\"undefine\"}"
            )
        }
        guard products.count <= Limits.maximumProductsPerEntitlement else {
            throw .badRequest(
                "field \"products\" may list at most \(Limits.maximumProductsPerEntitlement) products"
            )
        }
        for product in products where product.isEmpty || product.utf8.count > Limits.maximumIdentifierBytes {
            throw .badRequest(
                "each product in \"products\" must be a non-empty string of at most \(Limits.maximumIdentifierBytes) bytes"
            )
        }
        return products
    }

    /// The token of an `auth` request. Its messages never quote it: a secret sent by mistake in the wrong
    /// shape must not come back in an answer or a log line.
    private func authToken() throws(WireError) -> String {
        guard let value = text(of: token) else { throw .badRequest("field \"token\" is required for auth") }
        let byteCount = value.utf8.count
        if byteCount == 0 { throw .badRequest("field \"token\" must not be empty") }
        if byteCount > Request.maximumTokenBytes {
            throw .badRequest("field \"token\" must be at most \(Request.maximumTokenBytes) bytes")
        }
        return value
    }

    // MARK: Field rules

    private func required(
        _ field: RequestField,
        _ value: String?,
        for operation: Request.Operation
    ) throws(WireError) -> String {
        guard let value = try identifier(field, value) else {
            throw .badRequest("field \"\(field.description)\" is required for \(operation.rawValue)")
        }
        return value
    }

    /// An id or a name: non-empty, at most `Limits.maximumIdentifierBytes` bytes.
    private func identifier(_ field: RequestField, _ value: String?) throws(WireError) -> String? {
        try text(field, value, maximumBytes: Limits.maximumIdentifierBytes)
    }

    private func text(
        _ field: RequestField,
        _ value: String?,
        maximumBytes: Int = Limits.maximumReasonBytes
    ) throws(WireError) -> String? {
        guard let value else { return nil }
        let byteCount = value.utf8.count
        if byteCount == 0 {
            throw .badRequest("field \"\(field.description)\" must not be empty")
        }
        if byteCount > maximumBytes {
            throw .badRequest("field \"\(field.description)\" must be at most \(maximumBytes) bytes, not \(byteCount)")
        }
        return value
    }

    private func time(_ field: RequestField, _ value: String?) throws(WireError) -> Timestamp? {
        guard let value else { return nil }
        guard let timestamp = Timestamp(rfc3339: value) else {
            throw .badRequest(
                "field \"\(field.description)\" must be an RFC 3339 time such as \"2026-12-21T00:00:00Z\""
            )
        }
        return timestamp
    }

    /// A client's string made short enough to quote in a message: at most 64 Unicode scalars (256 bytes).
    /// Scalars, not Characters: one Character can hold any number of combining marks.
    static func printable(_ text: String) -> String {
        let scalars = text.unicodeScalars
        guard scalars.count > 64 else { return text }
        return String(String.UnicodeScalarView(scalars.prefix(64))) + "…"
    }
}
