import EntitledCore
import NIOCore
import Testing

@testable import EntitledWire

/// Decoding the lifecycle requests (`event`, `customer`, `history`, `watch`, `unwatch`, the new grant
/// fields) and encoding their answers and pushed lines.
@Suite struct LifecycleRequestTests {
    static let eventTime = Timestamp(rfc3339: "2026-07-01T00:00:00Z")!
    static let nextExpiry = Timestamp(rfc3339: "2026-08-01T00:00:00Z")!

    @Test func aRenewalEventDecodesWithItsExpiryTransactionAndReason() throws {
        let line = #"{"op":"event","membership":"mem_0k3n5q8r2t4v6","type":"renewal","eventId":"evt_1","eventTime":"2026-07-01T00:00:00Z","expiresAt":"2026-08-01T00:00:00Z","transactionId":"tx_2","reason":"webhook"}"#
        guard case .event(let id, let event, let reason) = try request(line) else {
            Issue.record("not an event")
            return
        }
        #expect(id == MembershipID(rawValue: "mem_0k3n5q8r2t4v6"))
        #expect(event == LifecycleEvent(id: "evt_1", time: Self.eventTime, kind: .renewal(expiresAt: Self.nextExpiry), transactionId: "tx_2"))
        #expect(reason == "webhook")
    }

