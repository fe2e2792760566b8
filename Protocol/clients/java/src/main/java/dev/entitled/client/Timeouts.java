package dev.entitled.client;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Request timeouts on a hashed timing wheel (as Netty's {@code HashedWheelTimer}): adding a request is one
 * lock-free enqueue, and nothing is done when it completes in time, where a {@code ScheduledExecutorService}
 * would take a lock and re-sort its queue twice per request, on the hot path of every {@code check}. A
 * thread of its own turns the wheel every 10 ms (the resolution of timeouts), places the newly added
 * requests in the slot of their deadline, and fails those of the current slot whose time has come;
 * requests that completed meanwhile are dropped from the wheel when their slot comes round.
 */
final class Timeouts {
    static final Timeouts SHARED = new Timeouts();

    private static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final int SLOTS = 512;

    private final ConcurrentLinkedQueue<Call<?>> added = new ConcurrentLinkedQueue<>();
    private final List<List<Call<?>>> wheel = new ArrayList<>(SLOTS);
    private final long start = System.nanoTime();

    private Timeouts() {
        for (int i = 0; i < SLOTS; i++) {
            wheel.add(new ArrayList<>());
        }
        Thread thread = Shared.daemon("entitled-timeouts").newThread(this::turn);
        thread.start();
    }

    /** Fails the call with its timeout at its deadline, unless it completed before. */
    void add(Call<?> call) {
        added.add(call);
    }

    private void turn() {
        long tick = 0;
        while (true) {
            long wake = start + (tick + 1) * TICK_NANOS;
            for (long now = System.nanoTime(); now - wake < 0; now = System.nanoTime()) {
                LockSupport.parkNanos(wake - now);
            }
            for (Call<?> call; (call = added.poll()) != null; ) {
                if (!call.future.isDone()) {
                    long due = Math.max(tick, (call.deadline - start) / TICK_NANOS);
                    call.wheelRounds = (due - tick) / SLOTS;
                    wheel.get((int) (due % SLOTS)).add(call);
                }
            }
            for (Iterator<Call<?>> it = wheel.get((int) (tick % SLOTS)).iterator(); it.hasNext(); ) {
                Call<?> call = it.next();
                if (call.future.isDone()) {
                    it.remove();
                } else if (call.wheelRounds <= 0) {
                    it.remove();
                    call.timedOut();
                } else {
                    call.wheelRounds--;
                }
            }
            tick++;
        }
    }
}
