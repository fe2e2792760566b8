package entitled

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Conn is one connection to a server, outside the Client's pool: what a Watch holds, and what
// Client.Dial returns for a caller that needs a connection of its own (its own auth role, its own
// watches, raw lines). It is safe for concurrent use.
//
// Requests are pipelined: any number may be in flight, and the server answers them in order (PROTOCOL.md
// §1 Framing), so the Conn keeps a FIFO of requests in flight and matches each answer to the oldest. A
// request whose context ends fails at once but keeps its place; its answer is discarded when it comes.
// Typed requests carry an id of the Conn's counter, and an answer that does not echo it is a protocol
// error that closes the Conn (every request in flight fails, as may-have-been-applied). Pushed lines
// (after a watch) never answer a request: they are queued, and read with NextPush or Pushes. They must
// be read: the server closes a watching connection that leaves 4 MiB unread; the Conn reads its socket
// all the time, so the queue is in the Conn's memory. (A Watch's own connection bounds its queue
// instead: its reader stops reading at Options.MaxQueuedPushes, see Watch.)
type Conn struct {
	nc   net.Conn
	addr string
	node *node // the pool's node it belongs to, nil for a dedicated Conn

	// wmu is held by whoever takes wbuf and writes it (the writer goroutine, or a sender writing a batch
	// early): it keeps the writes in order.
	wmu sync.Mutex

	mu      sync.Mutex
	queue   []*call // requests in flight, oldest first from head
	head    int
	wbuf    []byte  // bytes not yet handed to the socket
	spare   []byte  // the writer's other buffer
	unsent  []*call // the calls whose bytes are in wbuf
	woken   bool    // the writer was told that wbuf holds bytes
	nextID  uint64
	closed  bool
	err     error // why the connection closed
	timer   *time.Timer
	timerAt time.Time // when timer fires; zero when it is not set

	// raw reaches the socket's file descriptor, for the sender's early write (flushEarly) and the reader's
	// polls (pollReader), which must not wait; nil for TLS.
	raw syscall.RawConn

	closedFlag int32 // closed, readable without the lock
	wake       chan struct{}
	done       chan struct{}

	pushMu     sync.Mutex
	pushes     []queuedPush
	pushLimit  int           // a Watch's bound on pushes: the reader waits while this many are queued; 0 none
	pushSignal chan struct{} // a push was queued
	pushSpace  chan struct{} // a push was taken
	pushChan   chan Push
	pushOnce   sync.Once
}

// newConn starts the reader and writer of an open network connection.
func newConn(nc net.Conn, addr string, n *node) *Conn {
	c := &Conn{
		nc:         nc,
		addr:       addr,
		node:       n,
		wake:       make(chan struct{}, 1),
		done:       make(chan struct{}),
		pushSignal: make(chan struct{}, 1),
		pushSpace:  make(chan struct{}, 1),
	}
	if sc, ok := nc.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			c.raw = raw // TCP and Unix sockets; TLS has none, and neither writes early nor spins
		}
	}
	go c.readLoop()
	go c.writeLoop()
	return c
}

// Addr is the address the Conn is connected to ("host:port" or a Unix socket path).
func (c *Conn) Addr() string { return c.addr }

// Done is closed when the connection has closed (by Close, the server or the network).
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err says why the connection closed, once Done is closed; nil before. When the server closed it after a
// line that answered no request (busy at the connection limit, tls_required on a TLS port), Err wraps
// that line's *Error.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close closes the connection. Requests in flight fail with ErrClientClosed.
func (c *Conn) Close() error {
	c.fail(ErrClientClosed, nil)
	return nil
}

func (c *Conn) isClosed() bool { return atomic.LoadInt32(&c.closedFlag) != 0 }

