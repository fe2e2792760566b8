package entitled

import (
	"context"
	"encoding/json"
	"time"
)

// The change feed (PROTOCOL.md §6 changes, admin only): every change after a change number, oldest first,
// as audit entries. An application keeps a copy of the store (ExportIter, then the feed from the copy's
// Seq) or reacts to changes without missing any across restarts, which a Watch cannot promise. Follow
// reads it for good; Changes reads one page.

// ChangesRequest asks for one page of the change feed. Every field is optional.
type ChangesRequest struct {
	// AfterSeq: the changes after this change number (a write's Seq, a page's Next); 0: from the oldest
	// change the feed holds, refused truncated once its retention let changes go.
	AfterSeq int64
	// Limit: about this many items (1 to 1000; 0: the server's default, 100). A change's items are never
	// split between pages, so a page may hold a few more.
	Limit int
	// Wait: when there is no change after AfterSeq (of the subject, if given), the server holds the answer
	// until one comes or Wait passes (then the page is empty); at most 30 s, sent in milliseconds. Lines
	// sent after a waiting read on its connection are answered after it, so Client.Changes sends one on a
	// connection of its own.
	Wait time.Duration
	// User and/or Device: only the items of memberships the subject owns or owned, or that were bought on
	// the device (what a watch of it covers), and erasures; catalog changes are left out. Next still moves
	// on past the changes left out.
	User   string
	Device string
}

func (ChangesRequest) op() string { return "changes" }
func (r ChangesRequest) encode(w *wire) {
	w.int("afterSeq", r.AfterSeq)
	w.int("limit", int64(r.Limit))
	w.int("wait", r.Wait.Milliseconds())
	w.str("user", r.User)
	w.str("device", r.Device)
}

// ChangesPage is one page of the change feed.
type ChangesPage struct {
	Changes []FeedItem `json:"changes"`
	// Next is the AfterSeq of the next read: the page's last change, or Newest when the page read every
	// change up to it. Store it to resume from there.
	Next int64 `json:"next"`
	// Newest is the newest change the page could show: while Next is below it, read on at once; once
	// caught up, read with Wait.
	Newest int64 `json:"newest"`
	// OldestAfterSeq is the oldest AfterSeq the feed accepts now; an older one is refused truncated.
	OldestAfterSeq int64 `json:"oldestAfterSeq"`
}

// CaughtUp reports whether the page reached the newest change, so that the next read should wait.
func (p ChangesPage) CaughtUp() bool { return p.Next >= p.Newest }

// FeedItem is one item of the change feed: an audit entry (HistoryEntry: Time, Actor, Action, Reason,
// Sequence, and what the change left) that always has Sequence. The items of one change share it.
//
// What an item carries depends on Action:
//   - grant, claim, revoke, transfer, extend, an event type (renewal, ...): Membership, as the change left
//     it (status as of the change); for an event EventID and EventTime, for extend PreviousExpiresAt,
//     for a transfer FormerOwner;
//   - define, undefine: Entitlement and Products;
//   - erase: Erased (the counts), ErasedMemberships (delete them from any copy) and DetachedMemberships
//     (take the erased device off them); it names no one.
type FeedItem struct {
	HistoryEntry
	// FormerOwner is whom a transfer took the membership from.
	FormerOwner *Subject `json:"formerOwner"`
	// ErasedMemberships and DetachedMemberships are the membership ids an erase removed, and those it
	// took the erased device off.
	ErasedMemberships   []string `json:"erasedMemberships"`
	DetachedMemberships []string `json:"detachedMemberships"`
	// Raw is the item as received, for the fields a newer server adds.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes the item and keeps its text in Raw.
func (it *FeedItem) UnmarshalJSON(data []byte) error {
	type plain FeedItem // without this method, so that decoding it does not recurse
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*it = FeedItem(p)
	it.Raw = append(json.RawMessage(nil), data...)
	return nil
}

// Changes reads one page of the change feed. Without Wait it goes through the pool, as a read (sent again
// after a drop). With Wait it is sent on a connection of its own, opened for it and closed after, so that
// it holds up none of the pool's requests; its timeout, when ctx has no deadline, is Wait plus
// Options.RequestTimeout. To read the feed for good, use Follow, which keeps one connection. A feed that
// no longer reaches back to AfterSeq is a *TruncatedError.
func (c *Client) Changes(ctx context.Context, req ChangesRequest) (ChangesPage, error) {
	if req.Wait <= 0 {
		var out ChangesPage
		err := c.do(ctx, req, &out)
		return out, truncatedOf(err, req.AfterSeq)
	}
	ctx, cancel := c.withWaitTimeout(ctx, req.Wait)
	defer cancel()
	conn, err := c.dialAny(ctx, false)
	if err != nil {
		return ChangesPage{}, err
	}
	defer conn.Close()
	return conn.Changes(ctx, req)
}

// Changes reads one page of the change feed on this connection. A read with Wait holds up the lines sent
// after it on the connection until it is answered; ctx without a deadline waits as long as it takes.
func (c *Conn) Changes(ctx context.Context, req ChangesRequest) (ChangesPage, error) {
	var out ChangesPage
	err := c.call(ctx, req, &out)
	return out, truncatedOf(err, req.AfterSeq)
}

// withWaitTimeout bounds a read that the server may hold for wait: Options.RequestTimeout after the wait,
// when ctx has no deadline.
func (c *Client) withWaitTimeout(ctx context.Context, wait time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok || c.opts.RequestTimeout < 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, wait+c.opts.RequestTimeout)
}
