import EntitledWire

extension ServedConnection {
    /// Frames up to `lines` complete lines in `input` ahead of answering them (the framer keeps where they
    /// end, so they are searched for once) and, when there are several (a pipelining client), starts
    /// loading the store entries of the users their checks and grants name before the first is answered
    /// (`EntitlementStore.prefetchingUsers`): their cache misses then overlap instead of stalling each
    /// request in turn (a grant inserts into the entry a check of its user reads). Which user a line
    /// checks is `CompactCheckDecoder`'s to say, as it is the one that decodes such lines; a grant's,
    /// `GrantLineHead`'s. A hint: nothing is decided here, every line is still read in full by `answer`.
    ///
    /// What is handed over is where lines end, not what they hold: handing each decoded check from here to
    /// `answer` was measured (50 connections pipelining 16 checks, 2 cores) to cost about 9% of the
    /// server's CPU per check, more than the decoding it saved.
    func lookAheadAtPipelinedLines(upTo lines: Int) {
        guard input.lookAhead(upTo: lines) > 1 else { return }  // one line (or none): nothing to overlap
        processor.store.prefetchingUsers { prefetchUser in
            input.withFoundLines { line in
                if let user = CompactCheckDecoder.userOfCheck(onLine: line) ?? GrantLineHead.user(onLine: line) { prefetchUser(user) }
            }
        }
    }
}
