import Testing

@testable import EntitledStorage

@Suite struct CRC32CTests {
    @Test func theChecksumOfTheStandardCheckStringIsTheCastagnoliCheckValue() {
        // The check value of CRC-32C ("123456789"), as published with the algorithm (RFC 3720, iSCSI).
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checksum([]) == 0)
    }

    @Test func checksummingInPiecesGivesTheSameResultAsAllAtOnce() {
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        for cut in [0, 1, 7, 8, 9, 500, 999, 1000] {
            let first = bytes[..<cut].withUnsafeBytes { CRC32C.update(0, with: $0) }
            let whole = bytes[cut...].withUnsafeBytes { CRC32C.update(first, with: $0) }
            #expect(whole == CRC32C.checksum(bytes))
        }
    }
}

/// The CPU's `crc32` instruction and the tables give the same checksums, at every length and alignment:
/// every log and snapshot written by one is read back by the other on another machine.
@Suite struct CRC32CHardwareTests {
    @Test(.enabled(if: CRC32C.usesHardware, "this CPU has no CRC-32C instruction: only the tables are used, tested above"))
    func theInstructionAndTheTablesAgreeAtEveryLengthAndOffset() {
        let bytes = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 17) }
        bytes.withUnsafeBytes { all in
            for start in 0..<9 {
                for end in start...all.count {
                    let piece = UnsafeRawBufferPointer(rebasing: all[start..<end])
                    for seed: UInt32 in [0, 0xDEAD_BEEF] {
                        #expect(CRC32C.update(seed, with: piece) == CRC32C.updateWithTables(seed, with: piece), "bytes \(start)..<\(end)")
                    }
                }
            }
        }
        #expect(CRC32C.updateWithTables(0, with: UnsafeRawBufferPointer(start: nil, count: 0)) == 0)
    }
}
