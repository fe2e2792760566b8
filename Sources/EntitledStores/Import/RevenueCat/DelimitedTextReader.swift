/// Splits delimited text (RFC 4180 CSV with another delimiter) into rows, fed a chunk of bytes at a time,
/// so that a file of any size is read with flat memory.
///
/// Written here rather than taken from CSV.swift (on this machine): that reader reads an `InputStream` or
/// a whole `String`, while the gzip decoder hands out chunks; and RevenueCat's exports before version 6
/// enclosed their JSON columns in quotes by hand without doubling the quotes inside ("Version 6 removes
/// manual quote enclosure for JSON columns", RevenueCat's Data Export Version 6 change log), which an
/// RFC 4180 reader reads as the end of the field. This one is lenient where RFC 4180 is strict: inside a
/// quoted field, `""` is one quote, and a quote ends the field only when a delimiter, a line end or the
/// end of the input follows it; any other quote is kept as text.
struct DelimitedTextReader {
    let delimiter: UInt8
    /// The longest field taken: a file that is not delimited text (no line end for megabytes) fails early.
    let maximumFieldBytes: Int

    private var field: [UInt8] = []
    private var row: [String] = []
    private var state = State.fieldStart
    /// Rows finished by the last `feed`.
    private var finished: [[String]] = []

    enum State {
        case fieldStart
        case unquoted
        case quoted
        /// A quote inside a quoted field: the end of the field, a doubled quote, or a literal quote.
        case quoteInQuoted
        /// A carriage return outside quotes: a line end when a line feed follows.
        case carriageReturn
    }

    struct TooLong: Error {
        var bytes: Int
    }

    init(delimiter: UInt8, maximumFieldBytes: Int = 1 << 20) {
        self.delimiter = delimiter
        self.maximumFieldBytes = maximumFieldBytes
    }

    /// Reads `bytes` and returns the rows they finished.
    mutating func feed(_ bytes: some Sequence<UInt8>) throws(TooLong) -> [[String]] {
        for byte in bytes { try take(byte) }
        defer { finished.removeAll(keepingCapacity: true) }
        return finished
    }

    /// The last row, when the input does not end with a line end.
    mutating func finish() -> [String]? {
        switch state {
        case .fieldStart where row.isEmpty:
            return nil
        case .carriageReturn:
            state = .fieldStart
            return nil
        default:
            endField()
            state = .fieldStart
            defer { row = [] }
            return row
        }
    }

    private mutating func take(_ byte: UInt8) throws(TooLong) {
        switch state {
        case .fieldStart:
            if byte == UInt8(ascii: "\"") {
                state = .quoted
            } else {
                state = .unquoted
                try plain(byte)
            }
        case .unquoted:
            try plain(byte)
        case .quoted:
            if byte == UInt8(ascii: "\"") { state = .quoteInQuoted } else { try append(byte) }
        case .quoteInQuoted:
            if byte == UInt8(ascii: "\"") {
                try append(byte)
                state = .quoted
            } else if byte == delimiter || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                state = .unquoted
                try plain(byte)
            } else {
                // A quote the writer did not double: text.
                try append(UInt8(ascii: "\""))
                try append(byte)
                state = .quoted
            }
        case .carriageReturn:
            state = .fieldStart
            if byte != UInt8(ascii: "\n") { try take(byte) }
        }
    }

    private mutating func plain(_ byte: UInt8) throws(TooLong) {
        switch byte {
        case delimiter:
            endField()
            state = .fieldStart
        case UInt8(ascii: "\n"):
            endRow()
            state = .fieldStart
        case UInt8(ascii: "\r"):
            endRow()
            state = .carriageReturn
        default:
            try append(byte)
        }
    }

    private mutating func append(_ byte: UInt8) throws(TooLong) {
        guard field.count < maximumFieldBytes else { throw TooLong(bytes: field.count) }
        field.append(byte)
    }

    private mutating func endField() {
        row.append(String(decoding: field, as: UTF8.self))
        field.removeAll(keepingCapacity: true)
    }

    private mutating func endRow() {
        endField()
        // A blank line is no row.
        if !(row.count == 1 && row[0].isEmpty) { finished.append(row) }
        row = []
    }
}
