package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.Objects;

/**
 * {@code changes}: one page of the change feed (an admin operation, and a read): the changes after a change
 * number, oldest first, each as an audit entry that says what the change left ({@link FeedItem}). Read on
 * from the page's {@link FeedPage#next()}: at once while {@link FeedPage#hasMore()}, else with
 * {@link #waitUpTo(Duration)}. {@link EntitledClient#follow(ChangesRequest)} does that for you, on a
 * connection of its own, and survives reconnections; this request is for reading a page yourself.
 *
 * <pre>{@code
 * FeedPage page = client.sync().changes(ChangesRequest.afterSeq(stored).limit(500));
 * }</pre>
 */
public final class ChangesRequest extends Request<FeedPage, ChangesRequest> {
    /** The longest {@code wait} the server takes. */
    static final Duration LONGEST_WAIT = Duration.ofMillis(30_000);

    private final long afterSeq;
    private Integer limit;
    private Duration wait;
    private String user;
    private String device;

    private ChangesRequest(long afterSeq) {
        this.afterSeq = afterSeq;
    }

    /**
     * The changes after this change number: a page's {@link FeedPage#next()}, an export's
     * {@link EntitledExport#seq()}, or a follower's {@link EntitledFeed#position()} you stored. 0 reads from
     * the oldest change the feed holds (refused {@link TruncatedException} once its retention let changes
     * go).
     */
    public static ChangesRequest afterSeq(long afterSeq) {
        if (afterSeq < 0) {
            throw new IllegalArgumentException("afterSeq must be 0 or more, not " + afterSeq);
        }
        return new ChangesRequest(afterSeq);
    }

    /**
     * About how many items a page holds, 1 to 1000 (default 100). A change's items are never split
     * between pages, so a page can hold a few more.
     */
    public ChangesRequest limit(int limit) {
        this.limit = limit;
        return this;
    }

    /**
     * The protocol's {@code wait} (named so as not to overload {@link Object#wait(long)}): when no change
     * (of the subject, if given) is there after {@code afterSeq}, the server holds the answer until one
     * comes or this much time passes (then the page is empty): 0 to 30 s, in milliseconds. The server
     * answers the lines sent after a waiting read only after it, so {@link EntitledClient#changes} sends a
     * read that waits on a connection of its own, and gives it this long plus the request timeout.
     */
    public ChangesRequest waitUpTo(Duration wait) {
        Objects.requireNonNull(wait, "wait");
        if (wait.isNegative() || wait.compareTo(LONGEST_WAIT) > 0) {
            throw new IllegalArgumentException("wait must be 0 to 30 s, not " + wait);
        }
        this.wait = wait;
        return this;
    }

    /**
     * Only the items of the memberships this user owns or owned, plus erasures (they name no one); catalog
     * changes are left out. {@link FeedPage#next()} still moves on past the changes left out.
     */
    public ChangesRequest user(String user) {
        this.user = Objects.requireNonNull(user, "user");
        return this;
    }

    /** Only the items of the memberships bought on this device (as a watch of it covers them), plus erasures. */
    public ChangesRequest device(String device) {
        this.device = Objects.requireNonNull(device, "device");
        return this;
    }

    long afterSeq() {
        return afterSeq;
    }

    /** The wait given, or {@code null}. */
    Duration waitTime() {
        return wait;
    }

    /** Whether the server may hold the answer (a {@code wait} above 0). */
    boolean waits() {
        return wait != null && !wait.isZero();
    }

    /** The client-side budget of the read: the request's timeout, or the wait plus the client's request timeout. */
    Duration budget(ClientOptions options) {
        if (timeout() != null) {
            return timeout();
        }
        return waits() ? options.requestTimeout().plus(wait) : options.requestTimeout();
    }

    /** The same read after {@code afterSeq}, waiting {@code wait} (or not at all when {@code null}). */
    ChangesRequest reading(long afterSeq, Duration wait) {
        ChangesRequest copy = new ChangesRequest(afterSeq);
        copy.limit = limit;
        copy.wait = wait;
        copy.user = user;
        copy.device = device;
        if (timeout() != null) {
            copy.timeout(timeout());
        }
        return copy;
    }

    /** What the request reads, for errors and logs: {@code after 12, user alice}. */
    String describe() {
        return "after " + afterSeq + (user != null ? ", user " + user : "") + (device != null ? ", device " + device : "");
    }

    @Override
    Operation operation() {
        return Operation.CHANGES;
    }

    @Override
    void writeFields(JsonLine line) {
        line.field("afterSeq", afterSeq).field("limit", limit != null ? Long.valueOf(limit) : null)
                .field("wait", wait != null ? Long.valueOf(wait.toMillis()) : null).field("user", user).field("device", device);
    }

    @Override
    FeedPage decode(ObjectNode answer) {
        return Decode.feedPage(answer);
    }
}
