/// One write to the store, as a request: what is asked for and by whom. The store decides it
/// (`EntitlementStore.decide`) into the change it makes, then applies that change, at once for a single
/// server (`perform`) or once a cluster committed it (`carryOut`).
///
/// `indirect`, as `StoreChange` is: a write travels from the decoder through the connection and the
/// backend to the store, and each hand-over copied its 169 bytes through the runtime's value witnesses.
/// One allocation for its box costs less: a bulk load of 1M grants, three alternated runs (release, 2
/// cores), 2.82-2.83 against 3.26-3.31 µs of server CPU per grant.
public indirect enum StoreWrite: Sendable {
    /// A purchase or a manual grant (`EntitlementStore.grant`).
    case grant(Grant, author: ChangeAuthor, transfers: TransferRule)
    /// A user logs in on a device (`EntitlementStore.claimMemberships`).
    case claim(device: String, user: String, author: ChangeAuthor)
    /// A refund, chargeback or manual revocation (`EntitlementStore.revoke`); `reason` is also the
    /// audit trail's.
    case revoke(MembershipID, reason: String?, actor: String)
    /// The products that unlock an entitlement (`EntitlementStore.define`).
    case define(entitlement: String, products: [String], author: ChangeAuthor)
    /// An entitlement leaves the catalog (`EntitlementStore.undefine`).
    case undefine(entitlement: String, author: ChangeAuthor)
    /// A store's lifecycle event for a membership (`EntitlementStore.apply(_:to:by:)`).
    case event(LifecycleEvent, membership: MembershipID, author: ChangeAuthor)
    /// A manual extension of a membership's expiry (`EntitlementStore.extend`).
    case extend(MembershipID, ExpiryExtension, author: ChangeAuthor)
    /// A person is forgotten (`EntitlementStore.erase`).
    case erase(Subject, author: ChangeAuthor)
}
