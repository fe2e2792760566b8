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
        await run("RevenueCat \(export.rowsRead) rows", keys) { key in
            guard let subscription = subscriptions[key] else { return ImportResult(key: key, status: .failed, reason: "internal: lost its rows") }
            do throws(ReceiveFailure) {
                return ImportResult(key: key, try await rows.bring(subscription, sync: sync))
            } catch {
                return ImportResult(key: key, SyncFailure(error))
            }
        }
    }
}
