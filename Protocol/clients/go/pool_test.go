package entitled_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	entitled "github.com/entitled-dev/entitled/Protocol/clients/go"
)

// Behaviour of the pool against local fake servers: pipelining, timeouts, cancellation, loading, a read
// sent again after a drop and a write not, stale, protocol errors, every error code.

func TestPipeliningManyInFlight(t *testing.T) {
	const n = 1000
	// The fake reads all n lines before it answers any: the client must have them in flight at once.
	f := newFake(t, func(c *fakeConn) {
		var reqs []map[string]any
		for len(reqs) < n {
			req := c.read()
			if req == nil {
				return
			}
			reqs = append(reqs, req)
		}
		for _, req := range reqs {
			c.answer(req, okFields(req))
		}
		c.answerAll()
	})
	c := entitled.NewClient(&entitled.Options{Nodes: []string{f.addr()}})
	defer c.Close()
	ctx := ctxT(t)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.Check(ctx, entitled.CheckRequest{User: "u"})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := f.connections(); got != 1 {
		t.Fatalf("%d connections, want 1", got)
	}
}

func TestPipeliningOnRealServer(t *testing.T) {
	srv := shared(t)
	c := srv.client(t, nil)
	ctx := ctxT(t)
	user := uid("pipelined")
	if _, err := c.Grant(ctx, entitled.GrantRequest{User: user, Product: "p"}); err != nil {
		t.Fatal(err)
	}
	before := accepted(t, c)
	var wg sync.WaitGroup
	var failures sync.Map
	for i := 0; i < 1000; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := c.Check(ctx, entitled.CheckRequest{User: user, Product: "p"})
			if err != nil || !r.Active {
				failures.Store(err, r)
			}
		}()
	}
	wg.Wait()
	failures.Range(func(k, v any) bool { t.Fatalf("check: %v %v", k, v); return false })
	if after := accepted(t, c); after != before {
		t.Fatalf("the pool opened %v more connections for 1000 checks; want one connection", after-before)
	}
}

