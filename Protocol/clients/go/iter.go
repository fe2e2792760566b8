package entitled

import (
	"context"
	"fmt"
)

// pages follows a listing's next cursors to its end; MembershipsIter and HistoryIter are its two uses.
type pages[T any] struct {
	// fetch asks for the page that starts after `after` ("" for the first): its items and its next.
	fetch func(ctx context.Context, after string) ([]T, string, error)
	// emptyMovesOn: a page may be empty and still have a next (a source's listing looks at a bounded
	// part of the store per page); anywhere else an empty page with a next would loop for ever.
	emptyMovesOn bool
	after        string
	items        []T
	cur          T
	done         bool
	err          error
}

func (p *pages[T]) load(ctx context.Context) {
	items, next, err := p.fetch(ctx, p.after)
	switch {
	case err != nil:
		p.err = err
	case next == "":
		p.done = true
	case next == p.after || (len(items) == 0 && !p.emptyMovesOn):
		p.err = fmt.Errorf("%w: a page of %d items whose next %q does not move on", ErrProtocol, len(items), next)
	}
	p.after = next
	p.items = items
}

// Next moves to the next item, asking for the next page when needed. It returns false at the end of the
// listing or on an error (see Err).
func (p *pages[T]) Next(ctx context.Context) bool {
	for len(p.items) == 0 {
		if p.done || p.err != nil {
			return false
		}
		p.load(ctx)
	}
	p.cur, p.items = p.items[0], p.items[1:]
	return true
}

// Err is the error that ended the iteration, or nil at the end of the listing.
func (p *pages[T]) Err() error { return p.err }

// MembershipsIter follows the pages of a memberships listing to its end:
//
//	it := c.MembershipsIter(ctx, entitled.MembershipsRequest{User: "alice"})
//	for it.Next(ctx) {
//		m := it.Membership()
//	}
//	if err := it.Err(); err != nil { ... }
//
// As go-redis' Scan, MembershipsIter asks for the first page at once, with ctx; each later page is one
// request (of req.Limit memberships, default 100), sent by Next when the page before is used up.
// req.After, when given, is where the listing starts. A source's page may be empty and still have a next
// page, which the iterator follows.
type MembershipsIter struct{ pages[Membership] }

// MembershipsIter returns an iterator over every membership the request lists, with its first page.
func (c *Client) MembershipsIter(ctx context.Context, req MembershipsRequest) *MembershipsIter {
	it := &MembershipsIter{pages[Membership]{after: req.After, emptyMovesOn: req.Source != ""}}
	it.fetch = func(ctx context.Context, after string) ([]Membership, string, error) {
		req.After = after
		page, err := c.Memberships(ctx, req)
		return page.Memberships, page.Next, err
	}
	it.load(ctx)
	return it
}

// Membership is the membership Next moved to.
func (it *MembershipsIter) Membership() Membership { return it.cur }

// HistoryIter follows the pages of an audit trail to its end, newest first, as MembershipsIter does.
type HistoryIter struct{ pages[HistoryEntry] }

// HistoryIter returns an iterator over every entry the request lists, newest first, with its first page.
func (c *Client) HistoryIter(ctx context.Context, req HistoryRequest) *HistoryIter {
	it := &HistoryIter{pages[HistoryEntry]{after: req.After}}
	it.fetch = func(ctx context.Context, after string) ([]HistoryEntry, string, error) {
		req.After = after
		page, err := c.History(ctx, req)
		return page.Entries, page.Next, err
	}
	it.load(ctx)
	return it
}

// Entry is the entry Next moved to.
func (it *HistoryIter) Entry() HistoryEntry { return it.cur }
