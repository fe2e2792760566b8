package dev.entitled.client;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads every client of the process shares (as Lettuce's default {@code ClientResources} are shared):
 * one timer thread for reconnection backoff and loading pauses (request timeouts have {@link Timeouts}), and
 * a pool of daemon threads for the
 * blocking work of connecting (TCP, TLS handshake, {@code auth}) and for writes the reader thread hands
 * off. All are daemon threads, so a forgotten client never keeps the JVM alive.
 */
final class Shared {
    static final ScheduledThreadPoolExecutor TIMER;
    static final ExecutorService BLOCKING = Executors.newCachedThreadPool(daemon("entitled-connect"));

    static {
        TIMER = new ScheduledThreadPoolExecutor(1, daemon("entitled-timer"));
        // A cancelled backoff (a request started the connection sooner) is removed at once.
        TIMER.setRemoveOnCancelPolicy(true);
    }

    private Shared() {
    }

    static ThreadFactory daemon(String name) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> {
            Thread thread = new Thread(runnable, name + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }
}
