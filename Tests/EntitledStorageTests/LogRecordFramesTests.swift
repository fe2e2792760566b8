import EntitledCore
import Testing

@testable import EntitledStorage

/// `LogRecordFrames`, the one reader of a segment's record frames (Protocol/STORAGE.md §3), on segments
/// built in memory and damaged by hand: what each frame is, and which bad frames are torn tails.
@Suite struct LogRecordFramesTests {
    /// A segment header and `count` define records, and where each record starts.
    static func segment(records count: Int, products: Int = 3) -> (bytes: [UInt8], starts: [Int]) {
        var bytes = LogFormat.segmentHeader(firstSequence: 1)
        var starts: [Int] = []
        for sequence in 1...UInt64(count) {
            starts.append(bytes.count)
            let change = StoreChange.define(entitlement: "e\(sequence)", products: (0..<products).map { "product-\(sequence)-\($0)" })
            let context = ChangeContext(recordedAt: Timestamp(millisecondsSinceEpoch: 1_700_000_000_000))
            LogFormat.appendRecord(LoggedChange(sequence: sequence, change: change, context: context), to: &bytes)
        }
        return (bytes, starts)
    }

    /// Every frame `next()` yields, as `record@start` or `reason@start`, and where unused space starts.
    static func frames(of bytes: [UInt8]) -> (frames: [String], unusedSpace: Int?) {
        bytes.withUnsafeBytes { raw in
            var frames = LogRecordFrames(raw)
            var found: [String] = []
            while let frame = frames.next() {
                switch frame {
                case .record(let record): found.append("record@\(record.start)")
                case .bad(let bad): found.append("\(bad.reason)@\(bad.start)")
                }
            }
            return (found, frames.unusedSpaceOffset)
        }
    }

    /// The first bad frame of `bytes`, and whether it is a torn tail.
    static func firstBadFrame(of bytes: [UInt8]) -> (frame: LogRecordFrames.BadFrame, torn: Bool)? {
        bytes.withUnsafeBytes { raw in
            var frames = LogRecordFrames(raw)
            while let frame = frames.next() {
                if case .bad(let bad) = frame { return (bad, frames.isTornTail(bad)) }
            }
            return nil
        }
    }

    /// A record framed as STORAGE.md section 3 says, by hand: a header (payload length, payload CRC-32C,
    /// CRC-32C of those 8 bytes) before the payload as a `BinaryWriter` writes it.
    static func framedByHand(_ logged: LoggedChange) -> [UInt8] {
        var payload = BinaryWriter()
        payload.write(logged)
        var framed: [UInt8] = []
        withUnsafeBytes(of: UInt32(payload.bytes.count).littleEndian) { framed.append(contentsOf: $0) }
        withUnsafeBytes(of: CRC32C.checksum(payload.bytes).littleEndian) { framed.append(contentsOf: $0) }
        let headerChecksum = CRC32C.checksum(framed)
        withUnsafeBytes(of: headerChecksum.littleEndian) { framed.append(contentsOf: $0) }
        return framed + payload.bytes
    }

    /// Records framed on the stack (up to `scratchRecordCapacity` bytes) and in the array itself (longer),
    /// mixed in one segment: each is framed byte for byte as by hand, and read back whole with its change.
    @Test func recordsFramedOnTheStackAndInTheArrayAreFramedAlike() throws {
        let context = ChangeContext(actor: "console", reason: "import", recordedAt: Timestamp(millisecondsSinceEpoch: 1_700_000_000_000))
        func record(named name: String, products: Int = 0) -> StoreChange {
            .define(entitlement: name, products: (0..<products).map { "product-with-a-long-name-\($0)" })
        }
        // A definition whose whole record is exactly `length` bytes, found by growing its name.
        func record(ofLength length: Int) -> StoreChange {
            var name = "e"
            while Self.framedByHand(LoggedChange(sequence: 1, change: record(named: name), context: context)).count < length { name += "e" }
            return record(named: name)
        }
        let capacity = LogFormat.scratchRecordCapacity
        let changes = [
            record(named: "pro", products: 1), record(named: "many", products: 300), record(ofLength: capacity),
            record(ofLength: capacity + 1), record(named: "pro", products: 2),
        ]
        var bytes = LogFormat.segmentHeader(firstSequence: 1)
        var starts: [Int] = []
        for (index, change) in changes.enumerated() {
            starts.append(bytes.count)
            let logged = LoggedChange(sequence: UInt64(index + 1), change: change, context: context)
            LogFormat.appendRecord(logged, to: &bytes)
            #expect(Array(bytes[starts[index]...]) == Self.framedByHand(logged), "record \(index + 1)")
        }
        #expect(starts[2] - starts[1] > capacity, "the second record must not fit the stack buffer")
        #expect(starts[3] - starts[2] == capacity && starts[4] - starts[3] == capacity + 1)
        #expect(Self.frames(of: bytes).frames == starts.map { "record@\($0)" })
        let read = bytes.withUnsafeBytes { raw in
            var frames = LogRecordFrames(raw)
            var logged: [LoggedChange] = []
            while case .record(let record) = frames.next() {
                var reader = BinaryReader(record.payload)
                if let change = try? reader.readLoggedChange(version: LogFormat.version) { logged.append(change) }
            }
            return logged
        }
        #expect(read.map(\.change) == changes)
        #expect(read.map(\.context) == Array(repeating: context, count: changes.count))
    }

