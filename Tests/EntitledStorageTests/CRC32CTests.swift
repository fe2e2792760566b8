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
