import EntitledConsole
import Testing

/// An `event` missing what its type needs (or given what it refuses) is refused before it is sent, in the
/// console's words (`until TIME`, `product=`), not the wire's (`expiresAt`).
@Suite struct EventArgumentsTests {
    func reason(_ line: String) throws -> String {
        guard case .badArguments(_, let reason)? = usageError(line) else {
            Issue.record("\(line) was not refused as bad arguments: \(String(describing: usageError(line)))")
            return ""
        }
        return reason
    }

    @Test func aRenewalOrExtensionWithoutUntilSaysToTypeUntil() throws {
        #expect(try reason("event mem_x renewal id=e1") == "renewal needs `until TIME`: the new end of the period, such as until 2027-01-01")
        #expect(try reason("event mem_x extension id=e1").hasPrefix("extension needs `until TIME`"))
        #expect(try !reason("event mem_x renewal id=e1").contains("expiresAt"))
    }

    @Test func aProductChangeWithoutProductSaysToTypeProduct() throws {
        #expect(try reason("event mem_x product_change id=e1") == "product_change needs `product=PRODUCT`: the product the subscription moved to")
    }

    @Test func argumentsATypeDoesNotTakeAreRefusedNamingWhichTypesTakeThem() throws {
        #expect(try reason("event mem_x cancellation id=e1 until 2027-01-01") == "cancellation does not take `until TIME` (only renewal, extension and resume do)")
        #expect(try reason("event mem_x refund id=e1 product=p2") == "refund does not take `product=` (only product_change does)")
        #expect(try reason("event mem_x renewal id=e1 until 2027-01-01 grace=2027-02-01") == "renewal does not take `grace=` (only billing_issue does)")
    }

    @Test func theTypesThatTakeAnArgumentOptionallyGoThrough() throws {
        #expect(try sentRequest("event mem_x resume id=e1 at=2026-12-01")?.line.contains(#""type":"resume""#) == true)
        #expect(try sentRequest("event mem_x billing_issue id=e1 at=2026-12-01")?.line.contains(#""type":"billing_issue""#) == true)
        #expect(try sentRequest("event mem_x billing_issue id=e1 at=2026-12-01 grace=2027-01-01")?.line.contains(#""gracePeriodExpiresAt""#) == true)
    }

    @Test func aTypeTheConsoleDoesNotKnowIsLeftToTheServer() throws {
        #expect(try sentRequest("event mem_x frobnicated id=e1 until 2027-01-01")?.line.contains(#""expiresAt""#) == true)
    }
}
