import Testing

@testable import EntitledWire

/// Field and operation names are matched on their bytes by hand-written tables; these prove the tables
/// agree with the names, and that a name is only ever matched whole.
@Suite struct NameMatchingTests {
    private func withBytes<Result>(_ text: String, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        var text = text
        return text.withUTF8 { body(UnsafeRawBufferPointer($0)) }
    }

    @Test func everyFieldIsMatchedByItsOwnName() {
        for field in RequestField.allCases {
            #expect(withBytes(field.name.description) { RequestField.matching($0) } == field)
        }
    }

    @Test func everyOperationIsMatchedByItsOwnName() {
        for operation in Request.Operation.allCases {
            #expect(operation.wireName.description == operation.rawValue)
            #expect(withBytes(operation.rawValue) { Request.Operation(utf8: $0) } == operation)
        }
    }

    @Test func namesOffByOneByteOrOfAnotherLengthMatchNothing() {
        var names = RequestField.allCases.map(\.name.description)
        names += Request.Operation.allCases.map(\.rawValue)
        for name in names {
            let bytes = Array(name.utf8)
            var variants = [String(decoding: bytes.dropLast(), as: UTF8.self), name + "s", name + "x", name.uppercased()]
            for index in bytes.indices {
                var changed = bytes
                changed[index] ^= 0x01
                variants.append(String(decoding: changed, as: UTF8.self))
            }
            for variant in variants where !names.contains(variant) {
                #expect(withBytes(variant) { RequestField.matching($0) } == nil, "\(variant)")
                #expect(withBytes(variant) { Request.Operation(utf8: $0) } == nil, "\(variant)")
            }
        }
        #expect(withBytes("") { RequestField.matching($0) } == nil)
        #expect(withBytes("") { Request.Operation(utf8: $0) } == nil)
    }
}