// send queues a typed request: op, the next id of the Conn's counter, and its fields, encoded already
// (outside the lock). A zero deadline leaves the call to its context; wantCheck has the reader decode a
// check's answer.
func (c *Conn) send(op string, fields []byte, deadline time.Time, wantCheck bool) (*call, error) {
	c.mu.Lock()
	if c.closed {
		err := c.err
		c.mu.Unlock()
		return nil, &RequestError{Kind: closedKind(err), Op: op, Addr: c.addr, Err: err}
	}
	c.nextID++
	w := wire{b: c.wbuf}
	w.start(op, c.nextID)
	w.b = append(w.b, fields...)
	w.end()
	c.wbuf = w.b
	cl := newCall(op)
	cl.id, cl.deadline, cl.wantCheck = c.nextID, deadline, wantCheck
	c.enqueueLocked(cl)
	unsent := len(c.unsent)
	early := unsent >= earlyWriteAt && unsent >= len(c.queue)-c.head-unsent
	c.mu.Unlock()
	if early && c.raw != nil && c.wmu.TryLock() {
		// See earlyWriteAt. When the writer is writing already, it takes these bytes on its next turn.
		c.flushEarly()
		c.wmu.Unlock()
	}
	return cl, nil
}

// flushEarly writes wbuf from a sender, holding wmu, without ever waiting: a sender that blocked on a full
// socket could not fail its request when its context ended. What the socket does not take now goes back
// to the front of wbuf, for the writer goroutine.
func (c *Conn) flushEarly() {
	c.mu.Lock()
	if c.closed || len(c.wbuf) == 0 {
		c.mu.Unlock()
		return
	}
	buf := c.wbuf
	c.wbuf = c.spare[:0]
	c.spare = nil
	for i, cl := range c.unsent {
		cl.sent = true // its bytes are committed to the socket, ahead of any others
		c.unsent[i] = nil
	}
	c.unsent = c.unsent[:0]
	c.mu.Unlock()
	n, errno := 0, error(nil)
	err := c.raw.Write(func(fd uintptr) bool {
		n, errno = syscall.Write(int(fd), buf)
		return true // one attempt, never a wait
	})
	if n < 0 {
		n = 0
	}
	if err == nil && errno != nil && errno != syscall.EAGAIN && errno != syscall.EINTR {
		err = errno
	}
	if err != nil {
		c.fail(ErrConnClosed, fmt.Errorf("write: %w", err))
		return
	}
	c.mu.Lock()
	if n == len(buf) {
		c.spare = buf[:0]
	} else {
		// Rare (the server is not reading): the rest goes first; the writer goroutine may block on it.
		rest := make([]byte, 0, len(buf)-n+len(c.wbuf)+4096)
		rest = append(append(rest, buf[n:]...), c.wbuf...)
		c.wbuf, c.spare = rest, buf[:0]
		if !c.woken {
			c.woken = true
			c.wake <- struct{}{}
		}
	}
	c.mu.Unlock()
}

// earlyWriteAt: a sender whose request makes this many unsent, and at least as many as are written and
// unanswered, writes them itself at once instead of leaving them to the writer goroutine. Without it the
// client and the server took turns: the answers of a batch woke all its callers, the writer waited for
// every one of them to send its next request (the Gosched loop of writeLoop), and only then wrote, the
// server idle meanwhile; and the server then answered the whole batch while the client sat idle. Writing
// the first half at once lets the server answer it while the client prepares the rest, and the two halves
// then alternate. 25 is half of a batch of 50 in flight, as in the TypeScript client (EARLY_WRITE_AT in
// connection.ts); with few requests in flight nothing changes. Measured with Tools/client-bench (50 in
// flight, medians of 3 runs): entitled-clientbench went from 33% to 55% of entitled-loadgen's rate.
// Only where the socket is reachable (raw): the write must not wait (flushEarly).
const earlyWriteAt = 25

// sendBytes queues lines as they are, with one raw call per "\n" they end.
func (c *Conn) sendBytes(op string, text []byte, deadline time.Time) ([]*call, error) {
	c.mu.Lock()
	if c.closed {
		err := c.err
		c.mu.Unlock()
		return nil, &RequestError{Kind: closedKind(err), Op: op, Addr: c.addr, Err: err}
	}
	c.wbuf = append(c.wbuf, text...)
	calls := make([]*call, 0, 1)
	for rest := text; ; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		cl := newRawCall(op)
		cl.deadline = deadline
		c.enqueueLocked(cl)
		calls = append(calls, cl)
		rest = rest[i+1:]
	}
	if !c.woken && len(text) > 0 {
		c.woken = true
		c.wake <- struct{}{}
	}
	c.mu.Unlock()
	return calls, nil
}

func (c *Conn) enqueueLocked(cl *call) {
	c.queue = append(c.queue, cl)
	c.unsent = append(c.unsent, cl)
	if !cl.deadline.IsZero() {
		c.armLocked(cl.deadline)
	}
	if !c.woken {
		c.woken = true
		c.wake <- struct{}{} // never blocks: the channel holds one and woken says it is empty
	}
}

