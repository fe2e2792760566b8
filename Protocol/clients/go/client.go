package entitled

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Client is a pool of pipelined connections to one server or to the nodes of a cluster. It is safe for
// concurrent use by many goroutines; make one and share it.
//
// What it does for every request (see the package documentation for the details):
//   - sends it on one of its open connections, in turn, opening connections as needed; a node that
//     refuses is skipped for a backoff (50 ms doubling to 2 s, full jitter);
//   - when the connection drops before the answer: sends a read (check, memberships, customer, catalog,
//     history, hello, ping, stats, changes) again, on another node when there is one, at most once per
//     node; never a write, whose error then says that it may have been applied (MayHaveBeenApplied);
//   - waits out a starting server's loading answers (Options.LoadingWait);
//   - asks a read refused stale once more on another node, when there are several;
//   - keeps the highest seq of its writes (LastSeq) for read-your-writes (Options.ReadYourWrites).
type Client struct {
	opts    Options
	pool    *pool
	lastSeq int64

	mu     sync.Mutex
	owned  map[io.Closer]struct{} // what holds a connection of its own: watches, followers, exports
	closed bool
}

// NewClient returns a client with the options (nil: the defaults). It connects when the first request
// needs a connection.
func NewClient(opt *Options) *Client {
	var o Options
	if opt != nil {
		o = *opt
	}
	o = o.withDefaults()
	return &Client{opts: o, pool: newPool(o), owned: map[io.Closer]struct{}{}}
}

// Close closes every connection of the client, and its watches, followers and export iterators.
// Requests in flight fail with ErrClientClosed.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	owned := c.owned
	c.owned = map[io.Closer]struct{}{}
	c.mu.Unlock()
	for x := range owned {
		x.Close()
	}
	c.pool.close()
	return nil
}

// own registers a Watch, Follower or ExportIter, which holds a connection outside the pool, so that Close
// closes it too; false when the client is closed already.
func (c *Client) own(x io.Closer) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.owned[x] = struct{}{}
	return true
}

// disown forgets what own registered, once it is closed.
func (c *Client) disown(x io.Closer) {
	c.mu.Lock()
	delete(c.owned, x)
	c.mu.Unlock()
}

// LastSeq is the highest seq (change number) a write of this client was answered with; 0 before any.
// Give it as MinSeq to a read on another client or node to see the client's writes there.
func (c *Client) LastSeq() int64 { return atomic.LoadInt64(&c.lastSeq) }

func (c *Client) noteSeq(seq int64) {
	for {
		old := atomic.LoadInt64(&c.lastSeq)
		if seq <= old || atomic.CompareAndSwapInt64(&c.lastSeq, old, seq) {
			return
		}
	}
}

// minSeq is the minSeq a read sends: its own, or with ReadYourWrites the client's LastSeq.
func (c *Client) minSeq(given int64) int64 {
	if given == 0 && c.opts.ReadYourWrites {
		return c.LastSeq()
	}
	return given
}

// Dial opens a connection of its own to the first node that accepts it, outside the pool, with the
// client's TLSConfig and Token. Close it when done.
func (c *Client) Dial(ctx context.Context) (*Conn, error) {
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	return c.dialAny(ctx, false)
}

// dialAny opens a connection to the first node, from the pool's turn on, that accepts one.
func (c *Client) dialAny(ctx context.Context, insist bool) (*Conn, error) {
	nodes := c.pool.nodes
	start := int(atomic.AddUint32(&c.pool.next, 1))
	var failures []NodeFailure
	now := time.Now()
	for i := range nodes {
		n := nodes[(start+i)%len(nodes)]
		if off, why := n.backingOff(now); off && !insist {
			failures = append(failures, NodeFailure{Addr: n.addr, Err: why})
			continue
		}
		conn, err := dialNode(ctx, n, c.opts, false)
		if err == nil {
			n.accepted()
			return conn, nil
		}
		if ctx.Err() != nil || notNodesFault(err) {
			return nil, err
		}
		n.refused(err)
		failures = append(failures, NodeFailure{Addr: n.addr, Err: err})
	}
	return nil, &NoNodeError{Failures: failures}
}

func (c *Client) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok || c.opts.RequestTimeout < 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, c.opts.RequestTimeout)
}

// outgoing is a request for exchange: a typed one's op and encoded fields, or a raw line.
type outgoing struct {
	op        string
	fields    []byte
	raw       []byte
	wantCheck bool
}

// send puts the request on a connection.
func (o *outgoing) send(conn *Conn, deadline time.Time) (*call, error) {
	if o.raw == nil {
		return conn.send(o.op, o.fields, deadline, o.wantCheck)
	}
	calls, err := conn.sendBytes(o.op, o.raw, deadline)
	if err != nil {
		return nil, err
	}
	return calls[0], nil
}

