package entitled_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	entitled "github.com/entitled-dev/entitled/Protocol/clients/go"
)

// Behaviour against real servers: every operation, pages, read-your-writes, reconnecting after a
// restart, watches across a restart, TLS and auth.

func TestEveryOperation(t *testing.T) {
	srv := shared(t)
	c := srv.client(t, nil)
	ctx := ctxT(t)
	user, device, ent := uid("user"), uid("device"), uid("ent")
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	hello, err := c.Hello(ctx)
	if err != nil || hello.Protocol != entitled.ProtocolVersion || len(hello.Fields["grant"]) == 0 {
		t.Fatalf("hello: %+v %v", hello, err)
	}
	def, err := c.Define(ctx, entitled.DefineRequest{Entitlement: ent, Products: []string{"b", "a", "a"}, Reason: "test"})
	if err != nil || strings.Join(def.Products, ",") != "a,b" || def.Seq == 0 {
		t.Fatalf("define: %+v %v", def, err)
	}
	catalog, err := c.Catalog(ctx)
	if err != nil || len(catalog[ent]) != 2 {
		t.Fatalf("catalog: %v %v", catalog[ent], err)
	}
	end := time.Now().Add(30 * 24 * time.Hour).Truncate(time.Millisecond)
	g, err := c.Grant(ctx, entitled.GrantRequest{Device: device, Product: "a", ExpiresAt: end, Source: entitled.SourceAppStore,
		TransactionID: uid("tx"), IdempotencyKey: uid("key")})
	if err != nil || g.Membership.Device != device || !g.Membership.ExpiresAt.Equal(end) || g.Membership.Status != entitled.StatusActive {
		t.Fatalf("grant: %+v %v", g, err)
	}
	cl, err := c.Claim(ctx, entitled.ClaimRequest{Device: device, User: user})
	if err != nil || cl.Claimed != 1 {
		t.Fatalf("claim: %+v %v", cl, err)
	}
	check, err := c.Check(ctx, entitled.CheckRequest{User: user, Entitlement: ent, MinSeq: cl.Seq})
	if err != nil || !check.Active || !check.ExpiresAt.Equal(end) {
		t.Fatalf("check: %+v %v", check, err)
	}
	ext, err := c.Extend(ctx, entitled.ExtendRequest{Membership: g.Membership.ID, Duration: entitled.Months(1)})
	if err != nil || !ext.PreviousExpiresAt.Equal(end) || !ext.Membership.ExpiresAt.After(end) {
		t.Fatalf("extend: %+v %v", ext, err)
	}
	ev, err := c.Event(ctx, entitled.EventRequest{Membership: g.Membership.ID, Type: entitled.EventCancellation,
		EventID: uid("evt"), EventTime: time.Now().Add(-time.Minute)})
	if err != nil || !ev.Applied || ev.Membership.Status != entitled.StatusCanceled {
		t.Fatalf("event: %+v %v", ev, err)
	}
	cust, err := c.Customer(ctx, entitled.CustomerRequest{User: user})
	if err != nil || !cust.Entitlements[ent].IsActive || cust.ActiveProducts[0] != "a" {
		t.Fatalf("customer: %+v %v", cust, err)
	}
	hist, err := c.History(ctx, entitled.HistoryRequest{User: user})
	if err != nil || len(hist.Entries) != 4 || hist.Entries[0].Action != "cancellation" || hist.Entries[0].Membership == nil {
		t.Fatalf("history: %+v %v", hist, err)
	}
	rev, err := c.Revoke(ctx, entitled.RevokeRequest{Membership: g.Membership.ID, Reason: "refund"})
	if err != nil || rev.Membership.Status != entitled.StatusRevoked || rev.Membership.RevokedAt == nil {
		t.Fatalf("revoke: %+v %v", rev, err)
	}
	page, err := c.Memberships(ctx, entitled.MembershipsRequest{User: user})
	if err != nil || len(page.Memberships) != 1 || page.Next != "" {
		t.Fatalf("memberships: %+v %v", page, err)
	}
	snap, err := c.Snapshot(ctx)
	if err != nil || snap.File == "" {
		t.Fatalf("snapshot: %+v %v", snap, err)
	}
	stats, err := c.Stats(ctx)
	if err != nil || stats["server"] == nil {
		t.Fatalf("stats: %v %v", stats, err)
	}
	if _, err := c.Reload(ctx); !errors.Is(err, entitled.ErrBadRequest) {
		t.Fatalf("reload without --auth is bad_request: %v", err)
	}
	undef, err := c.Undefine(ctx, entitled.UndefineRequest{Entitlement: ent})
	if err != nil || len(undef.Products) != 2 {
		t.Fatalf("undefine: %+v %v", undef, err)
	}
	if _, err := c.Check(ctx, entitled.CheckRequest{User: user, Entitlement: ent}); !errors.Is(err, entitled.ErrNotFound) {
		t.Fatalf("want ErrNotFound, got %v", err)
	}
	erased, err := c.Erase(ctx, entitled.EraseRequest{User: user, Device: device, Reason: "ticket 1"})
	if err != nil || erased.Erased.Memberships != 1 {
		t.Fatalf("erase: %+v %v", erased, err)
	}
	if c.LastSeq() != erased.Seq {
		t.Fatalf("LastSeq %d, want the erase's %d", c.LastSeq(), erased.Seq)
	}
	conn, err := c.Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	who, err := conn.Auth(ctx, "any-token-is-fine-without-auth")
	if err != nil || who.Role != "admin" || who.AuthRequired {
		t.Fatalf("auth: %+v %v", who, err)
	}
	raw, err := c.Do(ctx, map[string]any{"op": "check", "id": "mine", "user": user, "entitlment": "x"})
	if err != nil || raw["ok"] != false || raw["id"] != "mine" || raw["error"].(map[string]any)["code"] != "bad_request" {
		t.Fatalf("raw Do: %v %v", raw, err)
	}
}

