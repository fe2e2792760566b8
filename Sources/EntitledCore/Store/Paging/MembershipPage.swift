/// One page of a listing of memberships, newest first.
public struct MembershipPage: Sendable {
    /// At most the page's limit, newest first.
    public var memberships: [Membership]
    /// Where the next page starts (its request's `after`): the last membership of this page. `nil` when
    /// this page is the last.
    public var next: MembershipID?

    public init(memberships: [Membership], next: MembershipID?) {
        self.memberships = memberships
        self.next = next
    }
}
