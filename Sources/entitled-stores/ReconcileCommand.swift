import ArgumentParser
import EntitledClient
import EntitledStores
import Foundation
import Logging

/// `entitled-stores reconcile`: one reconciliation now, on demand (`serve` runs it on its schedule).
struct ReconcileCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reconcile",
        abstract: "Compare the store memberships with the stores' APIs now, and apply what differs.",
        discussion: """
            Every membership of each store whose API is configured, active or ended within --reconcile-window-days, \\
            is asked of its store and brought to what the store says, as lifecycle events with the reason \\
            "reconciliation". Prints a line per corrected membership and a summary. Exit status 0, or 3 when some \\
            memberships could not be compared.
            """
    )

    @OptionGroup var options: StoreOptions

    @Option(help: "Memberships compared at once (default: 8).")
    var concurrency = 8

    func validate() throws {
        guard (1...256).contains(concurrency) else { throw ValidationError("--concurrency must be a whole number from 1 to 256, not \(concurrency)") }
    }

    func run() async throws {
        let settings = try options.settings()
        var logger = Logger(label: "entitled-stores")
        logger.logLevel = settings.logLevel
        let pool = settings.entitledPool(connections: 2)
        let clients = try StoreClients(settings: settings, gateway: PoolGateway(pool: pool))
        guard !clients.reconcilerStores.isEmpty else {
            throw ValidationError("no store's API is configured: give --apple-key-file (with its ids), --google-service-account or --stripe-api-key-file")
        }
        var summary = Reconciler.Summary()
        await ReconciliationLock.holding(in: settings.stateDirectory) {
            summary = await Reconciliation(settings: settings, clients: clients, gateway: PoolGateway(pool: pool), concurrency: concurrency, logger: logger)
                .run(printing: true)
        }
        print(Reconciliation.describe(summary))
        if summary.failed.values.reduce(0, +) > 0 || !summary.stopped.isEmpty { throw ExitCode(3) }
    }
}

/// One reconciliation run with the settings' stores: what `reconcile` and `serve`'s schedule run.
struct Reconciliation: Sendable {
    let settings: StoresSettings
    let clients: StoreClients
    let gateway: any EntitledGateway
    let concurrency: Int
    let logger: Logger

    /// Runs once; logs every corrected membership (and prints it, for the command) and each failure.
    func run(printing: Bool = false, metrics: StoreMetrics? = nil) async -> Reconciler.Summary {
        let reconciler = Reconciler(
            gateway: gateway, stores: clients.reconcilerStores, window: .seconds(Int64(settings.reconcileWindowDays) * 86_400), concurrency: concurrency
        )
        let logger = logger
        let started = ContinuousClock.now
        logger.info("reconciliation started: \(clients.reconcilerStores.map(\.source).joined(separator: ", "))")
        let summary = await reconciler.run(now: Int64(Date().timeIntervalSince1970 * 1000)) { source, finding in
            switch finding {
            case .agreed:
                break
            case .corrected(let membership, let changes):
                let line = "reconciled \(source) membership \(membership.id) of \(membership.user ?? membership.device ?? "?"): \(changes.joined(separator: ", "))"
                logger.notice("\(line)")
                if printing { print(line) }
            case .notAsked(let membership, let failure):
                logger.debug("not reconciled: \(source) membership \(membership.id): \(failure.message)")
            case .failed(let membership, let failure):
                logger.warning("could not reconcile \(source) membership \(membership.id): \(failure)")
            }
        }
        metrics?.reconciled(summary, finishedAt: Int64(Date().timeIntervalSince1970))
        logger.notice("reconciliation finished in \(ContinuousClock.now - started): \(Self.describe(summary).replacingOccurrences(of: "\n", with: "; "))")
        return summary
    }

    /// The summary, a line per store.
    static func describe(_ summary: Reconciler.Summary) -> String {
        let stores = Set(summary.checked.keys).union(summary.stopped.keys).sorted()
        guard !stores.isEmpty else { return "no store membership to reconcile" }
        return stores.map { store in
            var line = "\(store): checked \(summary.checked[store] ?? 0), corrected \(summary.corrected[store] ?? 0), failed \(summary.failed[store] ?? 0)"
            if let drift = summary.drift[store], !drift.isEmpty {
                line += " (" + drift.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")"
            }
            if let notAsked = summary.notAsked[store] { line += "; not asked: \(notAsked) (imported without what the store's API needs)" }
            if let stopped = summary.stopped[store] { line += "; stopped: \(stopped)" }
            return line
        }.joined(separator: "\n")
    }
}
