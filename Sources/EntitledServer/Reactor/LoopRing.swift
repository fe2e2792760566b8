/// A loop's io_uring: a turn's receives, and its sends, each in one system call (`SubmissionRing`).
/// Used when the kernel allows a ring (`ServerConfiguration.usesIoUring`); the connections' side is
/// `ServedConnection+Ring.swift`.
///
/// Loop thread only: it is made on the loop's thread, because only the thread that made a ring may
/// submit to it.
final class LoopRing {
    /// A ring receive's most bytes: a turn's request lines of one connection fit (about 60 bytes a check);
    /// a connection that fills it reads the rest at once with plain reads.
    static let receiveSlotSize = 4096

    private let ring: SubmissionRing
    /// Where the ring receives into: one slot per connection epoll reported readable this turn.
    private let receiveArena: UnsafeMutableRawBufferPointer
    /// The connections whose receive is queued this turn, by tag (their index).
    private var receiving: [ServedConnection] = []

    /// A ring with room for the receives of `connectionsPerTurn` connections a turn; throws what the
    /// kernel refused it with.
    init(connectionsPerTurn: Int) throws(RingRefusal) {
        ring = try SubmissionRing()
        receiveArena = UnsafeMutableRawBufferPointer.allocate(byteCount: connectionsPerTurn * Self.receiveSlotSize, alignment: 64)
        receiving.reserveCapacity(connectionsPerTurn)
    }

    deinit {
        receiveArena.deallocate()
    }

    /// Handles what epoll reported for `connection`, its read queued in the ring when a plain receive can
    /// do it (`completeReceives` then finishes it).
    func handle(_ connection: ServedConnection, events: UInt32, turnStarted: UInt64) {
        let tag = receiving.count
        if connection.handleQueueingReceive(events: events, in: ring, into: receiveSlot(tag), tag: UInt64(tag), turnStarted: turnStarted) {
            receiving.append(connection)
        }
    }

    /// Whether receives were queued this turn (`completeReceives` has work).
    var hasReceives: Bool { !receiving.isEmpty }

    /// Submits the receives queued during this turn's events in one system call, then lets each
    /// connection answer what it got.
    func completeReceives(turnStarted: UInt64) {
        ring.submitAndWait()
        while let completion = ring.nextCompletion() {
            let index = Int(completion.tag)
            receiving[index].receiveCompleted(completion.result, into: receiveSlot(index), turnStarted: turnStarted)
        }
        receiving.removeAll(keepingCapacity: true)
    }

    /// Sends the answers of every connection in `connections` with one `io_uring_enter` (per
    /// `ring.capacity` connections); a connection a plain send cannot serve (TLS, nothing to send) flushes
    /// as it would without a ring.
    func flush(_ connections: [ServedConnection]) {
        var start = 0
        while start < connections.count {
            var index = start
            while index < connections.count, !ring.isFull {
                let connection = connections[index]
                if !connection.queueSend(in: ring, tag: UInt64(index)) { connection.flush() }
                index += 1
            }
            ring.submitAndWait()
            while let completion = ring.nextCompletion() {
                connections[Int(completion.tag)].sendCompleted(completion.result)
            }
            start = index
        }
    }

    /// Where the ring receive of the `index`-th readable connection of this turn lands.
    private func receiveSlot(_ index: Int) -> UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(rebasing: receiveArena[(index * Self.receiveSlotSize)..<((index + 1) * Self.receiveSlotSize)])
    }
}