func accepted(t *testing.T, c *entitled.Client) float64 {
	t.Helper()
	s, err := c.Stats(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	return s["connections"].(map[string]any)["accepted"].(float64)
}

func TestTimeoutKeepsTheConnection(t *testing.T) {
	release := make(chan struct{})
	f := newFake(t, func(c *fakeConn) {
		for req := c.read(); req != nil; req = c.read() {
			if req["op"] == "grant" {
				<-release // answered late, after the client gave up
			}
			c.answer(req, okFields(req))
		}
	})
	c := entitled.NewClient(&entitled.Options{Nodes: []string{f.addr()}})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Grant(ctx, entitled.GrantRequest{User: "u", Product: "p"})
	if !errors.Is(err, entitled.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want a timeout, got %v", err)
	}
	if time.Since(start) > time.Second {
		t.Fatalf("the timeout took %v", time.Since(start))
	}
	if !entitled.MayHaveBeenApplied(err) || !strings.Contains(err.Error(), "idempotencyKey") {
		t.Fatalf("a grant that timed out after it was sent may have been applied, and says how to retry: %v", err)
	}
	close(release)
	// The late answer is discarded; the next request gets its own answer on the same connection.
	if err := c.Ping(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Check(ctxT(t), entitled.CheckRequest{User: "u"}); err != nil {
		t.Fatal(err)
	}
	if f.connections() != 1 {
		t.Fatalf("%d connections, want 1", f.connections())
	}
}

func TestServerThatNeverAnswers(t *testing.T) {
	f := newFake(t, func(c *fakeConn) {
		for c.read() != nil {
		}
	})
	c := entitled.NewClient(&entitled.Options{Nodes: []string{f.addr()}, RequestTimeout: 150 * time.Millisecond})
	defer c.Close()
	_, err := c.Check(context.Background(), entitled.CheckRequest{User: "u"})
	if !errors.Is(err, entitled.ErrTimeout) {
		t.Fatalf("want ErrTimeout from Options.RequestTimeout, got %v", err)
	}
	if entitled.MayHaveBeenApplied(err) {
		t.Fatalf("a read changes nothing: %v", err)
	}
}

func TestCancellation(t *testing.T) {
	f := newFake(t, func(c *fakeConn) {
		for c.read() != nil {
		}
	})
	c := entitled.NewClient(&entitled.Options{Nodes: []string{f.addr()}})
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	_, err := c.Revoke(ctx, entitled.RevokeRequest{Membership: "mem_0000000000000"})
	if !errors.Is(err, entitled.ErrCanceled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("want ErrCanceled, got %v", err)
	}
	if !entitled.MayHaveBeenApplied(err) {
		t.Fatalf("a revoke cancelled after it was sent may have been applied: %v", err)
	}
}

func TestLoadingWaitedOut(t *testing.T) {
	// The first connection answers loading and closes, as a starting server does; the next one answers.
	f := newFake(t, func(c *fakeConn) {
		if c.n == 0 {
			if req := c.read(); req != nil {
				c.answerError(req, "loading", `,"loaded":5,"total":10`)
			}
			return
		}
		c.answerAll()
	})
	c := entitled.NewClient(&entitled.Options{Nodes: []string{f.addr()}})
	defer c.Close()
	if _, err := c.Grant(ctxT(t), entitled.GrantRequest{User: "u", Product: "p"}); err != nil {
		t.Fatal(err)
	}
	if f.connections() != 2 || len(f.received()) != 2 {
		t.Fatalf("%d connections and lines %q, want 2 and the grant twice", f.connections(), f.received())
	}

	// LoadingWait < 0: the loading error at once, with its counts.
	g := newFake(t, func(c *fakeConn) {
		for req := c.read(); req != nil; req = c.read() {
			c.answerError(req, "loading", `,"loaded":5,"total":10`)
		}
	})
	d := entitled.NewClient(&entitled.Options{Nodes: []string{g.addr()}, LoadingWait: -1})
	defer d.Close()
	err := d.Ping(ctxT(t))
	var e *entitled.Error
	if !errors.As(err, &e) || !errors.Is(err, entitled.ErrLoading) || e.Loaded != 5 || e.Total != 10 {
		t.Fatalf("want the loading error with 5 of 10, got %v", err)
	}
	if entitled.MayHaveBeenApplied(err) {
		t.Fatal("nothing is carried out while loading")
	}
}

func TestLoadingThenDropReadAskedAgainWriteNot(t *testing.T) {
	// Connection 0 answers loading; connection 1 reads the line and closes without an answer (the server
	// became ready); connection 2 answers.
	script := func(c *fakeConn) {
		switch c.n {
		case 0:
			if req := c.read(); req != nil {
				c.answerError(req, "loading", `,"loaded":0,"total":0`)
			}
		case 1:
			c.read()
		default:
			c.answerAll()
		}
	}
	reads := newFake(t, script)
	c := entitled.NewClient(&entitled.Options{Nodes: []string{reads.addr()}})
	defer c.Close()
	if _, err := c.Check(ctxT(t), entitled.CheckRequest{User: "u"}); err != nil {
		t.Fatalf("a read is asked again: %v", err)
	}
	writes := newFake(t, script)
	d := entitled.NewClient(&entitled.Options{Nodes: []string{writes.addr()}})
	defer d.Close()
	_, err := d.Grant(ctxT(t), entitled.GrantRequest{User: "u", Product: "p", IdempotencyKey: "k1"})
	if !errors.Is(err, entitled.ErrConnClosed) || !entitled.MayHaveBeenApplied(err) {
		t.Fatalf("a write whose connection closed without an answer is not sent again: %v", err)
	}
	if n := len(writes.received()); n != 2 {
		t.Fatalf("the grant was sent %d times, want 2 (once answered loading, once unanswered)", n)
	}
}

func TestReadSentAgainOnAnotherNodeWriteNot(t *testing.T) {
	srv := shared(t)
	// This node reads each line and closes the connection without answering.
	dropper := newFake(t, func(c *fakeConn) { c.read() })
	c := entitled.NewClient(&entitled.Options{Nodes: []string{dropper.addr(), srv.addr()}})
	defer c.Close()
	ctx := ctxT(t)
	for i := 0; len(dropper.received()) < 3; i++ {
		if i == 200 {
			t.Fatal("the dropping node got no reads")
		}
		if _, err := c.Check(ctx, entitled.CheckRequest{User: "u"}); err != nil {
			t.Fatalf("a read is sent again to the other node: %v", err)
		}
	}
	user := uid("write")
	var failed error
	succeeded := 0
	for i := 0; failed == nil; i++ {
		if i == 200 {
			t.Fatal("no grant reached the dropping node")
		}
		before := len(dropper.received())
		_, err := c.Grant(ctx, entitled.GrantRequest{User: user, Product: "p", IdempotencyKey: uid("key")})
		if err == nil {
			succeeded++
			continue
		}
		failed = err
		if len(dropper.received()) != before+1 {
			t.Fatalf("the failed grant was not sent to the dropping node once")
		}
	}
	if !entitled.MayHaveBeenApplied(failed) || !errors.Is(failed, entitled.ErrConnClosed) {
		t.Fatalf("a write that lost its connection may have been applied: %v", failed)
	}
	// It was not sent to the real server behind the caller's back: that holds the successful grants only.
	page, err := c.Memberships(ctx, entitled.MembershipsRequest{User: user})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Memberships) != succeeded {
		t.Fatalf("the server holds %d memberships of the user; %d grants succeeded", len(page.Memberships), succeeded)
	}
}

func TestStaleAskedOnceOnAnotherNode(t *testing.T) {
	stale := func(c *fakeConn) {
		for req := c.read(); req != nil; req = c.read() {
			c.answerError(req, "stale", "")
		}
	}
	a, b := newFake(t, stale), newFake(t, stale)
	c := entitled.NewClient(&entitled.Options{Nodes: []string{a.addr(), b.addr()}})
	defer c.Close()
	_, err := c.Check(ctxT(t), entitled.CheckRequest{User: "u", MinSeq: 7})
	if !errors.Is(err, entitled.ErrStale) {
		t.Fatalf("want ErrStale, got %v", err)
	}
	if len(a.received()) != 1 || len(b.received()) != 1 {
		t.Fatalf("the read went %d and %d times to the nodes, want once each", len(a.received()), len(b.received()))
	}
	if !strings.Contains(a.received()[0], `"minSeq":7`) {
		t.Fatalf("minSeq not sent: %s", a.received()[0])
	}
}

func TestReadYourWritesSendsLastSeq(t *testing.T) {
	f := newFake(t, func(c *fakeConn) {
		for req := c.read(); req != nil; req = c.read() {
			if req["op"] == "claim" {
				c.answer(req, `,"seq":42,"claimed":1`)
			} else {
				c.answer(req, okFields(req))
			}
		}
	})
	c := entitled.NewClient(&entitled.Options{Nodes: []string{f.addr()}, ReadYourWrites: true})
	defer c.Close()
	ctx := ctxT(t)
	if _, err := c.Check(ctx, entitled.CheckRequest{User: "u"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Claim(ctx, entitled.ClaimRequest{Device: "d", User: "u"}); err != nil {
		t.Fatal(err)
	}
	if c.LastSeq() != 42 {
		t.Fatalf("LastSeq %d, want 42", c.LastSeq())
	}
	if _, err := c.Check(ctx, entitled.CheckRequest{User: "u"}); err != nil {
		t.Fatal(err)
	}
	lines := f.received()
	if strings.Contains(lines[0], "minSeq") || !strings.Contains(lines[2], `"minSeq":42`) {
		t.Fatalf("want no minSeq before the write and 42 after it: %q", lines)
	}
}

func TestProtocolErrorFailsEveryRequestInFlight(t *testing.T) {
	f := newFake(t, func(c *fakeConn) {
		first, second := c.read(), c.read()
		if first == nil || second == nil {
			return
		}
		c.write(`{"ok":true,"id":999}`) // not the id sent
		c.read()
	})
	c := entitled.NewClient(&entitled.Options{Nodes: []string{f.addr()}})
	defer c.Close()
	ctx := ctxT(t)
	errs := make(chan error, 2)
	go func() { _, err := c.Claim(ctx, entitled.ClaimRequest{Device: "d", User: "u"}); errs <- err }()
	go func() { _, err := c.Claim(ctx, entitled.ClaimRequest{Device: "d2", User: "u"}); errs <- err }()
	for i := 0; i < 2; i++ {
		err := <-errs
		if !errors.Is(err, entitled.ErrProtocol) && !errors.Is(err, entitled.ErrConnClosed) {
			t.Fatalf("want a protocol error, got %v", err)
		}
		if !entitled.MayHaveBeenApplied(err) {
			t.Fatalf("a write in flight on a connection that broke may have been applied: %v", err)
		}
	}
}

func TestEveryErrorCodeMapped(t *testing.T) {
	codes := append(append([]entitled.Code(nil), entitled.Codes...), "brand_new_code")
	f := newFake(t, func(c *fakeConn) {
		for i := 0; ; i++ {
			req := c.read()
			if req == nil {
				return
			}
			c.answerError(req, string(codes[i%len(codes)]), "")
		}
	})
	c := entitled.NewClient(&entitled.Options{Nodes: []string{f.addr()}, LoadingWait: -1})
	defer c.Close()
	sentinels := map[entitled.Code]error{
		entitled.CodeBadJSON: entitled.ErrBadJSON, entitled.CodeBadRequest: entitled.ErrBadRequest,
		entitled.CodeUnknownOp: entitled.ErrUnknownOp, entitled.CodeNotFound: entitled.ErrNotFound,
		entitled.CodeConflict: entitled.ErrConflict, entitled.CodeTooLarge: entitled.ErrTooLarge,
		entitled.CodeUnauthorized: entitled.ErrUnauthorized, entitled.CodeForbidden: entitled.ErrForbidden,
		entitled.CodeBusy: entitled.ErrBusy, entitled.CodeTLSRequired: entitled.ErrTLSRequired,
		entitled.CodeInternal: entitled.ErrInternal, entitled.CodeUnavailable: entitled.ErrUnavailable,
		entitled.CodeStale: entitled.ErrStale, entitled.CodeOutcomeUnknown: entitled.ErrOutcomeUnknown,
		entitled.CodeOverLimit: entitled.ErrOverLimit, entitled.CodeLoading: entitled.ErrLoading,
		entitled.CodeTruncated: entitled.ErrTruncated, "brand_new_code": entitled.ErrUnknownCode,
	}
	if len(sentinels) != len(codes) {
		t.Fatalf("the test lists %d sentinels for %d codes", len(sentinels), len(codes))
	}
	for _, code := range codes {
		_, err := c.Grant(ctxT(t), entitled.GrantRequest{User: "u", Product: "p"})
		var e *entitled.Error
		if !errors.As(err, &e) || e.Code != code || e.Op != "grant" || e.Message != "scripted" {
			t.Fatalf("code %s: got %#v", code, err)
		}
		for other, sentinel := range sentinels {
			if errors.Is(err, sentinel) != (other == code) {
				t.Errorf("code %s: errors.Is(err, sentinel of %s) is %v", code, other, !(other == code))
			}
		}
		if entitled.SentinelFor(code) != sentinels[code] {
			t.Errorf("SentinelFor(%s)", code)
		}
		may := code == entitled.CodeOutcomeUnknown || code == entitled.CodeInternal || code == "brand_new_code"
		if entitled.MayHaveBeenApplied(err) != may {
			t.Errorf("code %s: MayHaveBeenApplied %v, want %v", code, !may, may)
		}
	}
}
