package entitled_test

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	entitled "github.com/entitled-dev/entitled/Protocol/clients/go"
)

// listAll returns every membership of the users, as the memberships listing shows them, by id.
func listAll(t *testing.T, ctx context.Context, c *entitled.Client, users []string) map[string]entitled.Membership {
	t.Helper()
	all := map[string]entitled.Membership{}
	for _, u := range users {
		it := c.MembershipsIter(ctx, entitled.MembershipsRequest{User: u, Limit: 1000})
		for it.Next(ctx) {
			all[it.Membership().ID] = it.Membership()
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return all
}

// apply brings a mirror up to date with one item of the change feed.
func apply(mirror map[string]entitled.Membership, it entitled.FeedItem) {
	if it.Membership != nil {
		mirror[it.Membership.ID] = *it.Membership
	}
	for _, id := range it.ErasedMemberships {
		delete(mirror, id)
	}
	for _, id := range it.DetachedMemberships {
		m := mirror[id]
		m.Device = ""
		mirror[id] = m
	}
}

// sameMemberships reports how two copies differ, "" when they do not.
func sameMemberships(got, want map[string]entitled.Membership) string {
	var diffs []string
	for id, m := range want {
		if g, ok := got[id]; !ok {
			diffs = append(diffs, "missing "+id)
		} else if !reflect.DeepEqual(g, m) {
			diffs = append(diffs, fmt.Sprintf("%s: %+v, want %+v", id, g, m))
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			diffs = append(diffs, "extra "+id)
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 3 {
		diffs = append(diffs[:3], fmt.Sprintf("and %d more", len(diffs)-3))
	}
	return fmt.Sprint(diffs)[1 : len(fmt.Sprint(diffs))-1]
}

// TestExportInPagesThenFollowingItsSeqEqualsTheServer: an export of a few hundred memberships in pages of
// 50 holds what the server lists, and applying the feed from its seq, with the writes made while it was
// read (revokes, grants, an erasure), gives what the server lists afterwards.
func TestExportInPagesThenFollowingItsSeqEqualsTheServer(t *testing.T) {
	srv := newServer(t)
	c := srv.client(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	users := []string{"u0", "u1", "u2", "u3", "u4", "u5"}
	if _, err := c.Define(ctx, entitled.DefineRequest{Entitlement: "pro", Products: []string{"p"}}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := 0; w < 10; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < 300; i += 10 {
				if _, err := c.Grant(ctx, entitled.GrantRequest{User: users[i%len(users)], Device: fmt.Sprintf("d%d", i%7), Product: "p"}); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	before := listAll(t, ctx, c, users)

	it := c.ExportIter(ctx, entitled.ExportRequest{Limit: 50})
	defer it.Close()
	if it.Err() != nil || it.Seq() != c.LastSeq() || it.Time().IsZero() || len(it.Entitlements()["pro"]) != 1 {
		t.Fatalf("the first page: seq %d (last write %d), time %v, catalog %v, %v", it.Seq(), c.LastSeq(), it.Time(), it.Entitlements(), it.Err())
	}
	mirror := map[string]entitled.Membership{}
	pages := 0
	for it.Next(ctx) {
		pages++
		if n := len(it.Page().Memberships); n > 50 || (n < 50 && it.Page().Next != "") {
			t.Fatalf("page %d holds %d memberships", pages, n)
		}
		for _, m := range it.Page().Memberships {
			mirror[m.ID] = m
		}
		if pages == 1 { // writes while the mirror is read: none of them is in it, the feed has them all
			var some []string
			for id := range before {
				if some = append(some, id); len(some) == 5 {
					break
				}
			}
			for _, id := range some {
				if _, err := c.Revoke(ctx, entitled.RevokeRequest{Membership: id, Reason: "refund"}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := c.Grant(ctx, entitled.GrantRequest{User: "u0", Product: "p"}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Erase(ctx, entitled.EraseRequest{User: "u5", Device: "d3"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := it.Err(); err != nil || pages != 6 {
		t.Fatalf("%d pages: %v", pages, err)
	}
	if d := sameMemberships(mirror, before); d != "" {
		t.Fatalf("the export differs from the listing as of its seq: %s", d)
	}

	f, err := c.Follow(ctx, entitled.FollowRequest{AfterSeq: it.Seq()})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for f.Next(ctx) {
		apply(mirror, f.Item())
		if f.CaughtUp() {
			break
		}
	}
	if f.Err() != nil || f.Position() != c.LastSeq() {
		t.Fatalf("following the export: position %d, last write %d, %v", f.Position(), c.LastSeq(), f.Err())
	}
	if d := sameMemberships(mirror, listAll(t, ctx, c, users)); d != "" {
		t.Fatalf("the export and the feed differ from the listing now: %s", d)
	}
}

func TestExportWithHistoryHoldsEveryMembershipsTrail(t *testing.T) {
	srv := shared(t)
	c := srv.client(t, nil)
	ctx := ctxT(t)
	user := uid("trail")
	g, err := c.Grant(ctx, entitled.GrantRequest{User: user, Product: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Revoke(ctx, entitled.RevokeRequest{Membership: g.Membership.ID}); err != nil {
		t.Fatal(err)
	}
	it := c.ExportIter(ctx, entitled.ExportRequest{Limit: 1000, History: true})
	defer it.Close()
	var actions []string
	found := false
	for it.Next(ctx) {
		for _, m := range it.Page().Memberships {
			found = found || m.ID == g.Membership.ID
		}
		for _, h := range it.Page().History {
			if h.Membership != nil && h.Membership.ID == g.Membership.ID {
				actions = append(actions, h.Action)
			}
		}
	}
	sort.Strings(actions)
	if it.Err() != nil || !found || fmt.Sprint(actions) != "[grant revoke]" {
		t.Fatalf("the membership in the mirror: %v, its trail %v, %v", found, actions, it.Err())
	}
}