// exchange sends one request through the pool and returns its finished call (the caller releases it),
// with the pool's rules for dropped connections, loading and stale, and the deadline of
// Options.RequestTimeout for each attempt when ctx has none.
func (c *Client) exchange(ctx context.Context, o outgoing) (*call, error) {
	op := o.op
	read := op == "check" || readOps[op] // a check, the hot path, without the map's lookup
	_, hasDeadline := ctx.Deadline()
	var (
		avoid          map[*node]bool // nodes this request dropped on (or was stale on)
		resends        int
		loadingUntil   time.Time
		pause          = loadingPause
		insist         bool
		staleRetried   bool
		lastLoadingErr error
	)
	for {
		conn, err := c.pool.get(ctx, avoid, insist)
		if err != nil {
			if !loadingUntil.IsZero() && ctx.Err() == nil && !notNodesFault(err) && errors.Is(err, ErrNoNodeAvailable) {
				// A starting server that closed its loading connections may refuse for a moment.
				if c.pauseLoading(ctx, loadingUntil, &pause) {
					continue
				}
				return nil, lastLoadingErr
			}
			return nil, err
		}
		insist = false
		var deadline time.Time
		if !hasDeadline && c.opts.RequestTimeout > 0 {
			deadline = time.Now().Add(c.opts.RequestTimeout)
		}
		cl, err := o.send(conn, deadline)
		if err != nil {
			// The connection closed before the request was written: it was not sent, so it is safe to
			// send on another connection, whatever it is.
			var re *RequestError
			if errors.As(err, &re) && !re.Sent && re.Kind == ErrConnClosed && resends < len(c.pool.slots)+1 {
				resends++
				continue
			}
			return nil, err
		}
		if err := conn.wait(ctx, cl); err != nil {
			cl.release()
			var re *RequestError
			dropped := errors.As(err, &re) && (re.Kind == ErrConnClosed || re.Kind == ErrProtocol)
			if dropped && ctx.Err() == nil && (read || !re.Sent) && resends < len(c.pool.nodes) {
				resends++
				if conn.node != nil {
					if avoid == nil {
						avoid = map[*node]bool{}
					}
					avoid[conn.node] = true
					if len(avoid) >= len(c.pool.nodes) {
						avoid = nil // every node dropped it: one more try on a new connection anywhere
					}
				}
				continue
			}
			if dropped && !loadingUntil.IsZero() && read && ctx.Err() == nil {
				continue // the server closed its loading connection as it became ready
			}
			return nil, err
		}
		if cl.checked {
			return cl, nil
		}
		switch answerCode(cl.line) {
		case CodeLoading:
			if c.opts.LoadingWait < 0 {
				return cl, nil
			}
			if loadingUntil.IsZero() {
				loadingUntil = time.Now().Add(c.opts.LoadingWait)
			}
			// Nothing was carried out; the server closes this connection once it is ready.
			conn.Close()
			lastLoadingErr = errorOf(cl.line, op)
			if !c.pauseLoading(ctx, loadingUntil, &pause) {
				return cl, nil
			}
			cl.release()
			insist = true
			continue
		case CodeStale:
			if !staleRetried && len(c.pool.nodes) > 1 {
				staleRetried = true
				if avoid == nil {
					avoid = map[*node]bool{}
				}
				avoid[conn.node] = true
				cl.release()
				continue
			}
		}
		return cl, nil
	}
}

// pauseLoading sleeps the next pause before asking a loading server again; false when the wait is over.
func (c *Client) pauseLoading(ctx context.Context, until time.Time, pause *time.Duration) bool {
	if time.Now().Add(*pause).After(until) {
		return false
	}
	t := time.NewTimer(*pause)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return false
	}
	*pause *= 2
	if *pause > maxLoadingPause {
		*pause = maxLoadingPause
	}
	return true
}

// do sends a typed request through the pool and decodes its answer into out.
func (c *Client) do(ctx context.Context, req request, out any) error {
	w := getWire()
	req.encode(w)
	err := c.doEncoded(ctx, req.op(), w, out)
	putWire(w)
	return err
}

// doEncoded sends a request whose fields are encoded in w, and decodes its answer into out.
func (c *Client) doEncoded(ctx context.Context, op string, w *wire, out any) error {
	_, wantCheck := out.(*CheckResult)
	cl, err := c.exchange(ctx, outgoing{op: op, fields: w.b, wantCheck: wantCheck})
	if err != nil {
		return err
	}
	if cl.checked {
		*out.(*CheckResult) = cl.checkOut
	} else {
		err = decodeAnswer(cl.line, op, out)
	}
	cl.release()
	if err != nil {
		return err
	}
	if s, ok := out.(interface{ seq() int64 }); ok {
		c.noteSeq(s.seq())
	}
	return nil
}

// Do sends a request as it is (the caller's "id" kept, and not checked) through the pool, with the
// pool's rules (a read sent again after a drop, loading waited out), and returns the answer as decoded
// JSON (numbers as json.Number). An error answer is returned as an answer, not as an error; the error is
// for a request that got no answer. Pushed lines of a watch sent this way are dropped: use Watch, or a
// Conn of Dial.
func (c *Client) Do(ctx context.Context, req map[string]any) (map[string]any, error) {
	text, op, err := encodeRaw(req)
	if err != nil {
		return nil, err
	}
	cl, err := c.exchange(ctx, outgoing{op: op, raw: text})
	if err != nil {
		return nil, err
	}
	answer, err := decodeRaw(cl.line)
	if err == nil {
		if seq, ok := answer["seq"].(interface{ Int64() (int64, error) }); ok && answer["ok"] == true {
			if n, err := seq.Int64(); err == nil {
				c.noteSeq(n)
			}
		}
	}
	return answer, err
}
