import EntitledTestSupport
import Foundation
import Testing

@testable import EntitledStores

/// RevenueCat's transactions export as it is delivered: gzip, `;` between columns, rows repeated when a
/// transaction changes, booleans and JSON columns written differently by its format versions.
@Suite struct RevenueCatExportTests {
    static let header =
        "rc_original_app_user_id;rc_last_seen_app_user_id_alias;country;product_identifier;start_time;end_time;store;is_auto_renewable;is_trial_period;is_sandbox;store_transaction_id;original_store_transaction_id;refunded_at;unsubscribe_detected_at;billing_issues_detected_at;renewal_number;ownership_type;grace_period_end_time;custom_subscriber_attributes"

    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// Writes `lines` under the header to a file, gzip-compressed unless `plain`.
    func export(_ name: String, _ lines: [String], plain: Bool = false, lineEnd: String = "\n") throws -> String {
        let path = directory.path + "/" + name
        try ([Self.header] + lines).map { $0 + lineEnd }.joined().write(toFile: path, atomically: true, encoding: .utf8)
        guard !plain else { return path }
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/bin/gzip")
        gzip.arguments = ["-f", path]
        try gzip.run()
        gzip.waitUntilExit()
        return path + ".gz"
    }

    @Test func aGzipExportIsReadIntoSubscriptionsWithTheirTransactionsOldestFirst() throws {
        let file = try export(
            "transactions_1.csv",
            [
                "$RCAnonymousID:aa;user_1;GB;pro_monthly;2024-02-01 10:00:00;2024-03-01 10:00:00;app_store;true;false;false;1002;1000;;;;2;PURCHASED;;{}",
                "$RCAnonymousID:aa;user_1;GB;pro_monthly;2024-01-01 10:00:00;2024-02-01 10:00:00;app_store;true;true;false;1000;1000;;;;1;PURCHASED;;{}",
                "user_2;user_2;US;pro_yearly;2024-05-01T00:00:00Z;2025-05-01T00:00:00Z;stripe;true;false;true;in_1;sub_1;;2024-06-01 00:00:00;;1;;;",
            ]
        )
        let read = try RevenueCatExport(files: [file])
        #expect(read.rowsRead == 3)
        #expect(read.skipped.isEmpty)
        #expect(read.subscriptions.count == 2)
        let apple = try #require(read.subscriptions.first { $0.store == "app_store" })
        #expect(apple.originalTransactionID == "1000")
        #expect(apple.user == "user_1")
        #expect(apple.transactions.map(\.transactionID) == ["1000", "1002"])
        #expect(apple.transactions.map(\.isTrial) == [true, false])
        #expect(apple.transactions[0].startsAt == 1_704_103_200_000)
        #expect(apple.transactions[1].renewalNumber == 2)
        let stripe = try #require(read.subscriptions.first { $0.store == "stripe" })
        #expect(stripe.transactions[0].isSandbox)
        #expect(stripe.transactions[0].unsubscribeDetectedAt == 1_717_200_000_000)
    }

    @Test func theNewestRowOfATransactionWinsAcrossFilesInTheOrderGiven() throws {
        let first = try export("transactions_1.csv", ["u;u;;pro;2024-01-01 00:00:00;2024-02-01 00:00:00;app_store;t;f;f;1000;1000;;;;1;;;"])
        let second = try export("transactions_2.csv", ["u;u;;pro;2024-01-01 00:00:00;2024-02-01 00:00:00;app_store;t;f;f;1000;1000;2024-01-15 00:00:00;;;1;;;"])
        let read = try RevenueCatExport(files: [first, second])
        #expect(read.rowsRead == 2)
        #expect(read.subscriptions.count == 1)
        #expect(read.subscriptions[0].transactions.count == 1)
        #expect(read.subscriptions[0].transactions[0].refundedAt == 1_705_276_800_000)
        // Before version 4 the booleans were t and f.
        #expect(read.subscriptions[0].transactions[0].isAutoRenewable)
    }

