package entitled

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"
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
// The connection is read all the time (the server closes a watching connection that leaves 4 MiB unread):
// pushes the channel cannot take yet wait in memory.
type Watch struct {
	c       *Client
	pushes  chan Push
	closing chan struct{}
	stop    context.CancelFunc
	stopCtx context.Context
	ended   chan struct{}

	mu      sync.Mutex // serialises Add, Remove and watching again after a drop
	conn    *Conn
	targets []WatchTarget
	err     error
	closed  bool
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
	for _, t := range targets {
		if err := conn.call(ctx, watchRequest{"watch", t}, nil); err != nil {
			conn.Close()
			return nil, err
		}
	}
	stopCtx, stop := context.WithCancel(context.Background())
	w := &Watch{
		c: c, pushes: make(chan Push, 256), closing: make(chan struct{}), stop: stop, stopCtx: stopCtx,
		ended: make(chan struct{}), conn: conn, targets: append([]WatchTarget(nil), targets...),
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		conn.Close()
		stop()
		return nil, ErrClientClosed
	}
	c.watches[w] = struct{}{}
	c.mu.Unlock()
	go w.run(conn)
	return w, nil
}

// Pushes returns the stream: pushed lines, and gap markers after a reconnect.
func (w *Watch) Pushes() <-chan Push { return w.pushes }

// Err says why the stream ended: nil after Close, the refusal when watching again was refused.
func (w *Watch) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Add watches one more target on the Watch's connection (and again after each reconnect).
func (w *Watch) Add(ctx context.Context, t WatchTarget) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClientClosed
	}
	if err := w.conn.call(ctx, watchRequest{"watch", t}, nil); err != nil {
		return err
	}
	w.targets = append(w.targets, t)
	return nil
}

// Remove stops watching a target, given exactly as it was added.
func (w *Watch) Remove(ctx context.Context, t WatchTarget) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClientClosed
	}
	if err := w.conn.call(ctx, watchRequest{"unwatch", t}, nil); err != nil {
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

// Close unwatches, closes the connection and ends the stream (its channel is closed).
func (w *Watch) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		<-w.ended
		return nil
	}
	w.closed = true
	conn := w.conn
	w.mu.Unlock()
	close(w.closing)
	w.stop()
	// Tell the server, so it stops pushing at once; the connection closes right after either way.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	_ = conn.call(ctx, watchRequest{"unwatch", WatchTarget{}}, nil)
	cancel()
	conn.Close()
	<-w.ended
	w.c.mu.Lock()
	delete(w.c.watches, w)
	w.c.mu.Unlock()
	return nil
}

// run forwards the pushes of the connection, and of the next one after each drop.
func (w *Watch) run(conn *Conn) {
	defer close(w.ended)
	defer close(w.pushes)
	for {
		for {
			p, err := conn.NextPush(w.stopCtx)
			if p.Line == nil && err != nil {
				break
			}
			select {
			case w.pushes <- p:
			case <-w.closing:
				return
			}
		}
		select {
		case <-w.closing:
			return
		default:
		}
		from, why := time.Now(), conn.Err()
		next, err := w.rewatch()
		if err != nil {
			w.mu.Lock()
			if !w.closed {
				w.err = err
			}
			w.mu.Unlock()
			conn.Close()
			return
		}
		conn = next
		select {
		case w.pushes <- Push{Gap: &Gap{From: from, To: time.Now(), Err: why}}:
		case <-w.closing:
			return
		}
	}
}

// rewatch connects again with backoff and watches every target; it fails only when the Watch is closed
// or watching is refused for good.
func (w *Watch) rewatch() (*Conn, error) {
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
		conn, err := w.watchOnce()
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

func (w *Watch) watchOnce() (*Conn, error) {
	ctx, cancel := context.WithTimeout(w.stopCtx, w.c.opts.DialTimeout)
	defer cancel()
	conn, err := w.c.dialAny(ctx, true)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		conn.Close()
		return nil, ErrClientClosed
	}
	for _, t := range w.targets {
		if err := conn.call(ctx, watchRequest{"watch", t}, nil); err != nil {
			conn.Close()
			return nil, err
		}
	}
	w.conn = conn
	return conn, nil
}
