import ArgumentParser
import EntitledStores

extension ImportRun {
    /// Imports the subscriptions of RevenueCat exports, each from the export's rows
    /// (`RevenueCatImport`).
    func importRevenueCat(files: [String], sync: StateSync) async throws {
        let export: RevenueCatExport
        do {
            export = try RevenueCatExport(files: files)
        } catch {
            throw ValidationError("cannot import the RevenueCat export \(error.description)")
        }
        for skippedRow in export.skipped {
            importer.report.record(ImportResult(key: "revenuecat:\(skippedRow.file):\(skippedRow.line)", status: .failed, reason: "unreadable_row: \(skippedRow.reason)"))
        }
        var byKey: [String: RevenueCatExport.Subscription] = [:]
        for subscription in export.subscriptions { byKey["\(subscription.store):\(subscription.originalTransactionID)"] = subscription }
        let keys = export.subscriptions.map { "\($0.store):\($0.originalTransactionID)" }
        let rows = RevenueCatImport(gateway: gateway)
        let subscriptions = byKey
        let apple = clients.apple
        await run("RevenueCat \(export.rowsRead) rows", keys) { key in
            guard let subscription = subscriptions[key] else { return ImportResult(key: key, status: .failed, reason: "internal: lost its rows") }
            return await Self.result(key) { () async throws(SyncFailure) in
                if let apple, subscription.store == "app_store" {
                    // The App Store is asked: its answer is the truth, the export gives the user.
                    let state = try await StoreClients.appleState(apple.api, original: subscription.originalTransactionID)
                    var outcome = try await StoreClients.receiving { () async throws(ReceiveFailure) in
                        try await apple.receiver.bring(state, user: subscription.user, sync: sync)
                    }
                    if subscription.transactions.last?.isAnonymous == true { outcome.notes.append("granted to a RevenueCat anonymous id") }
                    return outcome
                }
                return try await StoreClients.receiving { () async throws(ReceiveFailure) in try await rows.bring(subscription, sync: sync) }
            }
        }
    }
}
