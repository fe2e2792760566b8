/// The loop's io_uring: a turn's receives, and its sends, each in one system call (`SubmissionRing`).
/// Used when the kernel allows a ring (`ServerConfiguration.usesIoUring`); the connections' side is
/// `ServedConnection+Ring.swift`.
extension ServingLoop {
    /// Where the ring receive of the `index`-th readable connection of this turn lands.
    func receiveSlot(_ index: Int) -> UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(rebasing: receiveArena[(index * Self.receiveSlotSize)..<((index + 1) * Self.receiveSlotSize)])
    }

    /// Submits the receives queued during this turn's events in one system call, then lets each
    /// connection answer what it got.
    func completeReceives() {
        guard let ring else { return }
        ring.submitAndWait()
        while let completion = ring.nextCompletion() {
            let index = Int(completion.tag)
            receiving[index].receiveCompleted(completion.result, into: receiveSlot(index), turnStarted: turnStarted)
        }
        receiving.removeAll(keepingCapacity: true)
    }

    /// Sends the answers of every connection in `flushing` with one `io_uring_enter` (per `ring.capacity`
    /// connections); a connection a plain send cannot serve (TLS, nothing to send) flushes as it would
    /// without a ring.
    func flushThroughRing(_ ring: SubmissionRing) {
        var start = 0
        while start < flushing.count {
            var index = start
            while index < flushing.count, !ring.isFull {
                let connection = flushing[index]
                if !connection.queueSend(in: ring, tag: UInt64(index)) { connection.flush() }
                index += 1
            }
            ring.submitAndWait()
            while let completion = ring.nextCompletion() {
                flushing[Int(completion.tag)].sendCompleted(completion.result)
            }
            start = index
        }
    }
}
