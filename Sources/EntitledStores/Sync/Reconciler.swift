import EntitledClient

/// Compares `entitled`'s store memberships with the stores' current state and applies the difference, as
/// lifecycle events with the reason `reconciliation`: a renewal, expiry or refund whose notification was
/// missed is found within a run.
///
/// Which memberships: those of each configured store's source whose access had not ended `window` before
/// the run (active, in grace or billing retry, lifetime, ended or revoked recently), read from `entitled` a
/// page at a time (`memberships` by `source`), so a run over a million memberships holds one page of them.
/// Each is asked of its store (at most `concurrency` at once; each store's client bounds its own calls
/// too) and brought to the answer by the same code as an import (`StoreSync`).
public struct Reconciler: Sendable {
    /// One store: the source its memberships have in `entitled`, and how one is fetched and brought.
    public struct Store: Sendable {
        /// `app_store`, `play_store`, `stripe`.
        public var source: String
        public var bring: @Sendable (MembershipInfo, StateSync) async throws(SyncFailure) -> StateSyncOutcome

        public init(source: String, bring: @escaping @Sendable (MembershipInfo, StateSync) async throws(SyncFailure) -> StateSyncOutcome) {
            self.source = source
            self.bring = bring
        }
    }

    /// What happened to one membership.
    public enum Finding: Sendable {
        /// It agreed with its store.
        case agreed(MembershipInfo)
        /// It did not: `changes` are the events applied (`renewal`, `expiration`, `refund`, ...).
        case corrected(MembershipInfo, changes: [String])
        case failed(MembershipInfo, SyncFailure)
        /// Its store cannot be asked about it (`SyncFailure.cannotBeAsked`): counted apart, not a failure
        /// that every run would report again.
        case notAsked(MembershipInfo, SyncFailure)
    }

    /// A run's account, by store.
    public struct Summary: Sendable, Hashable {
        public var checked: [String: Int] = [:]
        public var corrected: [String: Int] = [:]
        /// Events applied, by store and kind (`app_store renewal`).
        public var drift: [String: [String: Int]] = [:]
        public var failed: [String: Int] = [:]
        /// Memberships their store cannot be asked about, by store.
        public var notAsked: [String: Int] = [:]
        /// A store whose memberships could not be listed or that stopped the run, with why.
        public var stopped: [String: String] = [:]

        public init() {}
    }

    let gateway: any EntitledGateway
    let stores: [Store]
    let window: Duration
    let concurrency: Int
    let pageSize: Int

    public init(gateway: any EntitledGateway, stores: [Store], window: Duration, concurrency: Int = 8, pageSize: Int = 200) {
        self.gateway = gateway
        self.stores = stores
        self.window = window
        self.concurrency = max(1, concurrency)
        self.pageSize = pageSize
    }

    /// Runs once over every store; `report` hears of each membership as it is done.
    public func run(now: Int64, report: @escaping @Sendable (String, Finding) -> Void) async -> Summary {
        var summary = Summary()
        let sync = StateSync(.reconciliation, now: now)
        let endedAfter = ProtocolTime.string(milliseconds: now - window.milliseconds)
        for store in stores {
            var after: String?
            repeat {
                let page: EntitledResponse
                do {
                    page = try await gateway.send(.memberships(source: store.source, endedAfter: endedAfter, limit: pageSize, after: after))
                } catch {
                    summary.stopped[store.source] = "entitled did not list the memberships: \(error.reason)"
                    break
                }
                if let failure = page.error {
                    summary.stopped[store.source] = "entitled refused the listing: \(failure.code.rawValue): \(failure.message)"
                    break
                }
                let memberships = page.memberships ?? []
                let findings = await check(memberships, store, sync)
                for finding in findings {
                    summary.checked[store.source, default: 0] += 1
                    switch finding {
                    case .agreed:
                        break
                    case .corrected(_, let changes):
                        summary.corrected[store.source, default: 0] += 1
                        for change in changes { summary.drift[store.source, default: [:]][change, default: 0] += 1 }
                    case .failed:
                        summary.failed[store.source, default: 0] += 1
                    case .notAsked:
                        summary.notAsked[store.source, default: 0] += 1
                    }
                    report(store.source, finding)
                }
                after = page.next
            } while after != nil
        }
        return summary
    }

    /// Brings each of `memberships` to its store's state, `concurrency` at a time.
    private func check(_ memberships: [MembershipInfo], _ store: Store, _ sync: StateSync) async -> [Finding] {
        await withTaskGroup(of: (Int, Finding).self) { group in
            var findings = [Finding?](repeating: nil, count: memberships.count)
            var next = 0
            func start(_ index: Int) {
                let membership = memberships[index]
                group.addTask {
                    do throws(SyncFailure) {
                        let outcome = try await store.bring(membership, sync)
                        if case .unmatched(let reason) = outcome.outcome {
                            return (index, .failed(membership, SyncFailure(kind: "unmatched", message: reason, mayPassLater: false)))
                        }
                        let changes = outcome.changes
                        return (index, changes.isEmpty ? .agreed(outcome.membership ?? membership) : .corrected(outcome.membership ?? membership, changes: changes))
                    } catch {
                        return (index, error.kind == SyncFailure.cannotBeAsked ? .notAsked(membership, error) : .failed(membership, error))
                    }
                }
            }
            while next < min(concurrency, memberships.count) {
                start(next)
                next += 1
            }
            while let (index, finding) = await group.next() {
                findings[index] = finding
                if next < memberships.count {
                    start(next)
                    next += 1
                }
            }
            return findings.compactMap { $0 }
        }
    }
}

extension Duration {
    var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}
