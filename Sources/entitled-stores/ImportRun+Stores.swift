import ArgumentParser
import EntitledClient
import EntitledStores
import Foundation

/// An identifier of a file given to `import`, with the user named beside it.
struct ImportLine: Sendable {
    var fields: [String]
    var user: String?

    /// The lines of `path`: whitespace-separated fields, the optional user last; blank lines and `#` comments skipped.
    /// - Parameter fields: how many fields name the purchase (2 for a Google product: the product and the token).
    static func read(_ path: String, fields count: Int, what: String) throws -> [ImportLine] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw ValidationError("cannot read \(path) (\(what))") }
        var lines: [ImportLine] = []
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," }).map(String.init)
            guard parts.count == count || parts.count == count + 1 else {
                throw ValidationError("\(path), line \(number + 1): expected \(what), optionally followed by the user, not \"\(line)\"")
            }
            lines.append(ImportLine(fields: Array(parts.prefix(count)), user: parts.count > count ? parts[count] : nil))
        }
        return lines
    }
}

extension ImportRun {
    /// What bringing one identifier did, as a result of the report.
    static func result(_ key: String, _ body: () async throws(SyncFailure) -> StateSyncOutcome) async -> ImportResult {
        do {
            return ImportResult(key: key, try await body())
        } catch {
            return ImportResult(key: key, error)
        }
    }

    func importApple(file: String, sync: StateSync) async throws {
        guard let apple = clients.apple else {
            throw ValidationError("--apple-transactions needs the App Store Server API: --apple-key-file, --apple-key-id, --apple-issuer-id, --apple-root-ca and --apple-bundle-id")
        }
        let lines = try ImportLine.read(file, fields: 1, what: "an original transaction id")
        let users = Dictionary(lines.map { ("app_store:\($0.fields[0])", $0.user) }, uniquingKeysWith: { $1 })
        await run("App Store", lines.map { "app_store:\($0.fields[0])" }) { key in
            await Self.result(key) { () async throws(SyncFailure) in
                let original = String(key.dropFirst("app_store:".count))
                let state = try await StoreClients.appleState(apple.api, original: original)
                return try await StoreClients.receiving { () async throws(ReceiveFailure) in try await apple.receiver.bring(state, user: users[key] ?? nil, sync: sync) }
            }
        }
    }

    func importGoogle(subscriptions file: String, sync: StateSync) async throws {
        guard let google = clients.google else {
            throw ValidationError("--google-subscriptions needs the Play Developer API: --google-package and --google-service-account")
        }
        let lines = try ImportLine.read(file, fields: 1, what: "a purchase token")
        let users = Dictionary(lines.map { ("play_store:\($0.fields[0])", $0.user) }, uniquingKeysWith: { $1 })
        await run("Google Play subscriptions", lines.map { "play_store:\($0.fields[0])" }) { key in
            await Self.result(key) { () async throws(SyncFailure) in
                let token = String(key.dropFirst("play_store:".count))
                let purchase = try await StoreClients.asking { () async throws(StoreAPIError) in try await google.api.subscription(purchaseToken: token) }
                return try await StoreClients.receiving { () async throws(ReceiveFailure) in
                    try await google.receiver.bring(subscription: purchase, token: token, user: users[key] ?? nil, sync: sync)
                }
            }
        }
    }

    func importGoogle(products file: String, sync: StateSync) async throws {
        guard let google = clients.google else {
            throw ValidationError("--google-products needs the Play Developer API: --google-package and --google-service-account")
        }
        let lines = try ImportLine.read(file, fields: 2, what: "a product id and a purchase token")
        var byKey: [String: ImportLine] = [:]
        for line in lines { byKey["play_store:\(line.fields[0]):\(line.fields[1])"] = line }
        let purchases = byKey
        await run("Google Play products", lines.map { "play_store:\($0.fields[0]):\($0.fields[1])" }) { key in
            await Self.result(key) { () async throws(SyncFailure) in
                guard let line = purchases[key] else { throw SyncFailure(kind: "internal", message: "lost its line", mayPassLater: false) }
                let (sku, token) = (line.fields[0], line.fields[1])
                let purchase = try await StoreClients.asking { () async throws(StoreAPIError) in try await google.api.product(sku, purchaseToken: token) }
                return try await StoreClients.receiving { () async throws(ReceiveFailure) in
                    try await google.receiver.bring(product: purchase, token: token, sku: sku, user: line.user, sync: sync)
                }
            }
        }
    }

