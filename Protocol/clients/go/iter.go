package entitled

import (
	"context"
	"fmt"
)

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
type MembershipsIter struct {
	c     *Client
	req   MembershipsRequest
	items []Membership
	cur   Membership
	done  bool
	err   error
}

// MembershipsIter returns an iterator over every membership the request lists, with its first page.
func (c *Client) MembershipsIter(ctx context.Context, req MembershipsRequest) *MembershipsIter {
	it := &MembershipsIter{c: c, req: req}
	it.fetch(ctx)
	return it
}

// Next moves to the next membership, asking for the next page when needed. It returns false at the end
// of the listing or on an error (see Err).
func (it *MembershipsIter) Next(ctx context.Context) bool {
	for len(it.items) == 0 {
		if it.done || it.err != nil {
			return false
		}
		it.fetch(ctx)
	}
	it.cur, it.items = it.items[0], it.items[1:]
	return true
}

func (it *MembershipsIter) fetch(ctx context.Context) {
	page, err := it.c.Memberships(ctx, it.req)
	switch {
	case err != nil:
		it.err = err
	case page.Next == "":
		it.done = true
	case page.Next == it.req.After || (len(page.Memberships) == 0 && it.req.Source == ""):
		it.err = fmt.Errorf("%w: a page of %d memberships whose next %q does not move on", ErrProtocol, len(page.Memberships), page.Next)
	}
	it.req.After = page.Next
	it.items = page.Memberships
}

// Membership is the membership Next moved to.
func (it *MembershipsIter) Membership() Membership { return it.cur }

// Err is the error that ended the iteration, or nil at the end of the listing.
func (it *MembershipsIter) Err() error { return it.err }

// HistoryIter follows the pages of an audit trail to its end, as MembershipsIter does.
type HistoryIter struct {
	c     *Client
	req   HistoryRequest
	items []HistoryEntry
	cur   HistoryEntry
	done  bool
	err   error
}

// HistoryIter returns an iterator over every entry the request lists, newest first, with its first page.
func (c *Client) HistoryIter(ctx context.Context, req HistoryRequest) *HistoryIter {
	it := &HistoryIter{c: c, req: req}
	it.fetch(ctx)
	return it
}

// Next moves to the next entry, asking for the next page when needed. It returns false at the end of the
// trail or on an error (see Err).
func (it *HistoryIter) Next(ctx context.Context) bool {
	for len(it.items) == 0 {
		if it.done || it.err != nil {
			return false
		}
		it.fetch(ctx)
	}
	it.cur, it.items = it.items[0], it.items[1:]
	return true
}

func (it *HistoryIter) fetch(ctx context.Context) {
	page, err := it.c.History(ctx, it.req)
	switch {
	case err != nil:
		it.err = err
	case page.Next == "":
		it.done = true
	case page.Next == it.req.After || len(page.Entries) == 0:
		it.err = fmt.Errorf("%w: a page of %d entries whose next %q does not move on", ErrProtocol, len(page.Entries), page.Next)
	}
	it.req.After = page.Next
	it.items = page.Entries
}

// Entry is the entry Next moved to.
func (it *HistoryIter) Entry() HistoryEntry { return it.cur }

// Err is the error that ended the iteration, or nil at the end of the trail.
func (it *HistoryIter) Err() error { return it.err }
