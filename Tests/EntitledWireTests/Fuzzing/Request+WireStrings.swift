import EntitledCore
import EntitledWire

extension Request {
    /// The strings this request took from its line, each with the key it came from: what the fuzz
    /// compares with Foundation's reading of the same line. Enumerations and times are left out: the
    /// decoder checks those against fixed names and formats, not by copying what was sent.
    var stringsByKey: [(key: String, value: String)] {
        func subject(_ subject: Subject) -> [(key: String, value: String)] {
            [subject.user.map { ("user", $0) }, subject.device.map { ("device", $0) }].compactMap { $0 }
        }
        func optional(_ key: String, _ value: String?) -> [(key: String, value: String)] {
            value.map { [(key, $0)] } ?? []
        }
        switch self {
        case .ping, .hello, .catalog, .snapshot, .stats, .reload, .watch(.all), .unwatch(.all), .unwatch(nil), .history(.erasures, _, nil),
            .changes(_, _, _, nil), .export(nil, _, _):
            return []
        case .history(.erasures, _, let after?):
            return [("after", after.text)]
        case .export(let after?, _, _):
            return [("after", after.text)]
        case .changes(_, _, _, let who?):
            return subject(who)
        case .grant(let grant, let reason):
            var strings = subject(grant.subject) + [("product", grant.productId)]
            strings += optional("plan", grant.planId) + optional("idempotencyKey", grant.idempotencyKey)
            strings += optional("transactionId", grant.transaction?.id) + optional("reason", reason)
            // Without an `originalTransactionId` the transaction's own id stands in for it.
            if let transaction = grant.transaction, transaction.originalTransactionId != transaction.id {
                strings.append(("originalTransactionId", transaction.originalTransactionId))
            }
            return strings
        case .check(let query):
            switch query.filter {
            case .product(let product): return subject(query.subject) + [("product", product)]
            case .entitlement(let entitlement): return subject(query.subject) + [("entitlement", entitlement)]
            case .anyProduct: return subject(query.subject)
            }
        case .claim(let device, let user, let reason):
            return [("device", device), ("user", user)] + optional("reason", reason)
        case .revoke(let membership, let reason):
            return [("membership", membership.rawValue)] + optional("reason", reason)
        case .memberships(.transaction(let id), _, _, let after):
            return [("transactionId", id)] + optional("after", after?.rawValue)
        case .memberships(.originalTransaction(let id), _, _, let after):
            return [("originalTransactionId", id)] + optional("after", after?.rawValue)
        case .memberships(.visible(let who), _, _, let after):
            return subject(who) + optional("after", after?.rawValue)
        case .memberships(.source(_, _, let position), _, _, _):
            return optional("after", position?.text)
        case .history(.subject(let who), _, let after):
            return subject(who) + optional("after", after?.text)
        case .customer(let who), .watch(.subject(let who)), .unwatch(.subject(let who)):
            return subject(who)
        case .history(.entitlement(let entitlement), _, let after):
            return [("entitlement", entitlement)] + optional("after", after?.text)
        case .define(let entitlement, _, let reason):
            return [("entitlement", entitlement)] + optional("reason", reason)
        case .event(let membership, let event, let reason):
            var strings = [("membership", membership.rawValue), ("eventId", event.id), ("type", event.kind.name)]
            strings += optional("transactionId", event.transactionId) + optional("reason", reason)
            if case .productChange(let product) = event.kind { strings.append(("product", product)) }
            return strings
        case .auth(let token):
            return [("token", token)]
        case .undefine(let entitlement, let reason):
            return [("entitlement", entitlement)] + optional("reason", reason)
        case .erase(let who, let reason):
            return subject(who) + optional("reason", reason)
        case .extend(let membership, _, let reason):
            return [("membership", membership.rawValue)] + optional("reason", reason)
        }
    }
}
