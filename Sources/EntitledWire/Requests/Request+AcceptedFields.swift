extension Request.Operation {
    /// The fields a request of this operation may have, one `RequestField.bit` each, `op` and `id`
    /// included: the one place that says which fields each operation takes. The decoder refuses a request
    /// with any other field (`RequestFields.seen & ~acceptedFields`, one AND on the check path), and
    /// `hello` lists them (`acceptedFieldNames`).
    ///
    /// A switch of constant expressions, which the optimizer folds to one constant per case: a `static let`
    /// table would cost a lazy-initialisation check on every request.
    @inline(__always)
    var acceptedFields: UInt64 {
        let always = RequestField.op.bit | RequestField.id.bit
        switch self {
        case .ping, .hello, .catalog, .snapshot, .stats, .reload:
            return always
        case .auth:
            return always | RequestField.token.bit
        case .check:
            return always | RequestField.user.bit | RequestField.device.bit | RequestField.product.bit
                | RequestField.entitlement.bit | RequestField.at.bit | RequestField.minSeq.bit
        case .grant:
            return always | RequestField.user.bit | RequestField.device.bit | RequestField.product.bit
                | RequestField.plan.bit | RequestField.source.bit | RequestField.expiresAt.bit | RequestField.duration.bit
                | RequestField.transactionId.bit | RequestField.originalTransactionId.bit | RequestField.willRenew.bit
                | RequestField.periodType.bit | RequestField.environment.bit | RequestField.ownership.bit
                | RequestField.grantType.bit | RequestField.idempotencyKey.bit | RequestField.reason.bit
                | RequestField.purchasedAt.bit | RequestField.renewsCount.bit
        case .claim:
            return always | RequestField.device.bit | RequestField.user.bit | RequestField.reason.bit
        case .revoke:
            return always | RequestField.membership.bit | RequestField.reason.bit
        case .memberships:
            return always | RequestField.user.bit | RequestField.device.bit | RequestField.transactionId.bit
                | RequestField.originalTransactionId.bit | RequestField.at.bit | RequestField.minSeq.bit
                | RequestField.limit.bit | RequestField.after.bit | RequestField.source.bit | RequestField.endedAfter.bit
        case .define:
            return always | RequestField.entitlement.bit | RequestField.products.bit | RequestField.reason.bit
        case .event:
            return always | RequestField.membership.bit | RequestField.type.bit | RequestField.eventId.bit
                | RequestField.eventTime.bit | RequestField.expiresAt.bit | RequestField.gracePeriodExpiresAt.bit
                | RequestField.product.bit | RequestField.transactionId.bit | RequestField.reason.bit
        case .customer:
            return always | RequestField.user.bit | RequestField.device.bit | RequestField.minSeq.bit
        case .history:
            return always | RequestField.user.bit | RequestField.device.bit | RequestField.entitlement.bit
                | RequestField.limit.bit | RequestField.erasures.bit | RequestField.after.bit
        case .undefine:
            return always | RequestField.entitlement.bit | RequestField.reason.bit
        case .erase:
            return always | RequestField.user.bit | RequestField.device.bit | RequestField.reason.bit
        case .extend:
            return always | RequestField.membership.bit | RequestField.expiresAt.bit | RequestField.duration.bit
                | RequestField.reason.bit
        case .watch, .unwatch:
            return always | RequestField.user.bit | RequestField.device.bit | RequestField.all.bit
        case .changes:
            return always | RequestField.afterSeq.bit | RequestField.limit.bit | RequestField.wait.bit | RequestField.user.bit
                | RequestField.device.bit
        case .export:
            return always | RequestField.after.bit | RequestField.limit.bit | RequestField.history.bit
        }
    }

    /// The fields of `acceptedFields` besides `op` and `id` (which every operation takes), in the order of
    /// PROTOCOL.md's field table.
    var acceptedFieldList: [RequestField] {
        RequestField.allCases.filter { $0 != .op && $0 != .id && acceptedFields & $0.bit != 0 }
    }

    /// The names of the fields this operation takes besides `op` and `id`, as `hello` lists them.
    public var acceptedFieldNames: [String] {
        acceptedFieldList.map(\.description)
    }
}
