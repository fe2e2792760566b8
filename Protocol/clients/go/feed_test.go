package entitled_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	entitled "github.com/entitled-dev/entitled/Protocol/clients/go"
)

// The change feed: typed pages and items, the Follower across restarts, timed-out waits, subjects,
// truncation and loading.

// follow runs a Follower's Next loop in a goroutine and hands its items over a channel, closed when Next
// returns false.
func follow(ctx context.Context, f *entitled.Follower) <-chan entitled.FeedItem {
	items := make(chan entitled.FeedItem, 1000)
	go func() {
		defer close(items)
		for f.Next(ctx) {
			items <- f.Item()
		}
	}()
	return items
}

// receive takes n items, failing the test if they do not come within a generous bound.
func receive(t *testing.T, items <-chan entitled.FeedItem, f *entitled.Follower, n int) []entitled.FeedItem {
	t.Helper()
	var got []entitled.FeedItem
	for len(got) < n {
		select {
		case it, ok := <-items:
			if !ok {
				t.Fatalf("the follower ended after %d of %d items: %v", len(got), n, f.Err())
			}
			got = append(got, it)
		case <-time.After(15 * time.Second):
			t.Fatalf("%d of %d items came", len(got), n)
		}
	}
	return got
}

func sequences(items []entitled.FeedItem) []int64 {
	var s []int64
	for _, it := range items {
		s = append(s, it.Sequence)
	}
	return s
}

// grantEventually grants, asking again while the server is unreachable (just restarted).
func grantEventually(t *testing.T, ctx context.Context, c *entitled.Client, req entitled.GrantRequest) entitled.GrantResult {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		g, err := c.Grant(ctx, req)
		if err == nil {
			return g
		}
		if entitled.MayHaveBeenApplied(err) || time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
}

