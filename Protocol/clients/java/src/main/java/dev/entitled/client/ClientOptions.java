package dev.entitled.client;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * How an {@link EntitledClient} (or one {@link EntitledConnection}) connects and behaves. Immutable; made
 * with {@link #builder()}:
 *
 * <pre>{@code
 * ClientOptions options = ClientOptions.builder()
 *     .nodes("10.0.0.5:7117", "10.0.0.6:7117")
 *     .token(System.getenv("ENTITLED_TOKEN"))
 *     .tlsTrust(Path.of("ca.pem"))
 *     .build();
 * }</pre>
 *
 * The token is never logged and never part of an error or of {@link #toString()}.
 */
public final class ClientOptions {
    private final List<NodeAddress> nodes;
    private final int connectionsPerNode;
    private final String token;
    private final SSLContext tls;
    private final String tlsServerName;
    private final Duration connectTimeout;
    private final Duration requestTimeout;
    private final Duration loadingWait;
    private final boolean readYourWrites;
    private final Duration initialBackoff;
    private final Duration maxBackoff;
    private final int maxQueuedPushes;

    private ClientOptions(Builder b) {
        this.nodes = List.copyOf(b.nodes);
        this.connectionsPerNode = b.connectionsPerNode;
        this.token = b.token;
        this.tls = b.tls;
        this.tlsServerName = b.tlsServerName;
        this.connectTimeout = b.connectTimeout;
        this.requestTimeout = b.requestTimeout;
        this.loadingWait = b.loadingWait;
        this.readYourWrites = b.readYourWrites;
        this.initialBackoff = b.initialBackoff;
        this.maxBackoff = b.maxBackoff;
        this.maxQueuedPushes = b.maxQueuedPushes;
    }

    /** A builder with the defaults: {@code 127.0.0.1:7117}, one connection per node, no token, no TLS. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding these options, to change some. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.nodes.addAll(nodes);
        b.connectionsPerNode = connectionsPerNode;
        b.token = token;
        b.tls = tls;
        b.tlsServerName = tlsServerName;
        b.connectTimeout = connectTimeout;
        b.requestTimeout = requestTimeout;
        b.loadingWait = loadingWait;
        b.readYourWrites = readYourWrites;
        b.initialBackoff = initialBackoff;
        b.maxBackoff = maxBackoff;
        b.maxQueuedPushes = maxQueuedPushes;
        return b;
    }

    /** The servers (nodes of a cluster, or one server), in order. */
    public List<NodeAddress> nodes() {
        return nodes;
    }

    /** Connections the pool keeps to each node (default 1: pipelining makes one enough for most apps). */
    public int connectionsPerNode() {
        return connectionsPerNode;
    }

    /** The token sent as {@code {"op":"auth"}} first on every connection, or {@code null}. */
    String token() {
        return token;
    }

    /** The TLS context, or {@code null} for plain text. */
    public SSLContext tls() {
        return tls;
    }

    /** The name the server's certificate is checked against (default: each node's host). */
    public String tlsServerName() {
        return tlsServerName;
    }

    public Duration connectTimeout() {
        return connectTimeout;
    }

    public Duration requestTimeout() {
        return requestTimeout;
    }

    public Duration loadingWait() {
        return loadingWait;
    }

    public boolean readYourWrites() {
        return readYourWrites;
    }

    public Duration initialBackoff() {
        return initialBackoff;
    }

    public Duration maxBackoff() {
        return maxBackoff;
    }

    /**
     * The most events a watch (or items a follower of the change feed) holds for {@code take()} before it
     * stops reading its connection (see the builder).
     */
    public int maxQueuedPushes() {
        return maxQueuedPushes;
    }

    @Override
    public String toString() {
        return "ClientOptions{nodes=" + nodes + ", connectionsPerNode=" + connectionsPerNode
                + ", token=" + (token != null ? "(set)" : "(none)") + ", tls=" + (tls != null)
                + ", requestTimeout=" + requestTimeout + ", loadingWait=" + loadingWait
                + ", readYourWrites=" + readYourWrites + "}";
    }

    /** Builds {@link ClientOptions}. Not thread-safe. */
    public static final class Builder {
        private final List<NodeAddress> nodes = new ArrayList<>();
        private int connectionsPerNode = 1;
        private String token;
        private SSLContext tls;
        private String tlsServerName;
        private Duration connectTimeout = Duration.ofSeconds(5);
        private Duration requestTimeout = Duration.ofSeconds(10);
        private Duration loadingWait = Duration.ofSeconds(60);
        private boolean readYourWrites;
        private Duration initialBackoff = Duration.ofMillis(50);
        private Duration maxBackoff = Duration.ofSeconds(2);
        private int maxQueuedPushes = 10_000;

        private Builder() {
        }

        /** The servers, as {@code "host:port"} or Unix socket paths; replaces any given before. */
        public Builder nodes(String... addresses) {
            nodes.clear();
            for (String address : addresses) {
                nodes.add(NodeAddress.parse(address));
            }
            return this;
        }

        /** The servers; replaces any given before. */
        public Builder nodes(List<NodeAddress> addresses) {
            nodes.clear();
            nodes.addAll(addresses);
            return this;
        }

        /** Connections to keep to each node, at least 1 (default 1). */
        public Builder connectionsPerNode(int count) {
            if (count < 1) {
                throw new IllegalArgumentException("connectionsPerNode must be at least 1");
            }
            this.connectionsPerNode = count;
            return this;
        }

        /**
         * Authenticate every connection with this token (a server started with {@code --auth}). A refused
         * token fails requests at once with {@link UnauthorizedException}; it is never shown.
         */
        public Builder token(String token) {
            this.token = token;
            return this;
        }

        /** Speak TLS with this context (a server started with {@code --tls-cert}). TCP only. */
        public Builder tls(SSLContext context) {
            this.tls = context;
            return this;
        }

        /** Speak TLS with the system's trusted certificate authorities. */
        public Builder tlsSystemTrust() {
            try {
                this.tls = SSLContext.getDefault();
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("no default TLS context: " + e.getMessage(), e);
            }
            return this;
        }

        /**
         * Speak TLS, trusting the PEM certificates of this file (a private CA, or a self-signed server
         * certificate) and nothing else.
         */
        public Builder tlsTrust(Path caFile) {
            try (InputStream in = Files.newInputStream(caFile)) {
                KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
                store.load(null, null);
                int index = 0;
                for (Certificate certificate : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                    store.setCertificateEntry("ca-" + index++, certificate);
                }
                if (index == 0) {
                    throw new IllegalArgumentException("no PEM certificate in " + caFile);
                }
                TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
                trust.init(store);
                SSLContext context = SSLContext.getInstance("TLS");
                context.init(null, trust.getTrustManagers(), null);
                this.tls = context;
            } catch (IOException | GeneralSecurityException e) {
                throw new IllegalArgumentException("cannot read the certificates of " + caFile + ": " + e.getMessage(), e);
            }
            return this;
        }

        /** Check the server's certificate against this name instead of each node's host. */
        public Builder tlsServerName(String name) {
            this.tlsServerName = name;
            return this;
        }

        /** Time allowed to connect, handshake and authenticate (default 5 s). */
        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = positive(timeout, "connectTimeout");
            return this;
        }

        /**
         * A request's whole budget by default (default 10 s): waiting for a connection, retries and the
         * answer. A request can give its own ({@code Request.timeout}).
         */
        public Builder requestTimeout(Duration timeout) {
            this.requestTimeout = positive(timeout, "requestTimeout");
            return this;
        }

        /**
         * How long to wait out a starting server that answers {@code loading} (default 60 s): the client
         * reconnects and sends again, pausing 50 ms doubling to 1 s. Zero raises {@link LoadingException}
         * at once.
         */
        public Builder loadingWait(Duration wait) {
            this.loadingWait = Objects.requireNonNull(wait, "loadingWait");
            return this;
        }

        /**
         * When true, every {@code check}, {@code memberships} and {@code customer} that gives no
         * {@code minSeq} is sent with the client's {@link EntitledClient#lastSeq()}: it sees every write
         * this client made, on any node (default false).
         */
        public Builder readYourWrites(boolean enabled) {
            this.readYourWrites = enabled;
            return this;
        }

        /** The first reconnection pause (default 50 ms); it doubles up to {@link #maxBackoff(Duration)}. */
        public Builder initialBackoff(Duration backoff) {
            this.initialBackoff = positive(backoff, "initialBackoff");
            return this;
        }

        /** The longest reconnection pause (default 2 s). */
        public Builder maxBackoff(Duration backoff) {
            this.maxBackoff = positive(backoff, "maxBackoff");
            return this;
        }

        /**
         * The most undelivered events a watch read with {@code take()}, {@code poll} or its iterator holds
         * in memory, at least 1 (default 10,000). When that many wait, the watch stops reading its connection
         * until the application takes one: the server holds the lines meanwhile, and if the application stays
         * behind until 4 MiB are unread the server closes the connection, and the watch reconnects and
         * delivers a {@link WatchEvent.Gap} as after any drop. No event is ever dropped by the client. A watch
         * with a listener holds nothing: the listener runs on the reader thread, which reads no further
         * until it returns. A follower of the change feed ({@link EntitledFeed}) holds at most as many items,
         * and reads no further page until one is taken.
         */
        public Builder maxQueuedPushes(int count) {
            if (count < 1) {
                throw new IllegalArgumentException("maxQueuedPushes must be at least 1");
            }
            this.maxQueuedPushes = count;
            return this;
        }

        /** The options; {@code 127.0.0.1:7117} when no node was given. */
        public ClientOptions build() {
            if (nodes.isEmpty()) {
                nodes.add(NodeAddress.tcp("127.0.0.1", 7117));
            }
            return new ClientOptions(this);
        }

        private static Duration positive(Duration value, String name) {
            if (value == null || value.isNegative() || value.isZero()) {
                throw new IllegalArgumentException(name + " must be positive");
            }
            return value;
        }
    }
}
