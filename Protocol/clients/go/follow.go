package entitled

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"time"
)

// FollowRequest says where a Follower starts and what it reads.
type FollowRequest struct {
	// AfterSeq: deliver the changes after this change number: a Position stored before, an export's Seq,
	// or 0 for the oldest change the feed holds.
	AfterSeq int64
	// User and/or Device: only what concerns the subject, as ChangesRequest says.
	User   string
	Device string
	// Limit is the items asked for a page (0: the server's default, 100).
	Limit int
	// Wait is how long each read waits for a change once the follower has caught up (default 20 s, at
	// most 30 s): the longer, the fewer empty reads; a change is delivered as soon as it is made either way.
	Wait time.Duration
}

const (
	defaultFollowWait = 20 * time.Second
	maxFollowWait     = 30 * time.Second // the server's bound
)

// Follower delivers the change feed item after item, for as long as the application reads it:
//
//	f, err := c.Follow(ctx, entitled.FollowRequest{AfterSeq: stored})
//	defer f.Close()
//	for f.Next(ctx) {
//		apply(f.Item())
//		stored = f.Position()
//	}
//	err = f.Err() // a *TruncatedError: copy again with ExportIter
//
// It reads a page, reads on at once while the feed has more, and once caught up reads with Wait, so a
// change comes as soon as it is made. It reads on a connection of its own, as a Watch does, because a
// waiting read holds up the lines behind it. When the connection drops, the server restarts or answers
// loading, busy or unavailable, it connects again and reads on after the last page it delivered (50 ms
// doubling to 2 s, full jitter), for as long as the application's ctx allows: nothing is skipped, and an
// item is delivered twice only when the application resumes from a Position it stored earlier. When the
// feed no longer reaches back (its retention let the changes go), Next returns false and Err is a
// *TruncatedError; a refusal (forbidden: the feed is admin-only) ends it too.
//
// Next, Item, Err and CaughtUp are for one goroutine; Position and Close may be called from any.
type Follower struct {
	c      *Client
	req    FollowRequest
	closed chan struct{}
	once   sync.Once

	mu   sync.Mutex // guards conn against Close
	conn *Conn      // nil while disconnected

	next     int64      // the afterSeq of the next read: the last page's next
	caughtUp bool       // the last page reached the newest change
	items    []FeedItem // the rest of the last page
	cur      FeedItem
	pos      atomic.Int64
	done     bool // ended for good: Close, truncated or a refusal
	err      error
}

// Follow opens a connection for a Follower and returns it; the first read is Next's. It fails only when
// no node accepts a connection now (as Watch does); after that the Follower connects again by itself.
func (c *Client) Follow(ctx context.Context, req FollowRequest) (*Follower, error) {
	if req.Wait <= 0 {
		req.Wait = defaultFollowWait
	} else if req.Wait > maxFollowWait {
		req.Wait = maxFollowWait
	}
	dctx, cancel := c.withTimeout(ctx)
	defer cancel()
	conn, err := c.dialAny(dctx, false)
	if err != nil {
		return nil, err
	}
	f := &Follower{c: c, req: req, closed: make(chan struct{}), conn: conn, next: req.AfterSeq}
	f.pos.Store(req.AfterSeq)
	if !c.own(f) {
		conn.Close()
		return nil, ErrClientClosed
	}
	return f, nil
}

// Next moves to the next item, reading (and waiting) as needed. It returns false when ctx ends (Err says
// so; Next may be called again with another ctx, and goes on where it stopped), after Close (Err is nil),
// or when the feed ended the Follower (Err is a *TruncatedError or the refusal).
func (f *Follower) Next(ctx context.Context) bool {
	if f.done {
		return false
	}
	if f.isClosed() {
		f.done, f.err = true, nil
		return false
	}
	f.err = nil
	for len(f.items) == 0 {
		if f.done {
			return false
		}
		if err := f.read(ctx); err != nil {
			f.err = err
			return false
		}
	}
	f.cur, f.items = f.items[0], f.items[1:]
	// The position moves only past whole changes: resuming from the middle of one would skip the rest of
	// its items.
	switch {
	case len(f.items) == 0:
		f.pos.Store(f.next)
	case f.items[0].Sequence != f.cur.Sequence:
		f.pos.Store(f.cur.Sequence)
	}
	return true
}

// Item is the item Next moved to.
func (f *Follower) Item() FeedItem { return f.cur }

// Err says why Next returned false: nil after Close, the ctx's error, a *TruncatedError, or a refusal.
func (f *Follower) Err() error { return f.err }

// Position is the AfterSeq to resume from, in a later Follow, once the items Next delivered are applied:
// the last page's Next when all its items were delivered, otherwise the last change all of whose items
// were. Store it with what the items changed. It moves past changes a subject's follower leaves out too.
func (f *Follower) Position() int64 { return f.pos.Load() }