    @Test func everyEventTypeDecodesToItsKind() throws {
        let cases: [(String, LifecycleEvent.Kind)] = [
            (#""type":"renewal","expiresAt":"2026-08-01T00:00:00Z""#, .renewal(expiresAt: Self.nextExpiry)),
            (#""type":"cancellation""#, .cancellation),
            (#""type":"uncancellation""#, .uncancellation),
            (#""type":"billing_issue""#, .billingIssue(gracePeriodExpiresAt: nil)),
            (#""type":"billing_issue","gracePeriodExpiresAt":"2026-08-01T00:00:00Z""#, .billingIssue(gracePeriodExpiresAt: Self.nextExpiry)),
            (#""type":"billing_recovered""#, .billingRecovered),
            (#""type":"expiration""#, .expiration),
            (#""type":"pause""#, .pause),
            (#""type":"resume""#, .resume(expiresAt: nil)),
            (#""type":"resume","expiresAt":"2026-08-01T00:00:00Z""#, .resume(expiresAt: Self.nextExpiry)),
            (#""type":"product_change","product":"prod_year""#, .productChange(productId: "prod_year")),
            (#""type":"refund""#, .refund),
            (#""type":"extension","expiresAt":"2026-08-01T00:00:00Z""#, .extension(expiresAt: Self.nextExpiry)),
            (#""type":"refund_reversal""#, .refundReversal),
        ]
        for (fields, kind) in cases {
            let line = #"{"op":"event","membership":"m","eventId":"e","eventTime":"2026-07-01T00:00:00Z","# + fields + "}"
            guard case .event(_, let event, _) = try request(line) else {
                Issue.record("not an event: \(line)")
                continue
            }
            #expect(event.kind == kind, "\(line)")
        }
        #expect(Set(cases.map(\.1.name)) == Set(LifecycleEvent.Kind.allNames))
    }

    @Test func anEventWithoutWhatItsTypeNeedsOrWithAFieldItsTypeDoesNotUseIsABadRequest() throws {
        let base = #"{"op":"event","membership":"m","eventId":"e","eventTime":"2026-07-01T00:00:00Z","#
        let cases: [(String, String)] = [
            (#""type":"renewal"}"#, #"field "expiresAt" is required for a renewal event"#),
            (#""type":"product_change"}"#, #"field "product" is required for a product_change event"#),
            (#""type":"cancellation","expiresAt":"2026-08-01T00:00:00Z"}"#, #"field "expiresAt" does not apply to a cancellation event"#),
            (#""type":"pause","gracePeriodExpiresAt":"2026-08-01T00:00:00Z"}"#, #"field "gracePeriodExpiresAt" does not apply to a pause event"#),
            (#""type":"renewed"}"#, #"field "type" must be one of renewal, cancellation"#),
        ]
        for (fields, message) in cases {
            let error = try failure(base + fields)
            #expect(error.code == .badRequest)
            #expect(error.message.hasPrefix(message), "\(error.message)")
        }
        #expect(try failure(#"{"op":"event","membership":"m","type":"pause","eventId":"e"}"#).message.contains(#""eventTime" is required"#))
        #expect(try failure(#"{"op":"event","membership":"m","type":"pause","eventTime":"2026-07-01T00:00:00Z"}"#).message.contains(#""eventId" is required"#))
    }

    @Test func aGrantDecodesItsLifecycleFieldsIdempotencyKeyAndReason() throws {
        let line = #"{"op":"grant","user":"u1","product":"p","willRenew":true,"periodType":"trial","environment":"sandbox","ownership":"family_shared","grantType":"offer_code","transactionId":"tx_2","originalTransactionId":"tx_1","idempotencyKey":"order-9","reason":"promo"}"#
        guard case .grant(let grant, let reason) = try request(line) else {
            Issue.record("not a grant")
            return
        }
        #expect(grant.terms.willRenew)
        #expect(grant.terms.periodType == .trial)
        #expect(grant.terms.environment == .sandbox)
        #expect(grant.terms.ownership == .familyShared)
        #expect(grant.terms.grantType == .offerCode)
        #expect(grant.transaction == Grant.Transaction(id: "tx_2", originalTransactionId: "tx_1"))
        #expect(grant.idempotencyKey == "order-9")
        #expect(reason == "promo")
    }

    @Test func aGrantsNewFieldsAreCheckedForTypeAndValue() throws {
        #expect(try failure(#"{"op":"grant","user":"u","product":"p","willRenew":"yes"}"#).message == #"field "willRenew" must be true or false"#)
        #expect(try failure(#"{"op":"grant","user":"u","product":"p","periodType":"monthly"}"#).message == #"field "periodType" must be one of normal, trial, intro, promotional"#)
        #expect(try failure(#"{"op":"grant","user":"u","product":"p","originalTransactionId":"t"}"#).message == #"field "originalTransactionId" needs "transactionId""#)
        #expect(try failure(#"{"op":"grant","user":"u","product":"p","idempotencyKey":""}"#).message == #"field "idempotencyKey" must not be empty"#)
    }

    @Test func historyWatchAndUnwatchDecodeTheirTargets() throws {
        guard case .history(.subject(let subject), let limit, nil) = try request(#"{"op":"history","user":"u1"}"#) else {
            Issue.record("not a subject history")
            return
        }
        #expect(subject == .user("u1"))
        #expect(limit == Limits.defaultHistoryEntries)
        guard case .history(.entitlement("pro"), 5, nil) = try request(#"{"op":"history","entitlement":"pro","limit":5}"#) else {
            Issue.record("not an entitlement history with a limit")
            return
        }
        guard case .watch(.all) = try request(#"{"op":"watch","all":true}"#) else { Issue.record("not watch all"); return }
        guard case .watch(.subject(.device("d1"))) = try request(#"{"op":"watch","device":"d1"}"#) else { Issue.record("not watch d1"); return }
        guard case .unwatch(nil) = try request(#"{"op":"unwatch"}"#) else { Issue.record("not unwatch everything"); return }
        guard case .customer(.user("u1")) = try request(#"{"op":"customer","user":"u1"}"#) else { Issue.record("not customer"); return }

        #expect(try failure(#"{"op":"history"}"#).message == #"history needs "user" or "device" (or both), "entitlement", or "erasures": true"#)
        #expect(try failure(#"{"op":"history","user":"u","limit":0}"#).message == #"field "limit" must be from 1 to 1000"#)
        #expect(try failure(#"{"op":"history","user":"u","limit":1.5}"#).message == #"field "limit" must be a whole number"#)
        #expect(try failure(#"{"op":"watch"}"#).message == #"watch needs "user" or "device" (or both), or "all": true"#)
        #expect(try failure(#"{"op":"watch","user":"u","all":true}"#).message == #"give "user"/"device" or "all", not both"#)
    }

    @Test func anEventAnswerSaysWhetherItWasAppliedAndWhyNot() throws {
        let membership = Membership(id: MembershipID(rawValue: "mem_0k3n5q8r2t4v6"), productId: "p", user: "u", createdAt: Self.eventTime)
        let applied = try parseJSONObject(encode(.event(membership, moment: Self.eventTime, outcome: .applied)))
        #expect(applied["applied"] as? Bool == true)
        #expect(applied["reason"] == nil)
        let duplicate = encode(.event(membership, moment: Self.eventTime, outcome: .ignored(.duplicate)))
        #expect(duplicate.hasSuffix(#","applied":false,"reason":"duplicate"}"# + "\n"))
        #expect(encode(.event(membership, moment: Self.eventTime, outcome: .ignored(.outOfOrder))).contains(#""reason":"out_of_order""#))
        #expect(encode(.replayedGrant(membership, moment: Self.eventTime)).hasSuffix(#","idempotentReplay":true}"# + "\n"))
    }

    @Test func aMembershipWithALifecycleShowsItsDetectionTimesAndTransactions() throws {
        var lifecycle = MembershipLifecycle(willRenew: false, periodType: .intro, renewsCount: 3, unsubscribeDetectedAt: Self.eventTime)
        lifecycle.transactions = [PurchaseTransaction(id: "tx_1", originalTransactionId: "tx_1", type: "purchase", time: Self.eventTime)]
        let membership = Membership(
            id: MembershipID(rawValue: "mem_0k3n5q8r2t4v6"), productId: "p", user: "u", createdAt: Self.eventTime,
            expiresAt: Self.nextExpiry, lifecycle: lifecycle
        )
        let line = encode(.membership(membership, moment: Self.eventTime))
        #expect(line.contains(#""status":"canceled","isActive":true"#))
        #expect(line.contains(#""willRenew":false,"periodType":"intro","renewState":"canceled","renewsCount":3,"environment":"production","ownership":"purchased","grantType":"purchase","unsubscribeDetectedAt":"2026-07-01T00:00:00Z","transactions":[{"id":"tx_1","originalTransactionId":"tx_1","type":"purchase","time":"2026-07-01T00:00:00Z","expiresAt":null,"revokedAt":null}]}"#))
        _ = try parseJSONObject(line)
    }

    @Test func aPushedLineHasPushAndNeverOk() throws {
        let membership = Membership(id: MembershipID(rawValue: "mem_0k3n5q8r2t4v6"), productId: "p", user: "u", createdAt: Self.eventTime)
        var buffer = ByteBuffer()
        ResponseEncoder.writePush(cause: "expired", membership: membership, at: Self.eventTime, sequence: nil, into: &buffer)
        ResponseEncoder.writePush(cause: "renewal", membership: membership, at: Self.eventTime, sequence: 42, into: &buffer)
        let lines = String(buffer: buffer).split(separator: "\n").map(String.init)
        #expect(lines[1].hasPrefix(#"{"push":"access","cause":"renewal","sequence":42,"membership":{"id":"#))
        let line = lines[0] + "\n"
        #expect(line.hasPrefix(#"{"push":"access","cause":"expired","membership":{"id":"mem_0k3n5q8r2t4v6""#))
        #expect(line.hasSuffix("}\n"))
        let object = try parseJSONObject(line)
        #expect(object["ok"] == nil)
    }

    @Test func aHistoryAnswerListsEntriesWithActorReasonAndWhatChanged() throws {
        let membership = Membership(id: MembershipID(rawValue: "mem_0k3n5q8r2t4v6"), productId: "p", user: "u", createdAt: Self.eventTime)
        let entries = [
            AuditEntry(
                sequence: 7, context: ChangeContext(actor: "local", reason: "webhook", recordedAt: Self.nextExpiry),
                change: .membership(.event(LifecycleEvent(id: "evt_1", time: Self.eventTime, kind: .cancellation)), after: membership)
            ),
            AuditEntry(sequence: nil, context: ChangeContext(recordedAt: Self.eventTime), change: .catalog(entitlement: "pro", products: ["p"])),
        ]
        let line = encode(.history(entries, next: nil))
        #expect(line.hasPrefix(#"{"ok":true,"history":[{"time":"2026-08-01T00:00:00Z","actor":"local","action":"cancellation","reason":"webhook","sequence":7,"eventId":"evt_1","eventTime":"2026-07-01T00:00:00Z","membership":{"id":"mem_0k3n5q8r2t4v6""#))
        #expect(line.hasSuffix(#"{"time":"2026-07-01T00:00:00Z","actor":"local","action":"define","entitlement":"pro","products":["p"]}]}"# + "\n"))
        _ = try parseJSONObject(line)
    }
}

extension LifecycleRequestTests {
    @Test func standardLifecycleIsWrittenAsTheConstant() {
        var bytes = [UInt8](repeating: 0, count: 1024)
        let written = bytes.withUnsafeMutableBytes { memory -> String in
            var out = UnsafeLineWriter(memory)
            ResponseEncoder.appendLifecycle(.standard, to: &out)
            return String(decoding: UnsafeRawBufferPointer(rebasing: memory[0..<out.count]), as: UTF8.self)
        }
        #expect(written == ResponseEncoder.standardLifecycleFields.description)
    }
}