func (c *Conn) writeLoop() {
	for {
		select {
		case <-c.wake:
		case <-c.done:
			return
		}
		// Let the goroutines that are ready run first: those the reader just woke with their answers
		// send their next requests now, and they go out in this one write instead of one write each
		// (on loopback a write costs the most of a request). A sender may have written the first of
		// them already (earlyWriteAt); this write takes the rest.
		for n, prev := 0, -1; n < 8; n++ {
			runtime.Gosched()
			c.mu.Lock()
			queued := len(c.unsent)
			c.mu.Unlock()
			if queued == prev {
				break
			}
			prev = queued
		}
		c.wmu.Lock()
		ok := c.flushLocked()
		c.wmu.Unlock()
		if !ok {
			return
		}
	}
}

// flushLocked writes wbuf from the writer goroutine, holding wmu; false when the connection is closed (or
// closes on the write).
func (c *Conn) flushLocked() bool {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return false
	}
	buf := c.wbuf
	c.wbuf = c.spare[:0]
	c.spare = nil
	for i, cl := range c.unsent {
		cl.sent = true
		c.unsent[i] = nil
	}
	c.unsent = c.unsent[:0]
	c.woken = false
	c.mu.Unlock()
	if len(buf) > 0 {
		if _, err := c.nc.Write(buf); err != nil {
			c.fail(ErrConnClosed, fmt.Errorf("write: %w", err))
			return false
		}
	}
	c.mu.Lock()
	c.spare = buf[:0]
	c.mu.Unlock()
	return true
}

func (c *Conn) readLoop() {
	r := bufio.NewReaderSize(pollReader{c}, 64<<10)
	var long []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long, chunk...)
			continue
		}
		if err != nil {
			if err == io.EOF && len(long)+len(chunk) > 0 {
				err = errors.New("the server closed the connection inside a line")
			} else if err == io.EOF {
				err = errors.New("the server closed the connection")
			}
			c.fail(ErrConnClosed, err)
			return
		}
		// line is the reader's buffer (valid until the next read) unless the line was longer than it.
		line, owned := chunk[:len(chunk)-1], false
		if long != nil {
			line, owned = append(long, line...), true
			long = nil
		}
		if err := c.dispatch(line, owned); err == errReaderDone {
			return
		} else if err != nil {
			c.fail(ErrProtocol, err)
			return
		}
	}
}

// dispatch routes one line: a pushed line to the push queue, an answer to the oldest request in flight.
// owned says whether line may be kept; otherwise it is copied when kept.
func (c *Conn) dispatch(line []byte, owned bool) error {
	keep := func() []byte {
		if owned {
			return line
		}
		return append([]byte(nil), line...)
	}
	ok, id, hasID, push, err := peek(line)
	if err != nil {
		return err
	}
	if push {
		if c.node != nil {
			return nil // a pooled connection holds no watch of a Watch: a push sent there is dropped
		}
		c.pushMu.Lock()
		c.pushes = append(c.pushes, queuedPush{line: keep()})
		full := c.pushesFullLocked()
		c.pushMu.Unlock()
		select {
		case c.pushSignal <- struct{}{}:
		default:
		}
		if full && !c.waitPushSpace() {
			return errReaderDone
		}
		return nil
	}
	c.mu.Lock()
	if c.head == len(c.queue) {
		c.mu.Unlock()
		if !ok {
			// A line the server sends on its own before closing (busy, tls_required): the closing reason.
			c.fail(ErrConnClosed, errorOf(keep(), ""))
			return nil
		}
		return fmt.Errorf("the server sent an answer to no request: %.200s", line)
	}
	cl := c.queue[c.head]
	c.queue[c.head] = nil
	c.head++
	if c.head == len(c.queue) {
		c.queue = c.queue[:0]
		c.head = 0
	} else if c.head > 64 && c.head*2 > len(c.queue) {
		n := copy(c.queue, c.queue[c.head:])
		c.queue = c.queue[:n]
		c.head = 0
	}
	c.mu.Unlock()
	if cl.id != 0 {
		var problem error
		if hasID && !idIs(id, cl.id) {
			problem = fmt.Errorf("answer id %s where %d was expected", id, cl.id)
		} else if !hasID && ok {
			problem = fmt.Errorf("an answer without the id %d that was sent: %.200s", cl.id, line)
		}
		if problem != nil {
			cl.finish(callFailed, nil, &RequestError{Kind: ErrProtocol, Op: cl.op, Addr: c.addr, Sent: true, Err: problem})
			return problem
		}
	}
	if !cl.claim(callAnswered) {
		return nil // its waiter gave up: the answer is discarded
	}
	if ok && cl.wantCheck && decodeCheck(line, &cl.checkOut) {
		cl.checked = true
	} else {
		cl.line = keep()
	}
	cl.signal()
	return nil
}

