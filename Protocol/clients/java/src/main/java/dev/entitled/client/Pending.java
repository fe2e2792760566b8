package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;

/** One request line in a connection's FIFO, waiting for its answer. */
final class Pending {
    /** Who is told of the answer or of the failure. Called on the connection's reader thread. */
    interface Receiver {
        void answered(Pending pending, ObjectNode answer);

        void failed(Pending pending, EntitledException error);

        /** Whether it can take a successful answer as a {@link FlatLine} (see {@link #answeredFlat}). */
        default boolean takesFlat() {
            return false;
        }

        /**
         * A successful flat answer, its id checked; false when it needs the parsed answer after all (then
         * {@link #answered} follows).
         */
        default boolean answeredFlat(Pending pending, FlatLine answer) {
            return false;
        }
    }

    final Receiver receiver;
    /**
     * The id the typed API sent (the answer must echo it), or -1 for a raw line (not checked). Set by the
     * connection before the pending is queued, which publishes it to the reader thread.
     */
    long id = -1;
    /** The request's op, for errors; {@code null} for a raw line. */
    final String op;
    /** Set once its bytes were handed to the socket: from then on it may have been carried out. */
    volatile boolean written;

    Pending(Receiver receiver, String op) {
        this.receiver = receiver;
        this.op = op;
    }
}
