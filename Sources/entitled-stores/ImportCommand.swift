import ArgumentParser
import Crypto
import EntitledClient
import EntitledStores
import Foundation

/// `entitled-stores import`: brings subscribers that predate `entitled` from the stores (or a RevenueCat
/// export) into it, each through the same writes a notification would make. See STORES.md, "Bringing your
/// subscribers".
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Bring existing subscribers from the stores or a RevenueCat export into entitled.",
        discussion: """
            Each identifier is asked of its store and granted to its user, with the store's purchase time, \\
            renewals, trial and ownership, then brought to its state as the store's notifications would. Running \\
            it again changes nothing; killed, it resumes where it stopped (the journal in --state-dir). A file of \\
            identifiers holds one a line, optionally followed by the user: "2000000123 user_42". Exit status 0 \\
            when everything was imported, 3 when some identifiers failed (the report says which; run it again).
            """
    )

    @OptionGroup var options: StoreOptions

    @Option(name: .customLong("revenuecat"), help: "A RevenueCat transactions export (.csv.gz or .csv). Repeat it for several, oldest first.")
    var revenueCat: [String] = []

    @Option(help: "App Store: a file of original transaction ids (any transaction id of the purchase will do), one a line, each optionally followed by its user (without one, the transactions' appAccountToken).")
    var appleTransactions: String?

    @Option(help: "Google Play: a file of subscription purchase tokens, one a line, each optionally followed by its user (without one, its obfuscatedExternalAccountId).")
    var googleSubscriptions: String?

    @Option(help: "Google Play: a file of one-time purchases, a product id and a purchase token a line, optionally followed by the user.")
    var googleProducts: String?

    @Option(help: "Stripe: a file of subscription ids (sub_...), one a line.")
    var stripeSubscriptions: String?

    @Option(help: "Stripe: a file of customer ids (cus_...), one a line: all their subscriptions, canceled ones included.")
    var stripeCustomers: String?

    @Flag(help: "Stripe: every subscription of the account, canceled ones included.")
    var stripeAll = false

    @Option(help: "The job's name: its journal and report are kept under it in --state-dir/imports (default: made from the inputs).")
    var job: String?

    @Option(help: "The report file: one JSON line per identifier (default: --state-dir/imports/JOB.report.jsonl).")
    var report: String?

    @Option(help: "Identifiers imported at once (default: 16).")
    var concurrency = 16

    func validate() throws {
        guard (1...256).contains(concurrency) else { throw ValidationError("--concurrency must be a whole number from 1 to 256, not \(concurrency)") }
        guard !inputs.isEmpty else {
            throw ValidationError(
                "nothing to import: give --revenuecat, --apple-transactions, --google-subscriptions, --google-products, --stripe-subscriptions, --stripe-customers or --stripe-all"
            )
        }
    }

    /// What this run imports, in a stable order: the job's default name is made from it.
    var inputs: [String] {
        revenueCat.map { "revenuecat=\($0)" } + [
            appleTransactions.map { "apple=\($0)" }, googleSubscriptions.map { "google-subscriptions=\($0)" },
            googleProducts.map { "google-products=\($0)" }, stripeSubscriptions.map { "stripe-subscriptions=\($0)" },
            stripeCustomers.map { "stripe-customers=\($0)" }, stripeAll ? "stripe-all" : nil,
        ].compactMap { $0 }
    }

    func run() async throws {
        let settings = try options.settings()
        let run = try ImportRun(settings: settings, job: job ?? ImportRun.jobName(inputs), report: report, concurrency: concurrency)
        let sync = StateSync(.import, now: Int64(Date().timeIntervalSince1970 * 1000))
        if !revenueCat.isEmpty { try await run.importRevenueCat(files: revenueCat, sync: sync) }
        if let appleTransactions { try await run.importApple(file: appleTransactions, sync: sync) }
        if let googleSubscriptions { try await run.importGoogle(subscriptions: googleSubscriptions, sync: sync) }
        if let googleProducts { try await run.importGoogle(products: googleProducts, sync: sync) }
        if let stripeSubscriptions { try await run.importStripe(subscriptions: stripeSubscriptions, sync: sync) }
        if let stripeCustomers {
            try await run.importStripe(customers: try ImportLine.read(stripeCustomers, fields: 1, what: "a customer id (cus_...)").map { $0.fields[0] }, sync: sync)
        }
        if stripeAll { try await run.importStripe(customers: nil, sync: sync) }
        let failed = run.finish()
        if failed > 0 { throw ExitCode(3) }
    }
}

/// One import's journal, report, progress and connection to `entitled`, shared by its sources.
struct ImportRun {
    let settings: StoresSettings
    let importer: Importer
    let gateway: PoolGateway
    let pool: EntitledPool
    let clients: StoreClients
    let reportPath: String
    private let started = ContinuousClock.now
    let skipped = SkippedCount()

    init(settings: StoresSettings, job: String, report: String?, concurrency: Int) throws {
        let directory = settings.stateDirectory + "/imports"
        do {
            let journal = try ImportJournal(path: "\(directory)/\(job).journal")
            let reportPath = report ?? "\(directory)/\(job).report.jsonl"
            importer = Importer(journal: journal, report: try ImportReport(path: reportPath), concurrency: concurrency)
            self.reportPath = reportPath
        } catch {
            throw ValidationError(error.description)
        }
        self.settings = settings
        pool = settings.entitledPool(connections: 4)
        gateway = PoolGateway(pool: pool)
        clients = try StoreClients(settings: settings, gateway: gateway)
    }

    /// A job name from the inputs: the same inputs resume the same job.
    static func jobName(_ inputs: [String]) -> String {
        let digest = SHA256.hash(data: Data(inputs.joined(separator: "\n").utf8))
        return "import-" + digest.prefix(6).map { String(format: "%02x", $0) }.joined()
    }

    /// Imports `keys` with `work`, drawing the progress under `label`.
    func run(_ label: String, _ keys: [String], work: @escaping @Sendable (String) async -> ImportResult) async {
        let progress = ImportProgress(label: label, total: Set(keys).count)
        skipped.add(await importer.run(keys, progress: progress, work: work).skipped)
        progress.finish()
    }

    /// Prints the summary; returns the number of failures.
    func finish() -> Int {
        importer.journal.sync()
        importer.report.flush()
        let report = importer.report
        let elapsed = ContinuousClock.now - started
        var lines = [
            "imported \(report.count(.imported)), unchanged \(report.count(.unchanged)), skipped \(report.count(.skipped)), failed \(report.count(.failed)) in \(elapsed.formatted(.units(allowed: [.hours, .minutes, .seconds], width: .narrow)))"
        ]
        if skipped.value > 0 { lines.append("  \(skipped.value) finished by an earlier run of this job, not asked again") }
        lines += skipped.lines.map { "  " + $0 }
        for (kind, count) in report.failuresByKind { lines.append("  failed \(kind): \(count)") }
        for (note, count) in report.notesByCount { lines.append("  note: \(note): \(count)") }
        lines.append("report: \(reportPath)")
        if report.count(.failed) > 0 { lines.append("some identifiers failed: see the report, fix what it says, and run the same command again: what is done is not done twice") }
        print(lines.joined(separator: "\n"))
        return report.count(.failed)
    }
}

/// What earlier runs of the job finished, across the sources of a run: the keys skipped, and listings not
/// asked again.
final class SkippedCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    private var said: [String] = []
    func add(_ value: Int) { lock.withLock { count += value } }
    func say(_ line: String) { lock.withLock { said.append(line) } }
    var value: Int { lock.withLock { count } }
    var lines: [String] { lock.withLock { said } }
}