// queuedPush is a pushed line waiting to be taken, or the gap marker a Watch puts first on the
// connection it watches again on after a drop.
type queuedPush struct {
	line []byte
	gap  *Gap
}

func (c *Conn) pushesFullLocked() bool { return c.pushLimit > 0 && len(c.pushes) >= c.pushLimit }

// pushesFull reports whether the reader stops (or is about to stop) at the push bound.
func (c *Conn) pushesFull() bool {
	c.pushMu.Lock()
	defer c.pushMu.Unlock()
	return c.pushesFullLocked()
}

// queuedPushes is how many pushes (and a gap marker) wait to be taken.
func (c *Conn) queuedPushes() int {
	c.pushMu.Lock()
	defer c.pushMu.Unlock()
	return len(c.pushes)
}

// waitPushSpace holds the reader, which then reads the socket no further (the server holds the lines),
// until a push is taken and the queue is under its bound (true), or the connection closes (false: the
// reader stops, and queues none of the lines it had read already).
func (c *Conn) waitPushSpace() bool {
	for c.pushesFull() {
		select {
		case <-c.pushSpace:
		case <-c.done:
			return false
		}
	}
	return true
}

// errReaderDone ends the reader of a connection closed while it waited for room for pushes.
var errReaderDone = errors.New("the connection closed")

// boundPushes makes the Conn a Watch's: at most limit pushes wait, first (when not nil) the gap marker to
// deliver before them. Called before the first watch request, so before any push.
func (c *Conn) boundPushes(limit int, first *Gap) {
	c.pushMu.Lock()
	c.pushLimit = limit
	if first != nil {
		c.pushes = append([]queuedPush{{gap: first}}, c.pushes...)
	}
	c.pushMu.Unlock()
}

// idIs reports whether an answer's id, as JSON text, is the number want.
func idIs(id []byte, want uint64) bool {
	if len(id) == 0 || len(id) > 20 || (id[0] == '0' && len(id) > 1) {
		return false
	}
	var n uint64
	for _, d := range id {
		if d < '0' || d > '9' {
			return false
		}
		next := n*10 + uint64(d-'0')
		if next < n {
			return false
		}
		n = next
	}
	return n == want
}

// envelope is what the reader needs of a line it cannot read by its prefix.
type envelope struct {
	OK   *bool           `json:"ok"`
	Push json.RawMessage `json:"push"`
	ID   json.RawMessage `json:"id"`
}

// peek reads "ok", "id" and "push" of a line. The server writes "ok" then "id" first, so the common
// answer is read without a JSON decoder; any other line is decoded.
func peek(line []byte) (ok bool, id []byte, hasID bool, push bool, err error) {
	for _, prefix := range [...]string{`{"ok":true,"id":`, `{"ok":false,"id":`} {
		if len(line) > len(prefix) && string(line[:len(prefix)]) == prefix {
			rest := line[len(prefix):]
			n := 0
			for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
				n++
			}
			if n > 0 && n < len(rest) && (rest[n] == ',' || rest[n] == '}') && (n == 1 || rest[0] != '0') {
				return prefix[6] == 't', rest[:n], true, false, nil
			}
			break
		}
	}
	var env envelope
	if err := json.Unmarshal(line, &env); err != nil {
		return false, nil, false, false, fmt.Errorf("the server sent a line that is not a JSON object: %.200s (%v)", line, err)
	}
	switch {
	case env.Push != nil && env.OK == nil:
		return false, nil, false, true, nil
	case env.OK != nil && env.Push == nil:
		return *env.OK, env.ID, env.ID != nil, false, nil
	default:
		return false, nil, false, false, fmt.Errorf("the server sent a line without exactly one of \"ok\" and \"push\": %.200s", line)
	}
}