    @Test func anIntactSegmentYieldsEveryRecordAndItsPayloadThenEnds() throws {
        let (bytes, starts) = Self.segment(records: 5)
        let read = Self.frames(of: bytes)
        #expect(read.frames == starts.map { "record@\($0)" })
        #expect(read.unusedSpace == nil)
        let payloads = bytes.withUnsafeBytes { raw in
            var frames = LogRecordFrames(raw)
            var sequences: [UInt64] = []
            while case .record(let record) = frames.next() {
                var reader = BinaryReader(record.payload)
                sequences.append((try? reader.readLoggedChange(version: LogFormat.version))?.sequence ?? 0)
            }
            return sequences
        }
        #expect(payloads == [1, 2, 3, 4, 5])
    }

    @Test func zerosAfterTheLastRecordAreUnusedSpaceNotAFrame() {
        let (bytes, starts) = Self.segment(records: 3)
        let read = Self.frames(of: bytes + [UInt8](repeating: 0, count: 3_000))
        #expect(read.frames == starts.map { "record@\($0)" })
        #expect(read.unusedSpace == bytes.count)
    }

    @Test func aFileEndingInsideARecordHeaderIsAShortHeaderAndATornTail() throws {
        let (bytes, starts) = Self.segment(records: 4)
        let bad = try #require(Self.firstBadFrame(of: Array(bytes[..<(starts[3] + 7)])))
        #expect(bad.frame == LogRecordFrames.BadFrame(start: starts[3], reason: .shortHeader))
        #expect(bad.torn)
    }

    @Test func aFileEndingInsideAPayloadIsATruncatedPayloadAndATornTail() throws {
        let (bytes, starts) = Self.segment(records: 4)
        let bad = try #require(Self.firstBadFrame(of: Array(bytes.dropLast(5))))
        #expect(bad.frame.start == starts[3])
        #expect(bad.frame.reason == .truncatedPayload(length: bytes.count - starts[3] - LogFormat.recordHeaderLength))
        #expect(bad.torn)
    }

    @Test func aFlippedLengthByteFailsTheHeaderChecksumAndIsNamedAtTheRecordsStart() throws {
        var (bytes, starts) = Self.segment(records: 6)
        bytes[starts[2] + 1] ^= 0x5A
        let read = Self.frames(of: bytes)
        #expect(read.frames == ["record@\(starts[0])", "record@\(starts[1])", "headerChecksumMismatch@\(starts[2])"])
        let bad = try #require(Self.firstBadFrame(of: bytes))
        #expect(bad.frame.offset == starts[2])
        #expect(bad.frame.problem == "a record header fails its checksum")
        #expect(!bad.torn, "records follow it within its sector: damage, not a torn write")
    }

    @Test func aFlippedPayloadByteFailsThePayloadChecksumAndIsNamedAtThePayloadsStart() throws {
        var (bytes, starts) = Self.segment(records: 6)
        bytes[starts[2] + LogFormat.recordHeaderLength + 10] ^= 0x5A
        let bad = try #require(Self.firstBadFrame(of: bytes))
        #expect(bad.frame.reason == .payloadChecksumMismatch(length: starts[3] - starts[2] - LogFormat.recordHeaderLength))
        #expect(bad.frame.offset == starts[2] + LogFormat.recordHeaderLength)
        #expect(bad.frame.problem == "a record fails its checksum")
        #expect(!bad.torn)
    }

    @Test func aLengthOverTheLimitIsABadLengthAndNeverATornTail() throws {
        let (bytes, _) = Self.segment(records: 2)
        var writer = BinaryWriter(capacity: LogFormat.recordHeaderLength)
        writer.write(UInt32(LogFormat.maximumPayloadLength + 1))
        writer.write(UInt32(0))
        writer.write(CRC32C.checksum(writer.bytes))
        let bad = try #require(Self.firstBadFrame(of: bytes + writer.bytes))
        #expect(bad.frame == LogRecordFrames.BadFrame(start: bytes.count, reason: .badLength(LogFormat.maximumPayloadLength + 1)))
        #expect(bad.frame.problem == "a record claims \(LogFormat.maximumPayloadLength + 1) bytes, more than any record has")
        #expect(!bad.torn, "even at the end of the file")
    }

    @Test func aRecordThatFailsItsChecksumAndReachesASectorNeverWrittenIsATornTail() throws {
        let sector = LogRecordFrames.sectorLength
        let (bytes, starts) = Self.segment(records: 40)
        // A record crossing a sector boundary, whose sector after the boundary never reached the disk.
        let index = try #require(starts.indices.dropLast().first { starts[$0] / sector != (starts[$0 + 1] - 1) / sector })
        let boundary = (starts[index + 1] - 1) / sector * sector
        var torn = bytes
        torn.replaceSubrange(boundary..<(boundary + sector), with: [UInt8](repeating: 0, count: sector))
        let bad = try #require(Self.firstBadFrame(of: torn))
        #expect(bad.frame.start == starts[index])
        #expect(bad.torn)
    }

    @Test func theCountOfRecordsACutDropsSkipsIntactHeadersAndCountsADamagedStretchOnce() throws {
        var (bytes, starts) = Self.segment(records: 12)
        bytes[starts[4] + 1] ^= 0x5A  // record 5's header: its length is lost
        bytes[starts[8] + 20] ^= 0x5A  // record 9's payload: its header still says where record 10 starts
        let count = bytes.withUnsafeBytes { LogRecordFrames($0).estimatedRecordCount(from: starts[4]) }
        #expect(count == 8)
        let zeros = (bytes + [UInt8](repeating: 0, count: 700)).withUnsafeBytes {
            LogRecordFrames($0).estimatedRecordCount(from: starts[4])
        }
        #expect(zeros == 8, "zeros after the records are no record")
    }
}
