package entitled

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// call is one request in flight on a Conn. It is finished exactly once, by whichever comes first: its
// answer (the reader), the connection's end (fail), or its deadline (expire); the state's
// compare-and-swap decides, and only the winner writes line and err and signals done.
type call struct {
	op       string
	id       uint64    // the id a typed request was sent with; 0 for a raw request (its id is not checked)
	sent     bool      // its bytes were handed to the socket (guarded by Conn.mu)
	deadline time.Time // when expire fails it; zero: only its context bounds it
	state    int32     // callPending, then how it finished
	line     []byte    // the answer line
	err      error
	// wantCheck: the reader decodes a check's answer into checkOut without copying the line, and sets
	// checked.
	wantCheck bool
	checked   bool
	checkOut  CheckResult
	// done is signalled once. A raw call's is closed, so that any number may watch it (Call.Done); a typed
	// call's gets one value, so that the call and its channel can be used again (callPool).
	done chan struct{}
	raw  bool
}

const (
	callPending  int32 = iota
	callAnswered       // by the reader, which took it off the FIFO
	callFailed         // by fail, which took it off the FIFO
	callExpired        // by expire; it stays in the FIFO until its answer comes
)

// callPool recycles the typed calls that were taken off the FIFO before the caller saw them finish: a
// check then allocates nothing for its call.
var callPool = sync.Pool{New: func() any { return &call{done: make(chan struct{}, 1)} }}

func newCall(op string) *call {
	cl := callPool.Get().(*call)
	cl.op = op
	return cl
}

func newRawCall(op string) *call {
	return &call{op: op, raw: true, done: make(chan struct{})}
}

// claim makes the caller the one that finishes the call, if it is still pending; it then sets line or
// err and calls signal.
func (cl *call) claim(state int32) bool {
	return atomic.CompareAndSwapInt32(&cl.state, callPending, state)
}

// signal wakes the call's waiter.
func (cl *call) signal() {
	if cl.raw {
		close(cl.done)
	} else {
		cl.done <- struct{}{}
	}
}

// finish records the outcome if the call is still pending, and wakes its waiter.
func (cl *call) finish(state int32, line []byte, err error) bool {
	if !cl.claim(state) {
		return false
	}
	cl.line, cl.err = line, err
	cl.signal()
	return true
}

// release returns a typed call to the pool once its waiter has its outcome, unless expire finished it:
// the FIFO still holds that one, and the reader will take it off when its answer comes.
func (cl *call) release() {
	if cl.raw || atomic.LoadInt32(&cl.state) == callExpired {
		return
	}
	*cl = call{done: cl.done}
	callPool.Put(cl)
}

// wait waits for a call's outcome, or for ctx to end. On return the call is the caller's (see release).
func (c *Conn) wait(ctx context.Context, cl *call) error {
	if ctx.Done() == nil {
		<-cl.done
		return cl.err
	}
	select {
	case <-cl.done:
		return cl.err
	case <-ctx.Done():
	}
	// The call keeps its place in the FIFO; its answer will be discarded. Its bytes are queued, so it is
	// (or will be) sent: as far as the caller knows, it may be carried out.
	kind := ErrTimeout
	if errors.Is(ctx.Err(), context.Canceled) {
		kind = ErrCanceled
	}
	err := &RequestError{Kind: kind, Op: cl.op, Addr: c.addr, Sent: true, Err: ctx.Err()}
	if cl.finish(callExpired, nil, err) {
		<-cl.done
		return err
	}
	<-cl.done // it finished meanwhile: take that outcome
	return cl.err
}

// armLocked makes sure the expiry timer will fire by the call's deadline. Calls of one Client have the
// same timeout, so the oldest has the earliest deadline and the timer fires about once a timeout, not
// once a request.
func (c *Conn) armLocked(deadline time.Time) {
	if c.timerAt.IsZero() || deadline.Before(c.timerAt) {
		c.timerAt = deadline
		d := time.Until(deadline)
		if c.timer == nil {
			c.timer = time.AfterFunc(d, c.expire)
		} else {
			c.timer.Reset(d)
		}
	}
}

// expire fails the calls whose deadline passed, and sets the timer for the next deadline. It claims
// them while the FIFO holds them: a call taken off the FIFO may be in the pool already, serving another
// request.
func (c *Conn) expire() {
	now := time.Now()
	var due []*call
	c.mu.Lock()
	c.timerAt = time.Time{}
	for _, cl := range c.queue[c.head:] {
		if cl.deadline.IsZero() || atomic.LoadInt32(&cl.state) != callPending {
			continue
		}
		if now.Before(cl.deadline) {
			if !c.closed {
				c.armLocked(cl.deadline)
			}
			continue
		}
		if cl.claim(callExpired) {
			due = append(due, cl)
		}
	}
	c.mu.Unlock()
	for _, cl := range due {
		err := fmt.Errorf("no answer within the request timeout (Options.RequestTimeout): %w", context.DeadlineExceeded)
		cl.err = &RequestError{Kind: ErrTimeout, Op: cl.op, Addr: c.addr, Sent: true, Err: err}
		cl.signal()
	}
}
