package dev.entitled.client;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A line server in the test process, for the behaviours a real server cannot be made to show on demand:
 * an answer that never comes, a connection closed after reading a line, {@code loading}. Each accepted
 * connection is served on a thread of its own by the handler, which gets the connection's number (from 1)
 * and its lines; every line received is recorded.
 */
final class FakeServer implements AutoCloseable {
    /** Serves one connection. */
    interface Handler {
        void serve(int connection, BufferedReader in, Line out) throws IOException, InterruptedException;
    }

    /** Writes answer lines. */
    static final class Line {
        private final OutputStream out;

        Line(OutputStream out) {
            this.out = out;
        }

        void send(String line) throws IOException {
            out.write((line + "\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
        }
    }

    private final ServerSocket listener;
    private final AtomicInteger accepted = new AtomicInteger();
    final List<String> received = new CopyOnWriteArrayList<>();
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();

    FakeServer(Handler handler) {
        try {
            listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Thread acceptor = new Thread(() -> {
            while (!listener.isClosed()) {
                try {
                    Socket socket = listener.accept();
                    sockets.add(socket);
                    int number = accepted.incrementAndGet();
                    Thread serving = new Thread(() -> {
                        try (socket) {
                            BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
                            handler.serve(number, new RecordingReader(in), new Line(socket.getOutputStream()));
                        } catch (IOException | InterruptedException e) {
                            // The client closed, or the test ended: the connection is over.
                        }
                    }, "fake-server-connection-" + number);
                    serving.setDaemon(true);
                    serving.start();
                } catch (IOException e) {
                    return;
                }
            }
        }, "fake-server-acceptor");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    String address() {
        return "127.0.0.1:" + listener.getLocalPort();
    }

    int accepted() {
        return accepted.get();
    }

    /** The {@code id} of a request line the client wrote (typed requests' ids are numbers). */
    static String id(String line) {
        return Json.text(readTree(line), "id");
    }

    static String op(String line) {
        return Json.text(readTree(line), "op");
    }

    private static com.fasterxml.jackson.databind.JsonNode readTree(String line) {
        try {
            return Json.MAPPER.readTree(line);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
        for (Socket socket : sockets) {
            socket.close();
        }
    }

    /** Records every line read. */
    private final class RecordingReader extends BufferedReader {
        RecordingReader(BufferedReader in) {
            super(in);
        }

        @Override
        public String readLine() throws IOException {
            String line = super.readLine();
            if (line != null) {
                received.add(line);
            }
            return line;
        }
    }
}
