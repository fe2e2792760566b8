import EntitledCore
import EntitledWire
import Synchronization

/// The exports a server holds between their pages (`export`): each a copy of the store as of one change
/// (`StoreExport`), found again by the id its pages' `next` carries.
///
/// Bounded: at most `maximumExports` at once (a copy costs memory as writes go on), each dropped after
/// its last page or once unread for `idleSeconds`; an export past either is refused with what to do.
final class ExportSessions: Sendable {
    /// The most exports held at once.
    static let maximumExports = 4
    /// How long an export is held without a page read.
    static let idleSeconds: UInt64 = 300

    private struct Held {
        let export: StoreExport
        var lastRead: UInt64
    }

    private let held = Mutex<[UInt64: Held]>([:])

    /// Holds `export` and returns its id, or `nil` when `maximumExports` are held already.
    func hold(_ export: StoreExport) -> UInt64? {
        let now = monotonicSeconds()
        return held.withLock { held in
            held = held.filter { now - $0.value.lastRead < Self.idleSeconds }
            guard held.count < Self.maximumExports else { return nil }
            var id = UInt64.random(in: 1...UInt64.max)
            while held[id] != nil { id = UInt64.random(in: 1...UInt64.max) }
            held[id] = Held(export: export, lastRead: now)
            return id
        }
    }

    /// The export `id`, if it is held; reading it keeps it held.
    func export(_ id: UInt64) -> StoreExport? {
        let now = monotonicSeconds()
        return held.withLock { held in
            guard var entry = held[id], now - entry.lastRead < Self.idleSeconds else {
                held.removeValue(forKey: id)
                return nil
            }
            entry.lastRead = now
            held[id] = entry
            return entry.export
        }
    }

    /// Drops export `id` (its last page was read).
    func drop(_ id: UInt64) {
        _ = held.withLock { $0.removeValue(forKey: id) }
    }

    /// How many exports are held now.
    var count: Int { held.withLock { $0.count } }

    /// Seconds since the first export of the process, by the monotonic clock.
    private func monotonicSeconds() -> UInt64 {
        UInt64(max(0, Self.epoch.duration(to: .now).components.seconds))
    }

    private static let epoch = ContinuousClock.now
}

extension RequestProcessor {
    /// A page of an export: the first takes the copy (and gives the catalog, and with `history` the
    /// catalog's and erasures' trail), the next ones read on from it.
    func export(after cursor: ExportCursor?, limit: Int, history: Bool) -> Result<Response, WireError> {
        let export: StoreExport
        let id: UInt64
        if let cursor {
            guard let found = exports.export(cursor.id) else {
                return .failure(
                    WireError(
                        .notFound,
                        "this server holds no export \(String(cursor.id, radix: 16)): it was read to its end, left unread for \(ExportSessions.idleSeconds) seconds, or taken by another server or before a restart; start the export again without \"after\""
                    )
                )
            }
            (export, id) = (found, cursor.id)
        } else {
            let taken = store.export()
            guard let heldID = exports.hold(taken) else {
                return .failure(
                    WireError(
                        .overLimit, "this server holds \(ExportSessions.maximumExports) exports already; read one to its end, or wait until one is left unread for \(ExportSessions.idleSeconds) seconds"
                    )
                )
            }
            (export, id) = (taken, heldID)
        }
        let page = export.page(from: cursor?.place ?? 0, limit: limit, history: history)
        if page.next == nil { exports.drop(id) }
        let first = cursor == nil
        return .success(
            .export(
                ExportAnswer(
                    sequence: export.sequence, moment: export.moment, catalog: first ? export.catalog : nil, memberships: page.memberships,
                    history: history ? (first ? export.storeTrail : []) + page.history : nil,
                    next: page.next.map { ExportCursor(id: id, place: $0) }
                )
            )
        )
    }
}
