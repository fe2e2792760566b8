package dev.entitled.client;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.List;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;

/**
 * The byte stream under one connection: blocking TCP (plain or TLS) or a Unix socket.
 *
 * <p>Blocking sockets with one reader thread per connection, rather than a selector: a client needs few
 * connections (pipelining makes one per node enough), blocking reads and writes are the JDK's cheapest path
 * for so few, and they let TLS use {@link SSLSocket}, which handles the handshake, the records and
 * {@code close_notify} itself, where an {@code SSLEngine} under a selector would need all of that written
 * by hand. Reading and writing happen on different threads at once, which {@link Socket} streams,
 * {@link SSLSocket} and {@link SocketChannel} (used directly, without {@code Channels} streams, whose
 * blocking lock would serialise the two) all allow.
 */
abstract class Transport {

    /** Reads at most {@code length} bytes; -1 at the end of the stream. */
    abstract int read(byte[] buffer, int offset, int length) throws IOException;

    abstract void write(byte[] buffer, int offset, int length) throws IOException;

    /** Closes both directions at once, waking a blocked reader. */
    abstract void close();

    /** Connects within the options' connect timeout, with TLS when configured (TCP only). */
    static Transport open(NodeAddress address, ClientOptions options) {
        return address.isUnix() ? openUnix(address) : openTcp(address, options);
    }

    private static Transport openUnix(NodeAddress address) {
        try {
            SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
            try {
                channel.connect(UnixDomainSocketAddress.of(address.socketPath()));
            } catch (IOException e) {
                channel.close();
                throw e;
            }
            return new ChannelTransport(channel);
        } catch (IOException e) {
            throw new CannotConnectException(address.toString(), describe(e), e);
        }
    }

    private static Transport openTcp(NodeAddress address, ClientOptions options) {
        int timeout = (int) Math.min(Integer.MAX_VALUE, options.connectTimeout().toMillis());
        Socket socket = new Socket();
        try {
            socket.connect(new InetSocketAddress(address.host(), address.port()), timeout);
            socket.setTcpNoDelay(true);
        } catch (IOException e) {
            closeQuietly(socket);
            throw new CannotConnectException(address.toString(), describe(e), e);
        }
        if (options.tls() == null) {
            try {
                return new SocketTransport(socket, null);
            } catch (IOException e) {
                closeQuietly(socket);
                throw new CannotConnectException(address.toString(), describe(e), e);
            }
        }
        String name = options.tlsServerName() != null ? options.tlsServerName() : address.host();
        try {
            SSLSocket tls = (SSLSocket) options.tls().getSocketFactory().createSocket(socket, name, address.port(), true);
            SSLParameters parameters = tls.getSSLParameters();
            parameters.setEndpointIdentificationAlgorithm("HTTPS");
            if (!name.isEmpty() && !Character.isDigit(name.charAt(0)) && !name.contains(":")) {
                parameters.setServerNames(List.of(new SNIHostName(name)));
            }
            tls.setSSLParameters(parameters);
            tls.setSoTimeout(timeout);
            tls.startHandshake();
            tls.setSoTimeout(0);
            return new SocketTransport(tls, socket);
        } catch (IOException e) {
            closeQuietly(socket);
            throw new CannotConnectException(address.toString(), describeTls(e), e, true);
        }
    }

    private static String describe(IOException e) {
        if (e instanceof ConnectException) {
            return "connection refused";
        }
        if (e instanceof SocketTimeoutException) {
            return "timed out";
        }
        if (e instanceof UnknownHostException) {
            return "unknown host " + e.getMessage();
        }
        return e.getClass().getSimpleName() + (e.getMessage() != null ? " " + e.getMessage() : "");
    }

    /**
     * A failed handshake is the configuration's fault, not the node's: an untrusted certificate, a name it
     * does not carry, or a port that does not speak TLS (the server then writes a plain-text line, which no
     * TLS library can read).
     */
    private static String describeTls(IOException e) {
        String message = String.valueOf(e.getMessage());
        if (e instanceof SSLHandshakeException && (message.contains("PKIX") || message.contains("certificate")
                || message.contains("No subject alternative") || message.contains("No name matching"))) {
            return "the server's TLS certificate is not trusted (" + message + ")";
        }
        if (e instanceof SSLException && (message.contains("plaintext") || message.contains("Unsupported or unrecognized"))) {
            return "the server does not speak TLS on this port: connect without TLS (" + message + ")";
        }
        if (e instanceof SocketTimeoutException) {
            return "the TLS handshake timed out";
        }
        return "the TLS handshake failed: " + describe(e);
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // Closing a socket that failed to connect: nothing more to do.
        }
    }

    /** TCP, plain or TLS. */
    private static final class SocketTransport extends Transport {
        private final Socket socket;
        private final Socket underlying;
        private final InputStream in;
        private final OutputStream out;

        SocketTransport(Socket socket, Socket underlying) throws IOException {
            this.socket = socket;
            this.underlying = underlying;
            this.in = socket.getInputStream();
            this.out = socket.getOutputStream();
        }

        @Override
        int read(byte[] buffer, int offset, int length) throws IOException {
            return in.read(buffer, offset, length);
        }

        @Override
        void write(byte[] buffer, int offset, int length) throws IOException {
            out.write(buffer, offset, length);
        }

        @Override
        void close() {
            // Under TLS the plain socket is closed first: it wakes a reader blocked in the TLS socket at
            // once, where closing the TLS socket would wait to send close_notify behind that reader.
            if (underlying != null) {
                closeQuietly(underlying);
            }
            closeQuietly(socket);
        }
    }

    /** A Unix domain socket. */
    private static final class ChannelTransport extends Transport {
        private final SocketChannel channel;

        ChannelTransport(SocketChannel channel) {
            this.channel = channel;
        }

        @Override
        int read(byte[] buffer, int offset, int length) throws IOException {
            return channel.read(ByteBuffer.wrap(buffer, offset, length));
        }

        @Override
        void write(byte[] buffer, int offset, int length) throws IOException {
            ByteBuffer bytes = ByteBuffer.wrap(buffer, offset, length);
            while (bytes.hasRemaining()) {
                channel.write(bytes);
            }
        }

        @Override
        void close() {
            try {
                channel.close();
            } catch (IOException ignored) {
                // Already closed or broken: either way it is closed now.
            }
        }
    }
}
