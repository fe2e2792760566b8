/// The pieces the fuzzer builds hostile values from: each is here because decoders get it wrong.
///
/// Strings are raw bytes between the quotes (escapes as written), so they can also hold what no JSON
/// encoder would write: lone surrogates, overlong and truncated UTF-8, raw control characters.
enum NastyFragments {
    /// Escapes, valid and not.
    static let escapes: [[UInt8]] = [
        #"\u0000"#, #"\ud800"#, #"\udc00"#, #"\ud800\udc00"#, #"\ud83d\ude00"#, #"\uDBFF\uDFFF"#, #"\ud800\u0041"#,
        #"\ud800x"#, #"\ud800\"#, #"\udbff\ud800"#, #"\u00e9"#, #"\u0041"#, #"\u0070\u0069\u006e\u0067"#, #"\/"#,
        #"\b\f\n\r\t"#, #"\""#, #"\\"#, #"\x41"#, #"\u12"#, #"\u00g1"#, #"\"#, #"\u"#, #"\U0041"#, #"\uFFFF"#,
        #"\uFEFF"#, #"\u2028"#, #"\u001f"#, #"\'"#, #"\0"#,
    ].map { Array($0.utf8) }

    /// Raw bytes inside a string: control characters, invalid and overlong UTF-8, and valid multi-byte
    /// characters next to them.
    static let rawBytes: [[UInt8]] = [
        [0x00], [0x01], [0x09], [0x0A], [0x0D], [0x1F], [0x7F],
        [0xC0, 0xAF], [0xC1, 0xBF], [0xE0, 0x80, 0xAF], [0xF0, 0x80, 0x80, 0xAF],  // overlong
        [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF],  // surrogates encoded in UTF-8
        [0xFF], [0xFE], [0x80], [0xBF], [0xC3], [0xE2, 0x82], [0xF0, 0x9F, 0x98],  // stray or truncated
        [0xF4, 0x90, 0x80, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80],  // beyond U+10FFFF
        [0xC3, 0xA9], [0xF0, 0x9F, 0x98, 0x80], [0xEF, 0xBB, 0xBF], [0xE2, 0x80, 0xA8], [0xEF, 0xBF, 0xBF],  // valid
        [0xCC, 0x81], [0x65, 0xCC, 0x81],  // a combining mark, alone and after an "e"
    ]

    /// Plain text, identifiers and names that mean something to some field.
    static let plain: [[UInt8]] = [
        "", " ", "u1", "d1", "prod_pro", "pro", "ping", "check", "a", "mem_0000000000000", "mem_fzzzzzzzzzzzz",
        "mem_gzzzzzzzzzzzz", "mem_000000000000O", "MEM_0000000000000", "mem_00000000000000", "stripe", "app_store",
        "APP_STORE", "renewal", "billing_issue", "product_change", "trial", "sandbox", "family_shared", "offer_code",
        "true", "null", "{}", "[]", "\u{1F600}", "é", "ｐｉｎｇ", "null\u{0}",
    ].map { Array($0.utf8) }

    /// Times, valid and not: the RFC 3339 parser is exposed to every `at` and `expiresAt`.
    static let times: [[UInt8]] = [
        "2026-01-01T00:00:00Z", "2026-12-01T00:00:00.5+01:00", "2026-13-01T00:00:00Z", "2026-02-29T00:00:00Z",
        "2028-02-29T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01T23:59:60Z", "2026-04-31T00:00:00Z",
        "2026-01-01T00:00:00.000000000000000000000000001Z", "2026-01-01T00:00:00.99999999999999999999999Z",
        "9999-12-31T23:59:59.999999999Z", "0000-01-01T00:00:00Z", "0001-01-01T00:00:00-23:59",
        "2026-01-01T00:00:00+99:99", "2026-01-01T00:00:00+24:00", "2026-01-01t00:00:00z", "2026-01-01 00:00:00Z",
        "2026-01-01T00:00Z", "2026-01-01", "+2026-01-01T00:00:00Z", "99999-01-01T00:00:00Z",
        "2026-01-01T00:00:00.Z", "2026-01-01T00:00:00,5Z", "2026-01-01T00:00:00", "2026-1-1T0:0:0Z",
        "２０２６-01-01T00:00:00Z", "-001-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "1970-01-01T00:00:00-00:01",
    ].map { Array($0.utf8) }

    /// Durations, valid and not: overflow is the classic bug of a hand-written number parser.
    static let durations: [[UInt8]] = [
        "30d", "1s", "1m", "1h", "1w", "0d", "0s", "-1d", "1", "d", "", "1y", "1.5d", "1e3s", "1D", " 1d", "1d ",
        "00001d", "9223372036854775807s", "9223372036854775808s", "9223372036854775807w", "15250284452471w",
        "99999999999999999999999d", "١d", "+1d", "1 d", "1dd",
    ].map { Array($0.utf8) }