    func importStripe(subscriptions file: String, sync: StateSync) async throws {
        let stripe = try requireStripe("--stripe-subscriptions")
        let lines = try ImportLine.read(file, fields: 1, what: "a subscription id (sub_...)")
        await run("Stripe subscriptions", lines.map { "stripe:\($0.fields[0])" }) { key in
            await Self.result(key) { () async throws(SyncFailure) in
                let id = String(key.dropFirst("stripe:".count))
                let object = try await StoreClients.asking { () async throws(StoreAPIError) in try await stripe.api.subscription(id) }
                return try await StoreClients.receiving { () async throws(ReceiveFailure) in try await stripe.receiver.bring(subscriptionObject: object, sync: sync) }
            }
        }
    }

    /// Every subscription of the listed customers, or of the whole account (`customers` nil), canceled ones
    /// included (`status=all`), a page of 100 at a time: a page's subscriptions are imported, then the page's
    /// end is kept in the journal, so a run killed midway lists on from there. The cursor says that every
    /// subscription up to it is finished: once one fails, it stays before that one's page for the rest of
    /// the listing, so that the next run lists it again and imports what failed (the journal skips the rest).
    func importStripe(customers: [String]?, sync: StateSync) async throws {
        let stripe = try requireStripe(customers == nil ? "--stripe-all" : "--stripe-customers")
        let listings: [String?] = customers ?? [nil]
        let progress = ImportProgress(label: customers == nil ? "Stripe subscriptions" : "Stripe customers' subscriptions", total: nil)
        defer { progress.finish() }
        for customer in listings {
            let listing = "stripe-subscriptions" + (customer.map { ":" + $0 } ?? "")
            if importer.journal.cursor(listing) == "end" {
                skipped.say("\(customer.map { "customer \($0)'s" } ?? "the account's") Stripe subscriptions were all listed by an earlier run of this job: give another --job to list them again")
                continue
            }
            var after = importer.journal.cursor(listing)
            // Whether a subscription of this run's pages failed: the cursor no longer moves.
            var held = false
            while true {
                let page: StripeListPage
                do {
                    page = try await stripe.api.subscriptionsPage(status: "all", customer: customer, limit: 100, startingAfter: after)
                } catch {
                    // The listing itself failed (after the client's retries): what is imported stays, and the
                    // next run lists on from the last page finished.
                    importer.report.record(ImportResult(key: listing, status: .failed, reason: SyncFailure(error).description, mayPassLater: error.mayPassLater))
                    break
                }
                var objects: [String: JSONValue] = [:]
                for object in page.data { if let id = object["id"]?.stringValue { objects["stripe:\(id)"] = object } }
                let found = objects
                let keys = page.data.compactMap { $0["id"]?.stringValue }.map { "stripe:\($0)" }
                let batch = await importer.run(keys, progress: progress) { key in
                    await Self.result(key) { () async throws(SyncFailure) in
                        guard let object = found[key] else { throw SyncFailure(kind: "internal", message: "lost its object", mayPassLater: false) }
                        return try await StoreClients.receiving { () async throws(ReceiveFailure) in
                            try await stripe.receiver.bring(subscriptionObject: object, sync: sync)
                        }
                    }
                }
                skipped.add(batch.skipped)
                held = held || batch.failed > 0
                guard let next = page.next else {
                    if !held { importer.journal.markCursor(listing, "end") }
                    break
                }
                if !held { importer.journal.markCursor(listing, next) }
                after = next
            }
        }
    }

    private func requireStripe(_ option: String) throws -> (receiver: StripeReceiver, api: StripeAPI) {
        guard let stripe = clients.stripe else { throw ValidationError("\(option) needs Stripe's API: --stripe-api-key-file") }
        return stripe
    }
}