// closedKind is the Kind of a request refused by a closed Conn.
func closedKind(err error) error {
	if errors.Is(err, ErrClientClosed) {
		return ErrClientClosed
	}
	return ErrConnClosed
}

// fail closes the connection once: every request in flight fails with kind and the cause, its Sent
// saying whether its bytes had been handed to the socket.
func (c *Conn) fail(kind error, cause error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	atomic.StoreInt32(&c.closedFlag, 1)
	if cause == nil {
		cause = kind
	}
	if kind == ErrClientClosed {
		c.err = ErrClientClosed
	} else {
		c.err = &RequestError{Kind: kind, Addr: c.addr, Err: cause}
	}
	pending := c.queue[c.head:]
	c.queue, c.head = nil, 0
	if c.timer != nil {
		c.timer.Stop()
	}
	sent := make([]bool, len(pending))
	for i, cl := range pending {
		sent[i] = cl.sent
	}
	c.mu.Unlock()
	c.nc.Close()
	for i, cl := range pending {
		cl.finish(callFailed, nil, &RequestError{Kind: kind, Op: cl.op, Addr: c.addr, Sent: sent[i], Err: cause})
	}
	close(c.done)
}

// call sends a typed request on this connection and decodes its answer into out.
func (c *Conn) call(ctx context.Context, req request, out any) error {
	w := getWire()
	req.encode(w)
	cl, err := c.send(req.op(), w.b, time.Time{}, false)
	putWire(w)
	if err != nil {
		return err
	}
	if err := c.wait(ctx, cl); err != nil {
		cl.release()
		return err
	}
	err = decodeAnswer(cl.line, cl.op, out)
	cl.release()
	return err
}

// Auth authenticates this connection with a token (PROTOCOL.md §6 auth): it then has the token's role.
// An unknown token is ErrUnauthorized, and the connection loses any role it had.
func (c *Conn) Auth(ctx context.Context, token string) (AuthResult, error) {
	var out AuthResult
	err := c.call(ctx, authRequest{token: token}, &out)
	return out, err
}

// spinPolls bounds how often the reader asks the socket again, without sleeping, before it waits for it
// the usual way (parked on the runtime's network poller, the thread asleep in epoll_wait when nothing
// else runs). It spins only while requests are in flight, whose answers are coming. Why: waking a
// sleeping thread costs tens of µs on a virtual machine, and with 50 checks in flight at GOMAXPROCS 1 the
// client's thread slept about 6,000 times a second, once every 25-35 checks (/proc voluntary context
// switches); spinning cut that to about 1,200, and entitled-clientbench went from 55% to 75% of
// entitled-loadgen's rate (Tools/client-bench, medians of 3 runs, twice), its CPU per check from 1.9 to
// 1.3 µs. The server spins likewise (busyPoll, up to 50 µs). Each poll is a read that finds nothing (well
// under a µs) and a runtime.Gosched, so the goroutines that are ready run between polls: 64 polls wait a
// few tens of µs at most, which is also what a wait for a slow server's answer costs in CPU. A budget
// that adapted (halved when the spin found nothing, doubled when it caught the answers or the answers came
// soon after) measured 46% and 51% in the same harness: it sank below the server's usual answer time.
const spinPolls = 64

// pollReader reads the Conn's socket, spinning (see spinPolls) when it can reach the file descriptor.
type pollReader struct {
	c *Conn
}

func (r pollReader) Read(p []byte) (int, error) {
	if r.c.raw != nil && len(p) > 0 {
		for i := 0; i < spinPolls && r.c.awaiting(); i++ {
			n, errno := 0, error(nil)
			err := r.c.raw.Read(func(fd uintptr) bool {
				n, errno = syscall.Read(int(fd), p)
				return true // one attempt, never a wait
			})
			if err != nil {
				break // closed: let the ordinary read say so
			}
			if errno == nil {
				if n == 0 {
					return 0, io.EOF
				}
				return n, nil
			}
			if errno != syscall.EAGAIN && errno != syscall.EINTR {
				break
			}
			runtime.Gosched()
		}
	}
	return r.c.nc.Read(p)
}

// awaiting reports whether requests are in flight.
func (c *Conn) awaiting() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.head < len(c.queue)
}