    /// Numbers, valid and not, for any field and for `id`: huge, tiny, negative zero, and what only looks
    /// like a number.
    static let numbers: [[UInt8]] = [
        "0", "-0", "1", "-1", "1.5", "1e2", "1E-2", "0.0", "-0.0", "1e400", "-1e400", "1e-400", "1E+999999999",
        String(repeating: "9", count: 400), "-" + String(repeating: "1", count: 400), "123456789", "999999999", "1000",
        "1001", "1234567890", "9223372036854775807", "9223372036854775808", "18446744073709551616",
        "-9223372036854775809", "1" + String(repeating: "0", count: 309), "1e308", "2e308", "0.000001e-300",
        "01", "1.", ".5", "+1", "-", "1e", "1e+", "0x10", "NaN", "Infinity", "-Infinity", "1_000", "١",
    ].map { Array($0.utf8) }

    /// Keys: the protocol's, spelled with escapes or in another case, near misses, and oddities.
    static let keys: [[UInt8]] = [
        #"\u006fp"#, #"\u0069d"#, #"us\u0065r"#, "Op", "OP", "op ", " op", #"o\u0000p"#, "", "i", "idd", "userr",
        "usér", "ｏｐ", "__proto__", "constructor", "x", "extra", "limit", "all", "token", "products",
    ].map { Array($0.utf8) } + [Array(repeating: UInt8(ascii: "k"), count: 300)]

    /// Values for `op`: every operation, and what is almost one.
    static let ops: [[UInt8]] = [
        "ping", "hello", "grant", "check", "claim", "revoke", "memberships", "define", "catalog", "snapshot", "event",
        "customer", "history", "watch", "unwatch", "auth", "stats", "reload", "undefine", "erase", "extend", "extnd", "extends", "relaod", "revoad", "stat", "statss", "PING", "Ping", "pin", "pingg", "", #"p\u0069ng"#,
        #"\u0063heck"#, #"ping\u0000"#, "grant ", "refund", "unwatch_all", "ｐｉｎｇ", "memberships\u{0}", "chec",
        "chack", "clam", "evnt", "histories", "aut",
    ].map { Array($0.utf8) }

    /// Bytes that matter to a JSON scanner, for byte-level mutations.
    static let interestingBytes: [UInt8] = Array(#""\{}[],: -+.0123456789eEtfnu"#.utf8) + [
        0x00, 0x01, 0x09, 0x0A, 0x0D, 0x1F, 0x7F, 0x80, 0xBF, 0xC0, 0xC3, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF8, 0xFF,
    ]

    /// Short token sequences spliced into a line.
    static let tokens: [[UInt8]] = [
        "{", "}", "[", "]", "[1,", ",", ":", "\"", "\\", "null", "true", "fals", "\r", "\n", "\u{FEFF}", "{}", "[]",
        ",\"x\":1", "\"op\":\"ping\",", "\"id\":", "{\"op\":\"ping\"}", " x", "\u{0}",
    ].map { Array($0.utf8) }

    /// A string of 1 to 4 fragments, now and then repeated to a length at a limit (256 bytes for an
    /// identifier or reason, 1024 for a token) or far beyond it.
    static func string(random: inout SplitMix64, field: String? = nil) -> [UInt8] {
        if random.percent(8) { return longString(random: &random) }
        var text: [UInt8] = []
        for _ in 0..<random.number(in: 1...4) {
            switch (field, random.below(10)) {
            case ("at", 0..<6), ("expiresAt", 0..<6), ("eventTime", 0..<6), ("gracePeriodExpiresAt", 0..<6):
                text += random.pick(times)
            case ("duration", 0..<6): text += random.pick(durations)
            case ("op", 0..<6): text += random.pick(ops)
            case (_, 0..<3): text += random.pick(escapes)
            case (_, 3..<6): text += random.pick(rawBytes)
            default: text += random.pick(plain)
            }
        }
        return text
    }

    /// A fragment repeated around a limit: `count` characters of one to six bytes (or escapes) each;
    /// rarely far beyond the line limit, which is the framing's to enforce, not the decoder's.
    private static func longString(random: inout SplitMix64) -> [UInt8] {
        let unit = random.pick(longUnits)
        let count = random.percent(2) ? 70_000 : random.pick([64, 128, 255, 256, 257, 1023, 1024, 1025])
        // By doubling: byte-by-byte joins are slow in the debug builds tests run in.
        var text = unit
        while text.count < unit.count * count { text += text }
        text.removeLast(text.count - unit.count * count)
        return text
    }

    private static let longUnits = ["a", "é", #"\u0000"#, #"\ud83d\ude00"#, #"\""#, "\u{1F600}"].map { Array($0.utf8) }
}