func TestPagesIterators(t *testing.T) {
	srv := shared(t)
	c := srv.client(t, nil)
	ctx := ctxT(t)
	user := uid("pages")
	var ids []string
	for i := 0; i < 5; i++ {
		g, err := c.Grant(ctx, entitled.GrantRequest{User: user, Product: "p" + strconv.Itoa(i), Reason: "r"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append([]string{g.Membership.ID}, ids...) // newest first
	}
	it := c.MembershipsIter(ctx, entitled.MembershipsRequest{User: user, Limit: 2})
	var got []string
	for it.Next(ctx) {
		got = append(got, it.Membership().ID)
	}
	if it.Err() != nil || strings.Join(got, ",") != strings.Join(ids, ",") {
		t.Fatalf("memberships: %v %v, want %v", got, it.Err(), ids)
	}
	h := c.HistoryIter(ctx, entitled.HistoryRequest{User: user, Limit: 2})
	n := 0
	for h.Next(ctx) {
		if h.Entry().Action != "grant" {
			t.Fatalf("entry %+v", h.Entry())
		}
		n++
	}
	if h.Err() != nil || n != 5 {
		t.Fatalf("history: %d entries, %v", n, h.Err())
	}
	bad := c.MembershipsIter(ctx, entitled.MembershipsRequest{User: user, Limit: 5000})
	if bad.Next(ctx) || !errors.Is(bad.Err(), entitled.ErrBadRequest) {
		t.Fatalf("a refused page ends the iteration with its error: %v", bad.Err())
	}
}

func TestReadYourWritesOnRealServer(t *testing.T) {
	srv := shared(t)
	writer := srv.client(t, nil)
	reader := srv.client(t, &entitled.Options{ReadYourWrites: true})
	ctx := ctxT(t)
	user := uid("ryw")
	g, err := writer.Grant(ctx, entitled.GrantRequest{User: user, Product: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if writer.LastSeq() != g.Seq || g.Seq == 0 {
		t.Fatalf("LastSeq %d, seq %d", writer.LastSeq(), g.Seq)
	}
	r, err := reader.Check(ctx, entitled.CheckRequest{User: user, MinSeq: writer.LastSeq()})
	if err != nil || !r.Active {
		t.Fatalf("check with minSeq: %+v %v", r, err)
	}
	if _, err := reader.Grant(ctx, entitled.GrantRequest{User: user, Product: "q"}); err != nil {
		t.Fatal(err)
	}
	page, err := reader.Memberships(ctx, entitled.MembershipsRequest{User: user})
	if err != nil || len(page.Memberships) != 2 {
		t.Fatalf("memberships with the reader's own LastSeq: %+v %v", page, err)
	}
}

func TestStaleFromServer(t *testing.T) {
	srv := newServer(t, "--min-seq-wait", "50")
	c := srv.client(t, nil)
	_, err := c.Check(ctxT(t), entitled.CheckRequest{User: "u", MinSeq: 1000})
	var e *entitled.Error
	if !errors.As(err, &e) || e.Code != entitled.CodeStale || e.Op != "check" {
		t.Fatalf("want stale, got %v", err)
	}
}

func TestReconnectAfterRestart(t *testing.T) {
	port := freePort(t)
	srv := newServerOn(t, port)
	c := entitled.NewClient(&entitled.Options{Nodes: []string{srv.addr()}})
	defer c.Close()
	ctx := ctxT(t)
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	srv.kill()
	if err := c.Ping(ctx); err == nil {
		t.Fatal("a ping to a killed server succeeded")
	}
	_, err := c.Grant(ctx, entitled.GrantRequest{User: "u", Product: "p"})
	if err == nil || entitled.MayHaveBeenApplied(err) || !errors.Is(err, entitled.ErrNoNodeAvailable) {
		t.Fatalf("a grant that could not connect was certainly not applied: %v", err)
	}
	if !strings.Contains(err.Error(), srv.addr()) {
		t.Fatalf("the error names the node: %v", err)
	}
	if err := srv.start(port); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := c.Ping(ctx)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no reconnect after the restart: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestWatchSurvivesRestart(t *testing.T) {
	port := freePort(t)
	srv := newServerOn(t, port)
	c := entitled.NewClient(&entitled.Options{Nodes: []string{srv.addr()}})
	defer c.Close()
	ctx := ctxT(t)
	user := uid("watched")
	w, err := c.Watch(ctx, entitled.WatchTarget{User: user})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	g, err := c.Grant(ctx, entitled.GrantRequest{User: user, Product: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if p := nextPush(t, w); p.Gap != nil || p.Cause != "grant" || p.Membership.ID != g.Membership.ID || p.Sequence != g.Seq {
		t.Fatalf("first push: %+v", p)
	}
	if status, err := srv.stop(); err != nil || status != 0 {
		t.Fatalf("stop: %d %v", status, err)
	}
	if err := srv.start(port); err != nil {
		t.Fatal(err)
	}
	gap := nextPush(t, w)
	if gap.Gap == nil || gap.Gap.To.Before(gap.Gap.From) {
		t.Fatalf("want a gap marker after the restart, got %+v", gap)
	}
	// The watch is back: a change after the restart is pushed.
	var r entitled.RevokeResult
	for deadline := time.Now().Add(10 * time.Second); ; {
		if r, err = c.Revoke(ctx, entitled.RevokeRequest{Membership: g.Membership.ID}); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	if p := nextPush(t, w); p.Cause != "revoke" || p.Sequence != r.Seq {
		t.Fatalf("push after the restart: %+v", p)
	}
	w.Close()
	if _, open := <-w.Pushes(); open {
		t.Fatal("the stream stays open after Close")
	}
}

func TestWatchAddRemove(t *testing.T) {
	srv := shared(t)
	c := srv.client(t, nil)
	ctx := ctxT(t)
	a, b := uid("a"), uid("b")
	w, err := c.Watch(ctx, entitled.WatchTarget{User: a})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Add(ctx, entitled.WatchTarget{User: b}); err != nil {
		t.Fatal(err)
	}
	if err := w.Remove(ctx, entitled.WatchTarget{User: a}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Grant(ctx, entitled.GrantRequest{User: a, Product: "p"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Grant(ctx, entitled.GrantRequest{User: b, Product: "p"}); err != nil {
		t.Fatal(err)
	}
	if p := nextPush(t, w); p.Membership.User != b {
		t.Fatalf("want only b's push, got %+v", p)
	}
}

// TestWatchBoundedQueue: a watch the application does not read holds at most MaxQueuedPushes events (it
// stops reading its connection, the server holds the rest), then delivers every push in order once read.
// A full watch closes at once, and an Add waiting behind its pushes fails then.
func TestWatchBoundedQueue(t *testing.T) {
	srv := shared(t)
	const bound, grants = 10, 200
	c := srv.client(t, &entitled.Options{MaxQueuedPushes: bound})
	writer := srv.client(t, nil)
	ctx := ctxT(t)
	user := uid("flood")
	w, err := c.Watch(ctx, entitled.WatchTarget{User: user})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	idle, err := c.Watch(ctx, entitled.WatchTarget{User: user}) // never read: closed while full
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	most := 0
	check := func() {
		for _, q := range []int{w.Queued(), idle.Queued()} {
			if q > most {
				most = q
			}
		}
		if most > bound {
			t.Fatalf("a watch holds %d unread events, above its bound %d (%d %d)", most, bound, w.Queued(), idle.Queued())
		}
	}
	var last int64
	for i := 0; i < grants; i++ {
		g, err := writer.Grant(ctx, entitled.GrantRequest{User: user, Product: fmt.Sprintf("p%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		last = g.Seq
		check()
	}
	for deadline := time.Now().Add(5 * time.Second); w.Queued() < bound || idle.Queued() < bound; {
		if time.Now().After(deadline) {
			t.Fatalf("the watches hold %d and %d events, want %d", w.Queued(), idle.Queued(), bound)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // room for a reader that would go on reading
	check()

	// An Add waits behind the queued pushes; Close of the full watch ends it and the stream at once.
	added := make(chan error, 1)
	go func() { added <- idle.Add(context.Background(), entitled.WatchTarget{User: uid("other")}) }()
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	idle.Close()
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Errorf("Close of a full watch took %v", took)
	}
	select {
	case err := <-added:
		if err == nil {
			t.Error("an Add on a full watch succeeded after Close")
		}
	case <-time.After(2 * time.Second):
		t.Fatal("an Add on a full watch still waits after Close")
	}
	for range idle.Pushes() {
	}

	// Reading: the pushes come in order, up to the last grant's (after a gap if the server cut the
	// connection: then one more grant's push must follow).
	var seen int64
	for seen != last {
		p := nextPush(t, w)
		check()
		if p.Gap != nil {
			g, err := writer.Grant(ctx, entitled.GrantRequest{User: user, Product: "after-gap"})
			if err != nil {
				t.Fatal(err)
			}
			last, seen = g.Seq, 0
			continue
		}
		if p.Cause != "grant" || p.Sequence <= seen {
			t.Fatalf("push out of order after %d: %+v", seen, p)
		}
		seen = p.Sequence
	}
	if most != bound {
		t.Errorf("the queue peaked at %d, want %d", most, bound)
	}
}

func nextPush(t *testing.T, w *entitled.Watch) entitled.Push {
	t.Helper()
	select {
	case p, ok := <-w.Pushes():
		if !ok {
			t.Fatalf("the stream ended: %v", w.Err())
		}
		return p
	case <-time.After(10 * time.Second):
		t.Fatal("no push within 10 s")
	}
	return entitled.Push{}
}

func TestAuthWithToken(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "auth.json")
	admin, reader, secret := "go-admin-token-000000001", "go-check-token-000000001", "go-wrong-token-000000001"
	os.WriteFile(file, []byte(`[{"name":"go-admin","token":"`+admin+`","role":"admin"},`+
		`{"name":"go-check","token":"`+reader+`","role":"check"}]`), 0o600)
	srv := newServer(t, "--auth", file)
	ctx := ctxT(t)

	a := srv.client(t, &entitled.Options{Token: admin})
	if _, err := a.Grant(ctx, entitled.GrantRequest{User: "u", Product: "p"}); err != nil {
		t.Fatal(err)
	}
	h, err := a.History(ctx, entitled.HistoryRequest{User: "u"})
	if err != nil || h.Entries[0].Actor != "go-admin" {
		t.Fatalf("the admin's grant is attributed to its name: %+v %v", h, err)
	}
	r := srv.client(t, &entitled.Options{Token: reader})
	if res, err := r.Check(ctx, entitled.CheckRequest{User: "u"}); err != nil || !res.Active {
		t.Fatalf("check token: %+v %v", res, err)
	}
	if _, err := r.Grant(ctx, entitled.GrantRequest{User: "u", Product: "p"}); !errors.Is(err, entitled.ErrForbidden) || entitled.MayHaveBeenApplied(err) {
		t.Fatalf("want ErrForbidden, got %v", err)
	}
	none := srv.client(t, nil)
	if _, err := none.Check(ctx, entitled.CheckRequest{User: "u"}); !errors.Is(err, entitled.ErrUnauthorized) {
		t.Fatalf("want ErrUnauthorized without a token, got %v", err)
	}
	wrong := srv.client(t, &entitled.Options{Token: secret})
	err = wrong.Ping(ctx)
	if !errors.Is(err, entitled.ErrUnauthorized) || !errors.Is(err, entitled.ErrCannotConnect) {
		t.Fatalf("want ErrUnauthorized when connecting, got %v", err)
	}
	if strings.Contains(err.Error(), secret) {
		t.Fatalf("the error shows the token: %v", err)
	}
	// Over the Unix socket too.
	u := entitled.NewClient(&entitled.Options{Nodes: []string{srv.socket}, Token: reader})
	defer u.Close()
	if _, err := u.Check(ctx, entitled.CheckRequest{User: "u"}); err != nil {
		t.Fatal(err)
	}
}

func TestTLS(t *testing.T) {
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	out, err := exec.Command("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
		"-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost").CombinedOutput()
	if err != nil {
		t.Fatalf("openssl: %v\n%s", err, out)
	}
	srv := newServer(t, "--tls-cert", cert, "--tls-key", key)
	pem, _ := os.ReadFile(cert)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	ctx := ctxT(t)

	trusted := srv.client(t, &entitled.Options{TLSConfig: &tls.Config{RootCAs: roots}})
	if err := trusted.Ping(ctx); err != nil {
		t.Fatalf("trusted certificate: %v", err)
	}
	w, err := trusted.Watch(ctx, entitled.WatchTarget{User: "tls-user"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := trusted.Grant(ctx, entitled.GrantRequest{User: "tls-user", Product: "p"}); err != nil {
		t.Fatal(err)
	}
	if p := nextPush(t, w); p.Cause != "grant" {
		t.Fatalf("push over TLS: %+v", p)
	}

	untrusted := srv.client(t, &entitled.Options{TLSConfig: &tls.Config{}})
	err = untrusted.Ping(ctx)
	var unknown x509.UnknownAuthorityError
	if !errors.Is(err, entitled.ErrCannotConnect) || errors.Is(err, entitled.ErrNoNodeAvailable) || !errors.As(err, &unknown) {
		t.Fatalf("an untrusted certificate fails at once, naming the reason: %v", err)
	}

	plain := srv.client(t, nil)
	err = plain.Ping(ctx)
	if !errors.Is(err, entitled.ErrTLSRequired) || !strings.Contains(err.Error(), "TLSConfig") {
		t.Fatalf("plain text to a TLS port says to use TLS: %v", err)
	}

	wrongWay := shared(t).client(t, &entitled.Options{TLSConfig: &tls.Config{RootCAs: roots}})
	if err := wrongWay.Ping(ctx); err == nil || !strings.Contains(err.Error(), "does not speak TLS") {
		t.Fatalf("TLS to a plain port says the server does not speak TLS: %v", err)
	}
}

func TestClosedClient(t *testing.T) {
	c := shared(t).client(t, nil)
	if err := c.Ping(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := c.Ping(ctxT(t)); !errors.Is(err, entitled.ErrClientClosed) {
		t.Fatalf("want ErrClientClosed, got %v", err)
	}
	if _, err := c.Grant(context.Background(), entitled.GrantRequest{User: "u", Product: "p"}); entitled.MayHaveBeenApplied(err) {
		t.Fatalf("a write refused by a closed client was not sent: %v", err)
	}
}
