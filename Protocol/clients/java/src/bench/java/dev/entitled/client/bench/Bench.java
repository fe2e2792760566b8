package dev.entitled.client.bench;

import dev.entitled.client.CheckRequest;
import dev.entitled.client.ClientOptions;
import dev.entitled.client.DefineRequest;
import dev.entitled.client.EntitledClient;
import dev.entitled.client.GrantRequest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Checks through the client's pool, keeping exactly {@code --in-flight} checks in flight on one pipelined
 * connection (as {@code entitled-loadgen --connections 1 --pipeline N} does), for {@code --duration}
 * seconds after {@code --warmup}; prints one JSON line with the checks, the window and this process's own
 * CPU (user and system, from /proc/self/stat) per check.
 *
 * <p>Each answered check starts the next one from its callback, on the connection's reader thread, as an
 * application using the asynchronous API would: the follow-ups of a batch of answers go out together (in
 * two writes of 25 at 50 in flight, see EntitledConnection.EARLY_WRITE_AT). Users {@code bench-00000000} ... are
 * granted {@code prod_pro} first (with idempotency keys, so a second run grants nothing new) and
 * {@code pro} is defined as it; each check asks {@code pro} of a random one of them.
 */
public final class Bench {
    /** /proc times are in USER_HZ ticks, 100 a second on Linux's ABI. */
    private static final double TICKS_PER_SECOND = 100.0;

    private final EntitledClient client;
    private final int users;
    private final AtomicLong answered = new AtomicLong();
    private volatile boolean running = true;
    private final CompletableFuture<Void> failure = new CompletableFuture<>();

    private Bench(EntitledClient client, int users) {
        this.client = client;
        this.users = users;
    }

    public static void main(String[] arguments) throws Exception {
        String host = "127.0.0.1";
        int port = 7117;
        int inFlight = 50;
        double duration = 5;
        double warmup = 1;
        int users = 10000;
        for (int i = 0; i < arguments.length; i += 2) {
            String value = i + 1 < arguments.length ? arguments[i + 1] : "";
            switch (arguments[i]) {
                case "--host" -> host = value;
                case "--port" -> port = Integer.parseInt(value);
                case "--in-flight" -> inFlight = Integer.parseInt(value);
                case "--duration" -> duration = Double.parseDouble(value);
                case "--warmup" -> warmup = Double.parseDouble(value);
                case "--users" -> users = Integer.parseInt(value);
                default -> throw new IllegalArgumentException("unknown option " + arguments[i]
                        + " (options: --host --port --in-flight --duration --warmup --users)");
            }
        }
        ClientOptions options = ClientOptions.builder().nodes(host + ":" + port).connectionsPerNode(1).build();
        try (EntitledClient client = EntitledClient.connect(options)) {
            seed(client, users);
            new Bench(client, users).run(inFlight, warmup, duration);
        }
    }

    private static void seed(EntitledClient client, int users) {
        client.define(DefineRequest.of("pro", "prod_pro")).join();
        for (int start = 0; start < users; start += 1000) {
            List<CompletableFuture<?>> batch = new ArrayList<>();
            for (int i = start; i < Math.min(users, start + 1000); i++) {
                batch.add(client.grant(GrantRequest.user(user(i), "prod_pro").idempotencyKey("bench-grant-" + user(i))));
            }
            CompletableFuture.allOf(batch.toArray(new CompletableFuture<?>[0])).join();
        }
    }

    private static String user(int index) {
        return String.format(Locale.ROOT, "bench-%08d", index);
    }

    private void run(int inFlight, double warmup, double duration) throws Exception {
        String[] names = new String[users];
        for (int i = 0; i < users; i++) {
            names[i] = user(i);
        }
        for (int i = 0; i < inFlight; i++) {
            next(names);
        }
        sleep(warmup);
        long[] cpuBefore = cpuTicks();
        long checksBefore = answered.get();
        long started = System.nanoTime();
        sleep(duration);
        long checks = answered.get() - checksBefore;
        double seconds = (System.nanoTime() - started) / 1e9;
        long[] cpuAfter = cpuTicks();
        running = false;
        if (failure.isDone()) {
            failure.join();
        }
        double user = (cpuAfter[0] - cpuBefore[0]) / TICKS_PER_SECOND;
        double system = (cpuAfter[1] - cpuBefore[1]) / TICKS_PER_SECOND;
        System.out.printf(Locale.ROOT, "{\"client\": \"java\", \"checks\": %d, \"seconds\": %.3f, \"checksPerSecond\": %.0f, "
                        + "\"cpuUserSeconds\": %.2f, \"cpuSystemSeconds\": %.2f, \"cpuMicrosecondsPerCheck\": %.2f}%n",
                checks, seconds, checks / seconds, user, system, (user + system) * 1e6 / Math.max(1, checks));
    }

    /** Starts one check; its answer starts the next, until the run ends. */
    private void next(String[] names) {
        String name = names[ThreadLocalRandom.current().nextInt(names.length)];
        client.check(CheckRequest.user(name).entitlement("pro")).whenComplete((result, error) -> {
            if (error != null) {
                failure.completeExceptionally(error);
                return;
            }
            answered.incrementAndGet();
            if (running) {
                next(names);
            }
        });
    }

    private void sleep(double seconds) throws InterruptedException {
        long until = System.nanoTime() + (long) (seconds * 1e9);
        while (System.nanoTime() < until && !failure.isDone()) {
            Thread.sleep(Math.max(1, Math.min(100, (until - System.nanoTime()) / 1_000_000)));
        }
        if (failure.isDone()) {
            failure.join();
        }
    }

    /** This process's user and system time, in ticks (fields 14 and 15 of /proc/self/stat). */
    private static long[] cpuTicks() throws IOException {
        String stat = Files.readString(Path.of("/proc/self/stat"));
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return new long[] {Long.parseLong(fields[11]), Long.parseLong(fields[12])};
    }
}