func TestFollowerDeliversEveryChangeInOrderAcrossKillAndTimedOutWaits(t *testing.T) {
	port := freePort(t)
	srv := newServerOn(t, port)
	c := srv.client(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var want []int64
	grants := func(n int) {
		for i := 0; i < n; i++ {
			g := grantEventually(t, ctx, c, entitled.GrantRequest{User: fmt.Sprintf("u%d", i%3), Product: "p"})
			want = append(want, g.Seq)
		}
	}
	grants(10)
	f, err := c.Follow(ctx, entitled.FollowRequest{Limit: 4, Wait: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	items := follow(ctx, f)
	got := receive(t, items, f, 10) // three pages, read on at once
	time.Sleep(time.Second)         // caught up: waits of 200 ms time out, empty, and are asked again
	stats, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if reads := stats["requests"].(map[string]any)["byOp"].(map[string]any)["changes"].(float64); reads < 5 {
		t.Fatalf("%v reads: three pages and a wait that timed out make at least 5", reads)
	}
	grants(5)
	got = append(got, receive(t, items, f, 5)...)
	srv.kill()
	if err := srv.start(port); err != nil {
		t.Fatal(err)
	}
	grants(5)
	got = append(got, receive(t, items, f, 5)...)
	if fmt.Sprint(sequences(got)) != fmt.Sprint(want) {
		t.Fatalf("delivered %v, want %v", sequences(got), want)
	}
	if f.Position() != want[len(want)-1] {
		t.Fatalf("position %d, want %d", f.Position(), want[len(want)-1])
	}
	f.Close()
	if _, open := <-items; open || f.Err() != nil {
		t.Fatalf("after Close: an item, or Err %v", f.Err())
	}
}

// TestFollowerResumesAfterTheLastPageDelivered: against a scripted server that answers loading, then
// drops a connection, the follower reads on after the last page it delivered, never from the start; its
// position moves past whole changes only; it reads on at once while next < newest, and with wait once
// caught up.
func TestFollowerResumesAfterTheLastPageDelivered(t *testing.T) {
	item := func(seq int) string {
		return fmt.Sprintf(`{"time":"2026-01-01T00:00:00.000Z","actor":"local","action":"grant","sequence":%d,"membership":{"id":"mem_%d","productId":"p","user":"u","status":"active","isActive":true,"createdAt":"2026-01-01T00:00:00.000Z","expiresAt":null,"source":"manual"}}`, seq, seq)
	}
	f := newFake(t, func(c *fakeConn) {
		req := c.read()
		if req == nil {
			return
		}
		switch c.n {
		case 0:
			c.answerError(req, "loading", `,"loaded":0,"total":10`)
		case 1:
			c.answer(req, `,"changes":[`+item(6)+`,`+item(6)+`,`+item(7)+`],"next":7,"newest":9,"oldestAfterSeq":0`)
			c.read() // the next page's request: dropped unanswered
		default:
			c.answer(req, `,"changes":[`+item(9)+`],"next":9,"newest":9,"oldestAfterSeq":0`)
			for req := c.read(); req != nil; req = c.read() {
				if req["wait"] == nil { // a follower that does not wait once caught up reads for ever
					c.answer(req, `,"changes":[],"next":9,"newest":9,"oldestAfterSeq":0`)
				} else {
					c.answer(req, `,"changes":[`+item(10)+`],"next":10,"newest":10,"oldestAfterSeq":0`)
				}
			}
		}
	})
	c := entitled.NewClient(&entitled.Options{Nodes: []string{f.addr()}})
	defer c.Close()
	ctx := ctxT(t)
	fl, err := c.Follow(ctx, entitled.FollowRequest{AfterSeq: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	var delivered, positions []int64
	for i := 0; i < 5; i++ {
		if !fl.Next(ctx) {
			t.Fatalf("Next: %v", fl.Err())
		}
		delivered = append(delivered, fl.Item().Sequence)
		positions = append(positions, fl.Position())
	}
	if fmt.Sprint(delivered) != "[6 6 7 9 10]" || fmt.Sprint(positions) != "[5 6 7 9 10]" {
		t.Fatalf("delivered %v at positions %v", delivered, positions)
	}
	var afters []string
	for _, line := range f.received() {
		var req struct {
			AfterSeq int64
			Wait     *int64
		}
		if json.Unmarshal([]byte(line), &req) != nil || req.Wait != nil {
			break // caught up: the reads that wait
		}
		afters = append(afters, fmt.Sprint(req.AfterSeq))
	}
	if strings.Join(afters, " ") != "5 5 7 7" {
		t.Fatalf("read after %v, want 5 (loading), 5, 7 (dropped), 7", afters)
	}
}

func TestSubjectFollowerSeesOnlyItsSubjectAndHoldsUpNoRequest(t *testing.T) {
	srv := shared(t)
	c := srv.client(t, nil)
	ctx := ctxT(t)
	user, other, device := uid("fan"), uid("other"), uid("phone")
	start, err := c.Grant(ctx, entitled.GrantRequest{User: other, Product: "p"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := c.Follow(ctx, entitled.FollowRequest{AfterSeq: start.Seq, User: user})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a := grantEventually(t, ctx, c, entitled.GrantRequest{User: user, Product: "p"})
	grantEventually(t, ctx, c, entitled.GrantRequest{User: other, Product: "p"})
	guest := grantEventually(t, ctx, c, entitled.GrantRequest{Device: device, Product: "p"})
	claim, err := c.Claim(ctx, entitled.ClaimRequest{Device: device, User: user})
	if err != nil {
		t.Fatal(err)
	}
	rev, err := c.Revoke(ctx, entitled.RevokeRequest{Membership: a.Membership.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Define(ctx, entitled.DefineRequest{Entitlement: uid("ent"), Products: []string{"p"}}); err != nil {
		t.Fatal(err)
	}
	items := follow(ctx, f)
	got := receive(t, items, f, 3)
	var seen []string
	for _, it := range got {
		seen = append(seen, fmt.Sprintf("%s %d %s", it.Action, it.Sequence, it.Membership.ID))
		if it.Membership.User != user {
			t.Errorf("an item of someone else: %s", it.Raw)
		}
	}
	want := []string{"grant " + fmt.Sprint(a.Seq) + " " + a.Membership.ID, "claim " + fmt.Sprint(claim.Seq) + " " + guest.Membership.ID,
		"revoke " + fmt.Sprint(rev.Seq) + " " + a.Membership.ID}
	if strings.Join(seen, "; ") != strings.Join(want, "; ") {
		t.Fatalf("the user's follower delivered %v, want %v", seen, want)
	}
	// Caught up, the follower waits on its own connection: the pool's requests are answered meanwhile.
	time.Sleep(200 * time.Millisecond)
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := c.Ping(pctx); err != nil {
		t.Fatalf("a ping while the follower waits: %v", err)
	}
	last := grantEventually(t, ctx, c, entitled.GrantRequest{User: user, Product: "q"})
	if it := receive(t, items, f, 1)[0]; it.Sequence != last.Seq {
		t.Fatalf("after the other changes, the next item is %s", it.Raw)
	}
	if f.Position() < last.Seq {
		t.Fatalf("position %d, before the last change %d", f.Position(), last.Seq)
	}
}

func TestFollowerEndsTruncatedBeforeTheFeedsHorizon(t *testing.T) {
	srv := newServer(t, "--feed-retention-changes", "4096")
	c := srv.client(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const grants, workers = 3*4096 + 1, 32
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < grants; i += workers {
				if _, err := c.Grant(ctx, entitled.GrantRequest{User: fmt.Sprintf("u%d", i%100), Product: "p"}); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	f, err := c.Follow(ctx, entitled.FollowRequest{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Next(ctx) {
		t.Fatalf("an item from before the horizon: %s", f.Item().Raw)
	}
	var tr *entitled.TruncatedError
	if err := f.Err(); !errors.As(err, &tr) || tr.AfterSeq != 0 || !errors.Is(err, entitled.ErrTruncated) || entitled.MayHaveBeenApplied(err) {
		t.Fatalf("want a *TruncatedError after 0, got %v", err)
	}
	if f.Next(ctx) || !errors.As(f.Err(), &tr) {
		t.Fatalf("a truncated follower stays ended: %v", f.Err())
	}
	// A page says where the feed begins now; a follower from there reads on.
	page, err := c.Changes(ctx, entitled.ChangesRequest{AfterSeq: c.LastSeq()})
	if err != nil || page.OldestAfterSeq == 0 || !page.CaughtUp() {
		t.Fatalf("the newest page: %+v %v", page, err)
	}
	if _, err := c.Changes(ctx, entitled.ChangesRequest{AfterSeq: page.OldestAfterSeq - 1}); !errors.As(err, &tr) {
		t.Fatalf("Changes before the horizon: want a *TruncatedError, got %v", err)
	}
	from, err := c.Follow(ctx, entitled.FollowRequest{AfterSeq: page.OldestAfterSeq})
	if err != nil {
		t.Fatal(err)
	}
	defer from.Close()
	if !from.Next(ctx) || from.Item().Sequence != page.OldestAfterSeq+1 {
		t.Fatalf("from the horizon: %v %s", from.Err(), from.Item().Raw)
	}
}

// TestChangesItemsAreTyped reads a transfer, an extension, an event, a define and an erasure as typed
// items, and a waiting read that times out empty on a connection of its own.
func TestChangesItemsAreTyped(t *testing.T) {
	srv := shared(t)
	c := srv.client(t, nil)
	ctx := ctxT(t)
	a, b, gone, ent, otx := uid("a"), uid("b"), uid("gone"), uid("ent"), uid("otx")
	first, err := c.Grant(ctx, entitled.GrantRequest{User: a, Product: "p", Source: entitled.SourceAppStore,
		TransactionID: otx, OriginalTransactionID: otx, ExpiresAt: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	moved, err := c.Grant(ctx, entitled.GrantRequest{User: b, Product: "p", Source: entitled.SourceAppStore,
		TransactionID: uid("tx"), OriginalTransactionID: otx, ExpiresAt: time.Now().Add(time.Hour)})
	if err != nil || moved.TransferredFrom == nil {
		t.Fatalf("the transfer: %+v %v", moved, err)
	}
	if _, err := c.Extend(ctx, entitled.ExtendRequest{Membership: first.Membership.ID, Duration: entitled.Days(1)}); err != nil {
		t.Fatal(err)
	}
	eventID := uid("evt")
	if _, err := c.Event(ctx, entitled.EventRequest{Membership: first.Membership.ID, Type: entitled.EventCancellation, EventID: eventID,
		EventTime: time.Now().Add(-time.Second)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Define(ctx, entitled.DefineRequest{Entitlement: ent, Products: []string{"p"}}); err != nil {
		t.Fatal(err)
	}
	// An erasure takes the person's items out of the feed: someone else's.
	erased := grantEventually(t, ctx, c, entitled.GrantRequest{User: gone, Product: "p"})
	erase, err := c.Erase(ctx, entitled.EraseRequest{User: gone, Reason: "ticket"})
	if err != nil {
		t.Fatal(err)
	}
	page, err := c.Changes(ctx, entitled.ChangesRequest{AfterSeq: first.Seq - 1, Limit: 1000})
	if err != nil || page.Next != erase.Seq {
		t.Fatalf("changes: %+v %v", page, err)
	}
	byAction := map[string]entitled.FeedItem{}
	for _, it := range page.Changes {
		byAction[it.Action] = it
		if it.Sequence == 0 || it.Time.IsZero() || it.Actor == "" || !strings.Contains(string(it.Raw), `"sequence":`) {
			t.Errorf("an item without its sequence, time, actor or raw text: %+v", it)
		}
	}
	tr, ext, ev, def, er := byAction["transfer"], byAction["extend"], byAction["cancellation"], byAction["define"], byAction["erase"]
	switch {
	case tr.FormerOwner == nil || tr.FormerOwner.User != a || tr.Membership == nil || tr.Membership.User != b:
		t.Errorf("transfer: %s", tr.Raw)
	case ext.PreviousExpiresAt == nil || ext.Membership == nil:
		t.Errorf("extend: %s", ext.Raw)
	case ev.EventID != eventID || ev.EventTime == nil || ev.Membership.Status != entitled.StatusCanceled:
		t.Errorf("event: %s", ev.Raw)
	case def.Entitlement != ent || strings.Join(def.Products, ",") != "p" || def.Membership != nil:
		t.Errorf("define: %s", def.Raw)
	case er.Erased == nil || er.Erased.Memberships != 1 || strings.Join(er.ErasedMemberships, ",") != erased.Membership.ID ||
		er.DetachedMemberships == nil || er.Reason != "ticket":
		t.Errorf("erase: %s", er.Raw)
	}
	waited, err := c.Changes(ctx, entitled.ChangesRequest{AfterSeq: erase.Seq, User: a, Wait: 200 * time.Millisecond})
	if err != nil || len(waited.Changes) != 0 || waited.Next < erase.Seq {
		t.Fatalf("a wait that times out: %+v %v", waited, err)
	}
}