// CaughtUp reports whether every change up to the newest the last read saw was delivered: a copy that
// applied them all is up to date as of that read. For a job that syncs once and stops.
func (f *Follower) CaughtUp() bool { return f.caughtUp && len(f.items) == 0 }

// Close closes the Follower's connection; a Next waiting for a read returns false, with Err nil.
func (f *Follower) Close() error {
	f.once.Do(func() {
		close(f.closed)
		f.mu.Lock()
		if f.conn != nil {
			f.conn.Close()
		}
		f.mu.Unlock()
		f.c.disown(f)
	})
	return nil
}

func (f *Follower) isClosed() bool {
	select {
	case <-f.closed:
		return true
	default:
		return false
	}
}

// read reads the next page into items, connecting again after a failure with backoff, until ctx ends.
func (f *Follower) read(ctx context.Context) error {
	backoff := minBackoff
	var last error // the failure retried, named when ctx ends meanwhile
	for {
		page, err := f.readOnce(ctx)
		if f.isClosed() {
			f.done = true
			return nil
		}
		if err == nil {
			return f.take(page)
		}
		if ctx.Err() != nil {
			if last != nil {
				return fmt.Errorf("%w (the follower was retrying after: %v)", err, last)
			}
			return err
		}
		if !retried(err) {
			f.done = true
			return err
		}
		last = err
		f.drop()
		t := time.NewTimer(time.Duration(rand.Int63n(int64(backoff) + 1)))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		case <-f.closed:
			t.Stop()
		}
		if backoff *= 2; backoff > maxBackoff {
			backoff = maxBackoff
		}
	}
}

// readOnce reads one page on the Follower's connection, opening one first when it has none.
func (f *Follower) readOnce(ctx context.Context) (ChangesPage, error) {
	conn, err := f.connect(ctx)
	if err != nil {
		return ChangesPage{}, err
	}
	req := ChangesRequest{AfterSeq: f.next, Limit: f.req.Limit, User: f.req.User, Device: f.req.Device}
	if f.caughtUp {
		req.Wait = f.req.Wait
		// Not beyond ctx's deadline: the answer would come after the caller stopped waiting for it.
		if d, ok := ctx.Deadline(); ok && time.Until(d) < req.Wait {
			req.Wait = time.Until(d)
			if req.Wait < 0 {
				req.Wait = 0 // a negative wait is refused; ctx has ended, and the call says so
			}
		}
	}
	rctx, cancel := f.c.withWaitTimeout(ctx, req.Wait)
	defer cancel()
	return conn.Changes(rctx, req)
}

// connect returns the Follower's connection, opening one when it has none.
func (f *Follower) connect(ctx context.Context) (*Conn, error) {
	f.mu.Lock()
	conn := f.conn
	f.mu.Unlock()
	if conn != nil && !conn.isClosed() {
		return conn, nil
	}
	dctx, cancel := context.WithTimeout(ctx, f.c.opts.DialTimeout)
	defer cancel()
	conn, err := f.c.dialAny(dctx, true) // the Follower's own backoff paces it, not the pool's
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.isClosed() {
		conn.Close()
		return nil, ErrClientClosed
	}
	f.conn = conn
	return conn, nil
}

// drop closes the connection after a failure; the next read opens another.
func (f *Follower) drop() {
	f.mu.Lock()
	if f.conn != nil {
		f.conn.Close()
		f.conn = nil
	}
	f.mu.Unlock()
}

// take makes a page the one Next delivers from.
func (f *Follower) take(page ChangesPage) error {
	if page.Next < f.next || (len(page.Changes) == 0 && page.Next == f.next && !page.CaughtUp()) {
		f.done = true
		return fmt.Errorf("%w: a page of the change feed after %d whose next %d (newest %d) does not move on",
			ErrProtocol, f.next, page.Next, page.Newest)
	}
	f.next, f.caughtUp, f.items = page.Next, page.CaughtUp(), page.Changes
	if len(page.Changes) == 0 {
		f.pos.Store(page.Next)
	}
	return nil
}

// retried reports whether a failed read is worth reading again: a connection that failed, dropped or did
// not answer, or a server that is starting (loading), full (busy) or without its database (unavailable,
// internal). Not truncated, nor a refusal: asking again would be refused again.
func retried(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		switch e.Code {
		case CodeLoading, CodeBusy, CodeUnavailable, CodeInternal:
			return true
		}
		return false
	}
	var re *RequestError
	if errors.As(err, &re) {
		return re.Kind == ErrConnClosed || re.Kind == ErrProtocol || re.Kind == ErrTimeout
	}
	return (errors.Is(err, ErrNoNodeAvailable) || errors.Is(err, ErrCannotConnect)) && !notNodesFault(err)
}
