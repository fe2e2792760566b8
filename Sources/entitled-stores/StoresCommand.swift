import ArgumentParser
import EntitledConfiguration
import Configuration
import EntitledClient
import EntitledStores
import Foundation
import Logging

/// `entitled-stores`: receives the stores' server notifications over HTTP, verifies them, and applies them
/// to an `entitled` server (`serve`, the default); lists the notifications kept until their purchase is
/// granted (`unmatched`). See STORES.md beside this file.
@main
struct StoresCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "entitled-stores",
        abstract: "Receives the stores' server notifications (App Store, Google Play, Stripe, Whop) and applies them to entitled.",
        subcommands: [ServeCommand.self, ImportCommand.self, BackfillCommand.self, ReconcileCommand.self, UnmatchedCommand.self],
        defaultSubcommand: ServeCommand.self
    )
}

/// `entitled-stores [serve]`: the receiver.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Receive the stores' notifications and apply them (the default).",
        discussion: """
            Every option can also come from the environment (ENTITLED_STORES_ and the option's name upper-cased, \
            - as _: ENTITLED_STORES_STRIPE_SECRET) or from a JSON file (--config or ENTITLED_STORES_CONFIG, keys \
            named as the options: {"listen": "0.0.0.0:7118", "stripe-secret": ["whsec_..."]}). The command line \
            wins over the environment, which wins over the file. A store whose secrets are not given is not served (404).
            """
    )

    @OptionGroup var options: StoreOptions

    func run() async throws {
        try await StoresService(settings: try options.settings()).run()
    }
}

/// `entitled-stores unmatched`: the notifications kept until a grant names their purchase.
struct UnmatchedCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unmatched",
        abstract: "List the notifications kept until a grant names their purchase (oldest first)."
    )

    @Option(help: "The receiver's state directory (default: ./entitled-stores-data).")
    var stateDir = StoresSettings.defaultStateDirectory

    func run() throws {
        let kept = try UnmatchedNotifications(directory: stateDir + "/unmatched").entries()
        guard !kept.isEmpty else {
            print("no notification is waiting for its purchase")
            return
        }
        for entry in kept {
            print("\(entry.store)  original transaction \(entry.originalTransaction)  received \(ProtocolTime.string(milliseconds: entry.receivedAt))  \(entry.file)")
        }
        print("\(kept.count) notification\(kept.count == 1 ? "" : "s") waiting: each is applied once a grant names its original transaction (transactionId or originalTransactionId)")
    }
}
