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

// Watch is a stream of pushed lines for its targets (PROTOCOL.md §5, Watching and pushed lines), on a
// connection of its own, so that the pool's requests never wait behind pushes.
//
// When its connection drops, the Watch reconnects (50 ms doubling to 2 s, full jitter; a starting server's
// loading answers are waited out too), watches its targets again, and delivers a gap marker (Push.Gap)
// before the next push: changes made meanwhile were not pushed. Re-read the state you rely on (Check,
// Customer) when one comes. The channel is closed after Close, or when watching again is refused for
// good (a token the server no longer takes, say); Err then says why.
//
// Memory is bounded by backpressure: at most Options.MaxQueuedPushes events (default 10,000) wait for the
// application (Queued); when that many wait, the Watch reads its connection no further until the
// application receives one. The server holds the lines meanwhile; an application that stays behind until
// 4 MiB are unread has its connection closed by the server (PROTOCOL.md, Flow control), and the Watch
// reconnects and delivers a gap marker as after any drop. No push is dropped by the client. While the
// Watch waits so, Add and Remove wait too (their answers come after the pushes); Close does not.
type Watch struct {
	c       *Client
	pushes  chan Push
	closing chan struct{}
	stop    context.CancelFunc
	stopCtx context.Context
	ended   chan struct{}
	once    sync.Once
	current atomic.Pointer[Conn] // the connection watched on, for Close and Queued

	mu      sync.Mutex // serialises Add, Remove and watching again after a drop
	targets []WatchTarget
	err     error
}

// Watch opens a connection, watches each target on it and returns the stream of its pushes.
func (c *Client) Watch(ctx context.Context, targets ...WatchTarget) (*Watch, error) {
	if len(targets) == 0 {
		return nil, errors.New("entitled: Watch needs at least one target (a user, a device, both, or All)")
	}
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	conn, err := c.dialAny(ctx, false)
	if err != nil {
		return nil, err
	}
	conn.boundPushes(c.opts.MaxQueuedPushes, nil)
	for _, t := range targets {
		if err := conn.call(ctx, watchRequest{"watch", t}, nil); err != nil {
			conn.Close()
			return nil, err
		}
	}
	stopCtx, stop := context.WithCancel(context.Background())
	// Unbuffered: a push waits in the connection's bounded queue until the application receives it.
	w := &Watch{
		c: c, pushes: make(chan Push), closing: make(chan struct{}), stop: stop, stopCtx: stopCtx,
		ended: make(chan struct{}), targets: append([]WatchTarget(nil), targets...),
	}
	w.current.Store(conn)
	if !c.own(w) {
		conn.Close()
		stop()
		return nil, ErrClientClosed
	}
	go w.run(conn)
	return w, nil
}

// Pushes returns the stream: pushed lines, and gap markers after a reconnect.
func (w *Watch) Pushes() <-chan Push { return w.pushes }

// Queued is how many events (pushes, and a gap marker) wait for the application to receive them: never
// more than Options.MaxQueuedPushes.
func (w *Watch) Queued() int { return w.current.Load().queuedPushes() }

// Err says why the stream ended: nil after Close, the refusal when watching again was refused.
func (w *Watch) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *Watch) isClosed() bool {
	select {
	case <-w.closing:
		return true
	default:
		return false
	}
}

// Add watches one more target on the Watch's connection (and again after each reconnect).
func (w *Watch) Add(ctx context.Context, t WatchTarget) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.isClosed() {
		return ErrClientClosed
	}
	if err := w.current.Load().call(ctx, watchRequest{"watch", t}, nil); err != nil {
		return err
	}
	w.targets = append(w.targets, t)
	return nil
}

// Remove stops watching a target, given exactly as it was added.
func (w *Watch) Remove(ctx context.Context, t WatchTarget) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.isClosed() {
		return ErrClientClosed
	}
	if err := w.current.Load().call(ctx, watchRequest{"unwatch", t}, nil); err != nil {
		return err
	}
	for i, have := range w.targets {
		if have == t {
			w.targets = append(w.targets[:i], w.targets[i+1:]...)
			break
		}
	}
	return nil
}

// Close unwatches, closes the connection and ends the stream (its channel is closed). It does not wait
// for the application to receive what is queued, nor for an Add or Remove in flight (they fail).
func (w *Watch) Close() error {
	w.once.Do(func() {
		close(w.closing)
		w.stop()
		conn := w.current.Load()
		// Tell the server, so it stops pushing at once; the connection closes right after either way. Not
		// when the reader waits for room: the answer would not be read.
		if !conn.pushesFull() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = conn.call(ctx, watchRequest{"unwatch", WatchTarget{}}, nil)
			cancel()
		}
		conn.Close() // wakes the reader, and an Add or Remove waiting for an answer
	})
	<-w.ended
	w.c.disown(w)
	return nil
}

// run forwards the pushes of the connection, and of the next one after each drop. A push leaves the
// connection's queue only once the application has received it, so the queue is all the Watch holds.
func (w *Watch) run(conn *Conn) {
	defer close(w.ended)
	defer close(w.pushes)
	defer func() { conn.Close() }() // the last one, which Close may not have seen
	for {
		for {
			p, err := conn.peekPush(w.stopCtx)
			if p.Line == nil && p.Gap == nil && err != nil {
				break
			}
			select {
			case w.pushes <- p:
				conn.dropPush()
			case <-w.closing:
				return
			}
		}
		if w.isClosed() {
			return
		}
		gap := &Gap{From: time.Now(), Err: conn.Err()}
		next, err := w.rewatch(gap)
		if err != nil {
			w.mu.Lock()
			if !w.isClosed() {
				w.err = err
			}
			w.mu.Unlock()
			return
		}
		conn = next // its queue starts with the gap marker
	}
}

// rewatch connects again with backoff and watches every target; it fails only when the Watch is closed
// or watching is refused for good.
func (w *Watch) rewatch(gap *Gap) (*Conn, error) {
	backoff := minBackoff
	for {
		t := time.NewTimer(time.Duration(rand.Int63n(int64(backoff) + 1)))
		select {
		case <-t.C:
		case <-w.closing:
			t.Stop()
			return nil, ErrClientClosed
		}
		if backoff *= 2; backoff > maxBackoff {
			backoff = maxBackoff
		}
		conn, err := w.watchOnce(gap)
		if err == nil {
			return conn, nil
		}
		var e *Error
		if errors.As(err, &e) && (e.Code == CodeUnauthorized || e.Code == CodeForbidden || e.Code == CodeBadRequest) {
			return nil, fmt.Errorf("entitled: watching again after a reconnect was refused: %w", err)
		}
		if errors.Is(err, ErrClientClosed) {
			return nil, err
		}
	}
}

// watchOnce connects and watches every target; the connection's queue starts with the gap marker, so it
// comes before the first push and counts towards the bound.
func (w *Watch) watchOnce(gap *Gap) (*Conn, error) {
	ctx, cancel := context.WithTimeout(w.stopCtx, w.c.opts.DialTimeout)
	defer cancel()
	conn, err := w.c.dialAny(ctx, true)
	if err != nil {
		return nil, err
	}
	conn.boundPushes(w.c.opts.MaxQueuedPushes, gap)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.isClosed() {
		conn.Close()
		return nil, ErrClientClosed
	}
	for _, t := range w.targets {
		if err := conn.call(ctx, watchRequest{"watch", t}, nil); err != nil {
			conn.Close()
			return nil, err
		}
	}
	gap.To = time.Now() // nobody reads the marker before watchOnce returns
	w.current.Store(conn)
	return conn, nil
}
