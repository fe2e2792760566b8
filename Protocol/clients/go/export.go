package entitled

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// ExportRequest asks for one page of a full copy of the store (PROTOCOL.md §6 export, admin only).
type ExportRequest struct {
	// Limit: at most this many memberships a page (1 to 1000; 0: the server's default, 1000).
	Limit int
	// History adds the audit trail: each page's memberships' entries (the first page also the catalog's
	// and the erasures').
	History bool
	// After is the Next of the page before, unchanged; "" takes a new copy.
	After string
}

func (ExportRequest) op() string { return "export" }
func (r ExportRequest) encode(w *wire) {
	w.str("after", r.After)
	w.int("limit", int64(r.Limit))
	w.flag("history", r.History)
}

// ExportPage is one page of a copy.
type ExportPage struct {
	Export ExportInfo `json:"export"`
	// Entitlements is the catalog as of the copy, on the first page only.
	Entitlements map[string][]string `json:"entitlements"`
	// Memberships are in creation order, each as of the copy's change, statuses computed at its time.
	Memberships []Membership `json:"memberships"`
	// History is the audit trail of the page's memberships, with ExportRequest.History.
	History []HistoryEntry `json:"history"`
	// Next is "" on the last page; otherwise pass it as After, to the same server.
	Next string `json:"next"`
}

// ExportInfo says which change a copy is as of.
type ExportInfo struct {
	// Seq is the change the copy is as of: follow the feed after it (FollowRequest.AfterSeq) and nothing
	// is missed.
	Seq  int64     `json:"seq"`
	Time time.Time `json:"time"`
}

// Export reads one page of a copy on this connection. The server that answered the first page holds the
// copy (for 300 s after its last read, at most 4 copies at a time: a fifth is over_limit), so every page
// of one copy goes to it: a Conn, not the pool, whose nodes may differ. An After it no longer holds is
// not_found: start again.
func (c *Conn) Export(ctx context.Context, req ExportRequest) (ExportPage, error) {
	var out ExportPage
	err := c.call(ctx, req, &out)
	return out, err
}

// ExportIter reads a whole copy a page at a time, on a connection of its own (the server that took the
// copy holds it), which it closes at the end:
//
//	it := c.ExportIter(ctx, entitled.ExportRequest{Limit: 500})
//	for it.Next(ctx) {
//		store(it.Page().Memberships)
//	}
//	if err := it.Err(); err != nil { ... } // start again
//	f, err := c.Follow(ctx, entitled.FollowRequest{AfterSeq: it.Seq()})
//
// Next moves a page, not a membership, at a time, as a copy is written a page (a transaction) at a time.
// Each page is one request with the Client's RequestTimeout when ctx has no deadline. A failure ends the
// copy: its pages cannot be asked of another server, so start again.
type ExportIter struct {
	c            *Client
	conn         *Conn
	req          ExportRequest
	page         ExportPage
	info         ExportInfo
	entitlements map[string][]string
	started      bool // a page was read: info is the copy's
	fresh        bool // page is loaded and not yet delivered
	done         bool
	err          error
	once         sync.Once
}

// ExportIter opens a connection and reads the first page with ctx, which takes the copy: Seq, Time and
// Entitlements are known when it returns (unless Err is set). req.After, when given, resumes a copy the
// server still holds.
func (c *Client) ExportIter(ctx context.Context, req ExportRequest) *ExportIter {
	it := &ExportIter{c: c, req: req}
	dctx, cancel := c.withTimeout(ctx)
	conn, err := c.dialAny(dctx, false)
	cancel()
	if err != nil {
		it.err, it.done = err, true
		return it
	}
	it.conn = conn
	if !c.own(it) {
		conn.Close()
		it.err, it.done = ErrClientClosed, true
		return it
	}
	it.load(ctx, req.After)
	return it
}

func (it *ExportIter) load(ctx context.Context, after string) {
	ctx, cancel := it.c.withTimeout(ctx)
	defer cancel()
	req := it.req
	req.After = after
	page, err := it.conn.Export(ctx, req)
	switch {
	case err != nil:
		it.err = err
	case page.Next != "" && page.Next == after:
		it.err = fmt.Errorf("%w: an export page whose next %q does not move on", ErrProtocol, page.Next)
	}
	if it.err != nil {
		it.done = true
		it.Close()
		return
	}
	if !it.started {
		it.started, it.info = true, page.Export
	}
	if page.Entitlements != nil {
		it.entitlements = page.Entitlements
	}
	it.page, it.fresh = page, true
}

// Next moves to the next page, asking for it when needed. It returns false at the end of the copy or on
// an error (see Err).
func (it *ExportIter) Next(ctx context.Context) bool {
	if it.done {
		return false
	}
	if !it.fresh {
		if it.page.Next == "" {
			it.done = true
			it.Close()
			return false
		}
		it.load(ctx, it.page.Next)
		if it.err != nil {
			return false
		}
	}
	it.fresh = false
	return true
}

// Page is the page Next moved to.
func (it *ExportIter) Page() ExportPage { return it.page }

// Seq is the change the copy is as of: follow the feed after it.
func (it *ExportIter) Seq() int64 { return it.info.Seq }

// Time is when the copy was taken; statuses are computed at it.
func (it *ExportIter) Time() time.Time { return it.info.Time }

// Entitlements is the catalog as of the copy (from its first page).
func (it *ExportIter) Entitlements() map[string][]string { return it.entitlements }

// Err is the error that ended the copy, or nil at its end.
func (it *ExportIter) Err() error { return it.err }

// Close gives up the copy and closes the connection; Next does so at the end or on an error. The server
// drops a copy 300 s after its last read.
func (it *ExportIter) Close() error {
	it.once.Do(func() {
		if it.conn != nil {
			it.conn.Close()
		}
		it.c.disown(it)
	})
	return nil
}
