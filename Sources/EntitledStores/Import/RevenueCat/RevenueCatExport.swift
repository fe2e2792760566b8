import CompressNIO
import Foundation
import NIOCore

/// A RevenueCat transactions export read whole: gzip-compressed (or plain) semicolon-delimited files, as
/// RevenueCat delivers them ("gzip compressed .csv files ... The exports use a semicolon delimiter",
/// https://www.revenuecat.com/docs/integrations/scheduled-data-exports), grouped into subscriptions.
///
/// An export is incremental: a transaction that changed (a refund, a cancellation noticed later) comes
/// again in a later file. The newest row of each transaction wins: files are read in the order given (give
/// them oldest first, as their names' timestamps sort), rows in file order. Rows of the same
/// `original_store_transaction_id` and store are one subscription.
public struct RevenueCatExport: Sendable {
    /// One subscription (or one-time purchase): its transactions oldest first.
    public struct Subscription: Sendable, Hashable {
        public var store: String
        public var originalTransactionID: String
        public var transactions: [RevenueCatTransaction]

        /// The user of its newest transaction: the one who holds it now.
        public var user: String { transactions.last!.user }
    }

    /// A row that could not be read, with its place.
    public struct RowFailure: Error, Sendable, Hashable, CustomStringConvertible {
        public var reason: String
        public var file = ""
        public var line = 0

        init(_ reason: String) { self.reason = reason }

        public var description: String { "\(file), row \(line): \(reason)" }
    }

    /// Why a file cannot be read at all.
    public struct FileFailure: Error, Sendable, CustomStringConvertible {
        public var file: String
        public var reason: String
        public var description: String { "\(file): \(reason)" }
    }

    public private(set) var subscriptions: [Subscription] = []
    /// Rows skipped, with why.
    public private(set) var skipped: [RowFailure] = []
    /// Rows read, repeats included.
    public private(set) var rowsRead = 0

    /// Reads `files` in order.
    public init(files: [String]) throws(FileFailure) {
        var byKey: [String: Int] = [:]
        var transactions: [[RevenueCatTransaction]] = []
        var stores: [(String, String)] = []
        for file in files {
            try Self.rows(of: file) { (row, line, columns) throws(FileFailure) in
                rowsRead += 1
                let transaction: RevenueCatTransaction
                do throws(RowFailure) {
                    transaction = try RevenueCatTransaction(row, columns: columns)
                } catch {
                    var failure = error
                    failure.file = file
                    failure.line = line
                    skipped.append(failure)
                    return
                }
                let key = transaction.store + "\u{0}" + transaction.originalTransactionID
                let index: Int
                if let known = byKey[key] {
                    index = known
                } else {
                    index = transactions.count
                    byKey[key] = index
                    transactions.append([])
                    stores.append((transaction.store, transaction.originalTransactionID))
                }
                if let same = transactions[index].firstIndex(where: { $0.transactionID == transaction.transactionID }) {
                    transactions[index][same] = transaction
                } else {
                    transactions[index].append(transaction)
                }
            }
        }
        subscriptions = zip(stores, transactions).map { key, list in
            Subscription(store: key.0, originalTransactionID: key.1, transactions: list.sorted { ($0.startsAt, $0.transactionID) < ($1.startsAt, $1.transactionID) })
        }
    }

    /// Calls `body` with each row of `file` after its header, the row's line number and the header's columns.
    static func rows(of file: String, _ body: ([String], Int, [String: Int]) throws(FileFailure) -> Void) throws(FileFailure) {
        guard let handle = FileHandle(forReadingAtPath: file) else { throw FileFailure(file: file, reason: "cannot be opened") }
        defer { try? handle.close() }
        var reader = DelimitedTextReader(delimiter: UInt8(ascii: ";"))
        var columns: [String: Int]?
        var line = 0
        func take(_ row: [String]) throws(FileFailure) {
            line += 1
            guard let known = columns else {
                var header: [String: Int] = [:]
                for (index, name) in row.enumerated() {
                    // A byte order mark before the first name, and quotes around names, are not part of them.
                    header[name.trimmingCharacters(in: CharacterSet(charactersIn: "\u{FEFF} \""))] = index
                }
                let missing = RevenueCatTransaction.requiredColumns.filter { header[$0] == nil }
                guard missing.isEmpty else {
                    throw FileFailure(
                        file: file,
                        reason: "is not a RevenueCat transactions export with ';' between columns: its header lacks \(missing.joined(separator: ", "))"
                    )
                }
                columns = header
                return
            }
            try body(row, line, known)
        }
        var decompressor: NIODecompressor?
        var window = ByteBuffer()
        var first = true
        while true {
            let chunk: Data
            do {
                chunk = try handle.read(upToCount: 1 << 16) ?? Data()
            } catch {
                throw FileFailure(file: file, reason: "cannot be read: \(error)")
            }
            if chunk.isEmpty { break }
            if first {
                first = false
                // gzip's magic number (RFC 1952): 1f 8b.
                if chunk.count >= 2, chunk[chunk.startIndex] == 0x1f, chunk[chunk.startIndex + 1] == 0x8b {
                    let gzip = CompressionAlgorithm.gzip().decompressor
                    do {
                        try gzip.startStream()
                    } catch {
                        throw FileFailure(file: file, reason: "cannot start gzip: \(error)")
                    }
                    decompressor = gzip
                    window = ByteBufferAllocator().buffer(capacity: 1 << 18)
                }
            }
            let plain: [[UInt8]]
            if let decompressor {
                var input = ByteBuffer(bytes: chunk)
                var pieces: [[UInt8]] = []
                do {
                    while input.readableBytes > 0 {
                        window.clear()
                        do {
                            try input.decompressStream(to: &window, with: decompressor)
                        } catch let error as CompressNIOError where error == .bufferOverflow {
                            // The window is full: take it and go on.
                        } catch let error as CompressNIOError where error == .inputBufferOverflow {
                            // All of this chunk was taken.
                        }
                        pieces.append(Array(window.readableBytesView))
                        if window.readableBytes == 0, input.readableBytes > 0 {
                            // No progress with input left: the stream ended (trailing bytes are ignored).
                            break
                        }
                    }
                } catch {
                    throw FileFailure(file: file, reason: "is not valid gzip: \(error)")
                }
                plain = pieces
            } else {
                plain = [Array(chunk)]
            }
            for piece in plain {
                let rows: [[String]]
                do {
                    rows = try reader.feed(piece)
                } catch {
                    throw FileFailure(file: file, reason: "holds a field longer than \(error.bytes) bytes: not a RevenueCat export")
                }
                for row in rows { try take(row) }
            }
        }
        if let last = reader.finish() { try take(last) }
        if let decompressor { try? decompressor.finishStream() }
        guard columns != nil else { throw FileFailure(file: file, reason: "is empty: a RevenueCat export starts with a header row") }
    }
}