    @Test func quotedFieldsHoldDelimitersAndQuotesOfEitherFormatVersion() throws {
        let file = try export(
            "transactions.csv",
            [
                // Version 6: RFC 4180 quoting, inner quotes doubled.
                #"u1;u1;;pro;2024-01-01 00:00:00;;app_store;false;false;false;1;1;;;;1;;;"{""$email"": {""value"": ""a;b""}}""#,
                // Before version 6: the JSON enclosed in quotes by hand, inner quotes as they are.
                #"u2;u2;;pro;2024-01-01 00:00:00;;app_store;false;false;false;2;2;;;;1;;;"{"$email": {"value": "c"}}""#,
            ],
            plain: true, lineEnd: "\r\n"
        )
        let read = try RevenueCatExport(files: [file])
        #expect(read.skipped.isEmpty, "\(read.skipped)")
        #expect(read.subscriptions.map(\.user) == ["u1", "u2"])
    }

    @Test func theReaderKeepsDelimitersAndQuotesInsideQuotedFields() throws {
        var reader = DelimitedTextReader(delimiter: UInt8(ascii: ";"))
        let text = #"a;"b;c";"say ""hi""";"{"k": "v"}";"line"# + "\n" + #"break""# + "\r\n" + "last;"
        var rows = try reader.feed(Array(text.utf8))
        if let last = reader.finish() { rows.append(last) }
        #expect(rows == [["a", "b;c", #"say "hi""#, #"{"k": "v"}"#, "line\nbreak"], ["last", ""]])
    }

    @Test func theAliasIsTheUserUnlessItIsAnonymous() throws {
        let file = try export(
            "transactions.csv",
            [
                "$RCAnonymousID:bb;$RCAnonymousID:bb;;pro;2024-01-01 00:00:00;;app_store;f;f;f;7;7;;;;1;;;",
                "$RCAnonymousID:cc;known_user;;pro;2024-01-01 00:00:00;;app_store;f;f;f;8;8;;;;1;FAMILY_SHARED;;",
            ]
        )
        let read = try RevenueCatExport(files: [file])
        #expect(read.subscriptions.map(\.user) == ["$RCAnonymousID:bb", "known_user"])
        #expect(read.subscriptions.map { $0.transactions[0].isAnonymous } == [true, false])
        #expect(read.subscriptions[1].transactions[0].isFamilyShared)
    }

    @Test func aRowThatCannotBeReadIsSkippedWithItsPlaceAndReason() throws {
        let file = try export(
            "transactions.csv",
            [
                "u;u;;pro;yesterday;;app_store;f;f;f;1;1;;;;1;;;",
                "u;u;;pro;2024-01-01 00:00:00;;app_store;f;f;f;;1;;;;1;;;",
                "u;u;;pro;2024-01-01 00:00:00;;app_store;f;f;f;3;3;;;;1;;;",
            ]
        )
        let read = try RevenueCatExport(files: [file])
        #expect(read.subscriptions.count == 1)
        #expect(read.skipped.map(\.line) == [2, 3])
        #expect(read.skipped[0].reason == #"start_time "yesterday" is not a time"#)
        #expect(read.skipped[1].reason == "store_transaction_id is empty")
    }

    @Test func aFileThatIsNoExportIsRefusedNamingWhatIsMissing() throws {
        let path = directory.path + "/other.csv"
        try "id,name\n1,a\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect {
            _ = try RevenueCatExport(files: [path])
        } throws: { error in
            "\(error)".contains("its header lacks rc_original_app_user_id, product_identifier")
        }
        #expect(throws: RevenueCatExport.FileFailure.self) { _ = try RevenueCatExport(files: [directory.path + "/missing.csv.gz"]) }
    }

    @Test func aLargeExportIsReadAcrossManyChunks() throws {
        var lines: [String] = []
        for index in 0..<20_000 {
            lines.append("u\(index);u\(index);;pro;2024-01-01 00:00:00;2024-02-01 00:00:00;play_store;true;false;false;GPA.\(index);GPA.\(index);;;;1;;;{\"k\": \"\(String(repeating: "x", count: 40))\"}")
        }
        let read = try RevenueCatExport(files: [try export("big.csv", lines)])
        #expect(read.rowsRead == 20_000)
        #expect(read.subscriptions.count == 20_000)
        #expect(read.subscriptions.last?.user == "u19999")
    }
}
