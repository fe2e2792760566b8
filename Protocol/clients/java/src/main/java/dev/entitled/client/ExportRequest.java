package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * {@code export}: one page of a full copy of the store as of one change (an admin operation, and a read).
 * The first request ({@link #start()}) takes the copy; each answer's {@link ExportPage#next()} reads on
 * from it ({@link #after(String)}). The copy is held by the one server that answered the first page (for
 * 300 s after its last read, at most 4 at a time), so every page must go to that server:
 * {@link EntitledClient#openExport(ExportRequest)} reads them all on one connection of its own. Through
 * {@link EntitledClient#export(ExportRequest)}, a page after the first may reach another node of a cluster,
 * which answers {@link NotFoundException}.
 *
 * <pre>{@code
 * try (EntitledExport export = client.sync().openExport(ExportRequest.start().limit(500).history(true))) {
 *     for (ExportPage page : export) { ... page.memberships(), page.history() ... }
 *     long followFrom = export.seq();
 * }
 * }</pre>
 */
public final class ExportRequest extends Request<ExportPage, ExportRequest> {
    private Integer limit;
    private Boolean history;
    private String after;

    private ExportRequest() {
    }

    /** A new copy: the first page, with the copy's change number and the catalog. */
    public static ExportRequest start() {
        return new ExportRequest();
    }

    /** At most this many memberships a page, 1 to 1000 (default 1000). */
    public ExportRequest limit(int limit) {
        this.limit = limit;
        return this;
    }

    /** With {@code true}, every page also carries its memberships' audit trail (the first page also the catalog's and the erasures'). */
    public ExportRequest history(boolean history) {
        this.history = history;
        return this;
    }

    /**
     * Continue a copy: the previous page's {@link ExportPage#next()}, unchanged. Answered
     * {@link NotFoundException} when the server no longer holds the copy (300 s unread, restarted, or
     * another node): start again.
     */
    public ExportRequest after(String after) {
        this.after = after;
        return this;
    }

    String after() {
        return after;
    }

    /** The same request for the page after {@code next}. */
    ExportRequest continuingAfter(String next) {
        ExportRequest copy = new ExportRequest();
        copy.limit = limit;
        copy.history = history;
        copy.after = next;
        if (timeout() != null) {
            copy.timeout(timeout());
        }
        return copy;
    }

    @Override
    Operation operation() {
        return Operation.EXPORT;
    }

    @Override
    void writeFields(JsonLine line) {
        line.field("after", after).field("limit", limit != null ? Long.valueOf(limit) : null).field("history", history);
    }

    @Override
    ExportPage decode(ObjectNode answer) {
        return Decode.exportPage(answer);
    }
}
