package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Objects;

/**
 * {@code history}: one page of the audit trail of a subject, an entitlement, or the erasures, newest first
 * (an admin operation). Follow the pages with {@link EntitledClient#historyPages(HistoryRequest)} or
 * {@link EntitledSyncClient#allHistory(HistoryRequest)}.
 */
public final class HistoryRequest extends Request<Page<HistoryEntry>, HistoryRequest> {
    private String user;
    private String device;
    private String entitlement;
    private Boolean erasures;
    private Integer limit;
    private String after;

    private HistoryRequest() {
    }

    /** Every membership the user owns. */
    public static HistoryRequest user(String user) {
        HistoryRequest request = new HistoryRequest();
        request.user = Objects.requireNonNull(user, "user");
        return request;
    }

    /** Every guest membership bought on the device, claimed since or not. */
    public static HistoryRequest device(String device) {
        HistoryRequest request = new HistoryRequest();
        request.device = Objects.requireNonNull(device, "device");
        return request;
    }

    public static HistoryRequest userAndDevice(String user, String device) {
        HistoryRequest request = user(user);
        request.device = Objects.requireNonNull(device, "device");
        return request;
    }

    /** Every {@code define} and {@code undefine} of the entitlement. */
    public static HistoryRequest entitlement(String entitlement) {
        HistoryRequest request = new HistoryRequest();
        request.entitlement = Objects.requireNonNull(entitlement, "entitlement");
        return request;
    }

    /** Every {@code erase}; its entries name no one. */
    public static HistoryRequest erasures() {
        HistoryRequest request = new HistoryRequest();
        request.erasures = true;
        return request;
    }

    /** The page's size, 1 to 1000 (default 100). */
    public HistoryRequest limit(int limit) {
        this.limit = limit;
        return this;
    }

    /** Continue the trail: the previous page's {@link Page#next()}, an opaque cursor passed back unchanged. */
    public HistoryRequest after(String after) {
        this.after = after;
        return this;
    }

    HistoryRequest continuingAfter(String next) {
        HistoryRequest copy = new HistoryRequest();
        copy.user = user;
        copy.device = device;
        copy.entitlement = entitlement;
        copy.erasures = erasures;
        copy.limit = limit;
        copy.after = next;
        if (timeout() != null) {
            copy.timeout(timeout());
        }
        return copy;
    }

    String after() {
        return after;
    }

    @Override
    Operation operation() {
        return Operation.HISTORY;
    }

    @Override
    void writeFields(JsonLine line) {
        line.field("user", user).field("device", device).field("entitlement", entitlement)
                .field("limit", limit != null ? Long.valueOf(limit) : null).field("erasures", erasures).field("after", after);
    }

    @Override
    Page<HistoryEntry> decode(ObjectNode answer) {
        return Decode.historyPage(answer);
    }
}
