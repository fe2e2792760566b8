import Foundation
import Testing

@testable import EntitledCore

/// A clock that a test moves by hand. The store reads it through a `@Sendable` closure, so the time
/// sits behind a lock. (`NSLock` rather than `Synchronization.Mutex`, which needs macOS 15 while the
/// package supports macOS 14.)
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Timestamp

    init(_ start: Timestamp) {
        current = start
    }

    var now: Timestamp {
        lock.withLock { current }
    }

    func set(_ moment: Timestamp) {
        lock.withLock { current = moment }
    }

    func advance(by span: TimeSpan) {
        lock.withLock { current = current.adding(span) }
    }
}

/// 2026-06-01T12:00:00Z, the "now" of most tests.
let referenceTime = Timestamp(millisecondsSinceEpoch: 1_780_315_200_000)

extension Timestamp {
    /// A time written in RFC 3339; the test fails (and traps) if it does not parse.
    static func rfc(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> Timestamp {
        guard let parsed = Timestamp(rfc3339: text) else {
            Issue.record("\"\(text)\" is not an RFC 3339 time", sourceLocation: sourceLocation)
            return Timestamp(millisecondsSinceEpoch: 0)
        }
        return parsed
    }

    func adding(milliseconds: Int64) -> Timestamp {
        adding(TimeSpan(milliseconds: milliseconds))
    }
}

/// A store whose clock never moves.
func makeStore(at moment: Timestamp = referenceTime) -> EntitlementStore {
    EntitlementStore(clock: { moment })
}

/// A store driven by `clock`.
func makeStore(clock: TestClock) -> EntitlementStore {
    EntitlementStore(clock: { clock.now })
}

extension EntitlementStore {
    /// A purchase: a guest purchase when `subject` is a device only.
    @discardableResult
    func buy(
        _ product: String,
        plan: String? = nil,
        as subject: Subject,
        expiry: Grant.Expiry = .lifetime,
        source: PurchaseSource = .default
    ) -> Membership {
        // A store without a journal cannot refuse a grant.
        try! grant(Grant(subject: subject, productId: product, planId: plan, source: source, expiry: expiry)).value
    }

    /// `check` with an optional product filter, at `moment` (now if `nil`).
    func access(_ subject: Subject, product: String? = nil, at moment: Timestamp? = nil) throws -> AccessResult {
        try check(AccessQuery(subject: subject, filter: product.map { .product($0) } ?? .anyProduct, moment: moment))
    }

    /// Whether `subject` has access (to `product`, or to anything), at `moment` (now if `nil`).
    func hasAccess(_ subject: Subject, product: String? = nil, at moment: Timestamp? = nil) throws -> Bool {
        try access(subject, product: product, at: moment).isActive
    }

    /// The ids `subject` sees, newest first.
    func visibleIDs(_ subject: Subject) -> [MembershipID] {
        memberships(visibleTo: subject).map(\.id)
    }
}
