package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.util.Objects;

/**
 * {@code memberships}: one page of the memberships a subject sees (newest first), of those holding a store
 * transaction, or of a source's (oldest first, for a reconciliation). Follow the pages with
 * {@link EntitledClient#membershipPages(MembershipsRequest)} or
 * {@link EntitledSyncClient#allMemberships(MembershipsRequest)}.
 */
public final class MembershipsRequest extends Request<Page<Membership>, MembershipsRequest> {
    private String user;
    private String device;
    private String transactionId;
    private String originalTransactionId;
    private Source source;
    private Instant at;
    private Instant endedAfter;
    private Integer limit;
    private String after;
    private Long minSeq;

    private MembershipsRequest() {
    }

    public static MembershipsRequest user(String user) {
        MembershipsRequest request = new MembershipsRequest();
        request.user = Objects.requireNonNull(user, "user");
        return request;
    }

    public static MembershipsRequest device(String device) {
        MembershipsRequest request = new MembershipsRequest();
        request.device = Objects.requireNonNull(device, "device");
        return request;
    }

    public static MembershipsRequest userAndDevice(String user, String device) {
        MembershipsRequest request = user(user);
        request.device = Objects.requireNonNull(device, "device");
        return request;
    }

    /** The memberships holding this store transaction. */
    public static MembershipsRequest transactionId(String transactionId) {
        MembershipsRequest request = new MembershipsRequest();
        request.transactionId = Objects.requireNonNull(transactionId, "transactionId");
        return request;
    }

    /** The memberships of the subscription this transaction started. */
    public static MembershipsRequest originalTransactionId(String originalTransactionId) {
        MembershipsRequest request = new MembershipsRequest();
        request.originalTransactionId = Objects.requireNonNull(originalTransactionId, "originalTransactionId");
        return request;
    }

    /**
     * Every membership of a source, oldest first. A page looks at a bounded part of the store, so it may be
     * empty and still have a {@code next}: follow it to the end.
     */
    public static MembershipsRequest source(Source source) {
        MembershipsRequest request = new MembershipsRequest();
        request.source = Objects.requireNonNull(source, "source");
        return request;
    }

    /** With a subject: statuses at this moment; in the past, the memberships as they were then. */
    public MembershipsRequest at(Instant at) {
        this.at = at;
        return this;
    }

    /** With a source: only the memberships whose access had not ended before this moment. */
    public MembershipsRequest endedAfter(Instant endedAfter) {
        this.endedAfter = endedAfter;
        return this;
    }

    /** The page's size, 1 to 1000 (default 100). */
    public MembershipsRequest limit(int limit) {
        this.limit = limit;
        return this;
    }

    /** Continue a listing: the previous page's {@link Page#next()}, unchanged. */
    public MembershipsRequest after(String after) {
        this.after = after;
        return this;
    }

    /** Answer once the server has applied this change, else {@link StaleException}. */
    public MembershipsRequest minSeq(long minSeq) {
        this.minSeq = minSeq;
        return this;
    }

    /** The same request for the page after {@code next}. */
    MembershipsRequest continuingAfter(String next) {
        MembershipsRequest copy = new MembershipsRequest();
        copy.user = user;
        copy.device = device;
        copy.transactionId = transactionId;
        copy.originalTransactionId = originalTransactionId;
        copy.source = source;
        copy.at = at;
        copy.endedAfter = endedAfter;
        copy.limit = limit;
        copy.minSeq = minSeq;
        copy.after = next;
        if (timeout() != null) {
            copy.timeout(timeout());
        }
        return copy;
    }

    /** Whether pages may be empty and still have a {@code next} (a source's listing). */
    boolean mayHaveEmptyPages() {
        return source != null;
    }

    String after() {
        return after;
    }

    @Override
    Operation operation() {
        return Operation.MEMBERSHIPS;
    }

    @Override
    void writeFields(JsonLine line) {
        line.field("user", user).field("device", device).field("source", source != null ? source.wireName() : null)
                .field("at", at).field("transactionId", transactionId).field("originalTransactionId", originalTransactionId)
                .field("limit", limit != null ? Long.valueOf(limit) : null).field("minSeq", minSeq).field("after", after)
                .field("endedAfter", endedAfter);
    }

    @Override
    Page<Membership> decode(ObjectNode answer) {
        return Decode.membershipPage(answer);
    }

    @Override
    Long minSeq() {
        return minSeq;
    }

    @Override
    boolean takesMinSeq() {
        return true;
    }
}
