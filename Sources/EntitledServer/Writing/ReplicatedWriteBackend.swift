import EntitledCore
import EntitledStorage
import EntitledWire
import NIOCore

/// A cluster node's writes: each is queued for the replicated log's next group, decided there against
/// the newest committed state, and applied to the node's replica only once its group committed. The
/// replica tells `publication` of every change it applies (this node's and the others'), so watchers and
/// `minSeq` waiters hear of committed changes only, and of each once. No answer waits for a loop's end
/// of turn (`WriteDelivery` brings each), so a node's loops have no `GroupCommit`.
final class ReplicatedWriteBackend: WriteBackend {
    let store: EntitlementStore
    let replicated: any ReplicatedLog
    let publication: Publication

    init(store: EntitlementStore, replicated: any ReplicatedLog, publication: Publication) {
        self.store = store
        self.replicated = replicated
        self.publication = publication
        replicated.setObserver(publication)
    }

    func submit(_ write: WriteRequest, into output: inout ByteBuffer, pending: inout ByteBuffer, delivery: WriteDelivery) -> WriteSubmission {
        let store = self.store
        replicated.submit(write.write) { result in
            var answer = ByteBuffer()
            let error = RequestProcessor.writeAnswer(to: write, result, now: store.now(), into: &answer)
            delivery.deliver(answer, error: error)
        }
        return .queued
    }

    func snapshot(id: ByteBuffer?, completion: @escaping @Sendable (ByteBuffer, ErrorCode?) -> Void) -> Bool {
        let replicated = self.replicated
        RequestProcessor.answerOffTheLoop(id: id, completion: completion) {
            do throws(JournalError) {
                return .success(.snapshot(try replicated.snapshot()))
            } catch {
                return .failure(WireError(.unavailable, "the snapshot failed: \(error.reason)"))
            }
        }
        return true
    }

    var status: WriteBackendStatus { .replica(replicated.replicationStatus) }
}
