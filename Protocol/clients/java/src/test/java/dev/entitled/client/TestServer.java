package dev.entitled.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A real {@code entitled} for a test: {@code $ENTITLED_BINARY --port 0 --data-dir <tmp> --snapshot-interval
 * 0 --socket <tmp>/e.sock [more]}, its port read from the ready line on standard output, stopped with
 * SIGTERM (exit status 0 expected).
 */
final class TestServer implements AutoCloseable {
    private static final Pattern READY = Pattern.compile("listening on .*?tcp 127\\.0\\.0\\.1:(\\d+)");

    final Path directory;
    final Path socket;
    final int port;
    private final Process process;

    private TestServer(Path directory, int port, Process process) {
        this.directory = directory;
        this.socket = directory.resolve("e.sock");
        this.port = port;
        this.process = process;
    }

    /** The repository root: the {@code entitled.repo} property test.sh sets, else found from here upward. */
    static Path repo() {
        String property = System.getProperty("entitled.repo");
        if (property != null) {
            return Path.of(property).toAbsolutePath().normalize();
        }
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.exists(dir.resolve("Protocol/PROTOCOL.md"))) {
                return dir;
            }
        }
        throw new IllegalStateException("cannot find the repository root: set -Dentitled.repo");
    }

    static Path binary() {
        String env = System.getenv("ENTITLED_BINARY");
        Path path = env != null && !env.isEmpty() ? Path.of(env) : Path.of(".build/debug/entitled");
        return path.isAbsolute() ? path : repo().resolve(path);
    }

    /** A server on a free port, with a fresh data directory. */
    static TestServer start(String... more) {
        return start(newDirectory(), 0, more);
    }

    /** A server on {@code port} (0: any) with this data directory, as after a restart. */
    static TestServer start(Path directory, int port, String... more) {
        List<String> command = new ArrayList<>(List.of(binary().toString(), "--port", Integer.toString(port),
                "--data-dir", directory.resolve("data").toString(), "--snapshot-interval", "0",
                "--socket", directory.resolve("e.sock").toString(), "--log-level", "warning"));
        command.addAll(List.of(more));
        Path out = directory.resolve("stdout-" + System.nanoTime() + ".txt");
        try {
            Process process = new ProcessBuilder(command).directory(directory.toFile())
                    .redirectOutput(out.toFile()).redirectError(directory.resolve("stderr.txt").toFile()).start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < deadline) {
                Matcher ready = READY.matcher(Files.readString(out));
                if (ready.find()) {
                    return new TestServer(directory, Integer.parseInt(ready.group(1)), process);
                }
                if (!process.isAlive()) {
                    break;
                }
                Thread.sleep(10);
            }
            process.destroyForcibly().waitFor();
            throw new IllegalStateException("entitled did not become ready: " + Files.readString(directory.resolve("stderr.txt")));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    static Path newDirectory() {
        try {
            return Files.createTempDirectory("entitled-java-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A TCP port nobody listens on now (for a server restarted on the same port). */
    static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    String address() {
        return "127.0.0.1:" + port;
    }

    ClientOptions.Builder options() {
        return ClientOptions.builder().nodes(address());
    }

    /** SIGTERM, and the exit status (0 expected). */
    int stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(15, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
            throw new IllegalStateException("entitled did not exit within 15 s of SIGTERM");
        }
        return process.exitValue();
    }

    /** SIGKILL, as a crash. */
    void kill() throws InterruptedException {
        process.destroyForcibly().waitFor();
    }

    /** Stops the server (asserting exit status 0) and removes its directory. */
    @Override
    public void close() {
        try {
            if (process.isAlive()) {
                assertEquals(0, stop(), "entitled's exit status after SIGTERM");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        } finally {
            removeDirectory();
        }
    }

    void removeDirectory() {
        try (Stream<Path> paths = Files.walk(directory)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException ignored) {
            // A leftover temporary directory is harmless.
        }
    }
}
