extension EntitlementStore {
    /// The CustomerInfo view of what `subject` sees, at `moment` (now if `nil`).
    /// - Throws: `StoreError.subjectTooLarge` for a subject that sees more than
    ///   `Limits.maximumMembershipsPerSubjectRead` memberships: the view is built from every one of them.
    public func customerInfo(of subject: Subject, at moment: Timestamp? = nil) throws(StoreError) -> CustomerInfo {
        let moment = moment ?? now()
        let (memberships, catalog) = try lock.withReadLock { () throws(StoreError) in
            let count = state.visibleSlotCount(of: subject)
            guard count <= Limits.maximumMembershipsPerSubjectRead else { throw .subjectTooLarge(subject, operation: "customer", size: .memberships(count)) }
            return (state.visibleSlots(of: subject).map { state.memberships[$0] }, state.catalog.map { (entitlement: $0.key, products: $0.value.sorted) })
        }
        return CustomerInfo(memberships: memberships, catalog: catalog, at: moment)
    }
}

