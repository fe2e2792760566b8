package entitled

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math/rand"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// node is one server address, with the backoff of its refusals.
type node struct {
	network string // "tcp" or "unix"
	addr    string // "host:port" or a socket path
	host    string // the TLS server name of a TCP node

	mu       sync.Mutex
	refusals int       // refused dials in a row
	retryAt  time.Time // not dialled before, unless a caller insists (loading)
	lastErr  error
}

func parseNode(s string) *node {
	switch {
	case strings.HasPrefix(s, "unix:"):
		return &node{network: "unix", addr: strings.TrimPrefix(s, "unix:")}
	case strings.Contains(s, "/"):
		return &node{network: "unix", addr: s}
	}
	host, _, err := net.SplitHostPort(s)
	if err != nil {
		host = s
	}
	return &node{network: "tcp", addr: s, host: host}
}

// backingOff reports whether the node refused recently, and why.
func (n *node) backingOff(now time.Time) (bool, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return now.Before(n.retryAt), n.lastErr
}

func (n *node) refused(err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.refusals++
	doublings := n.refusals - 1
	if doublings > 8 {
		doublings = 8 // already beyond maxBackoff; a larger shift would overflow
	}
	backoff := minBackoff << uint(doublings)
	if backoff > maxBackoff {
		backoff = maxBackoff
	}
	n.retryAt = time.Now().Add(time.Duration(rand.Int63n(int64(backoff) + 1)))
	n.lastErr = err
}

func (n *node) accepted() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.refusals = 0
	n.retryAt = time.Time{}
	n.lastErr = nil
}

// slot is one connection of the pool, to one node, opened when needed and again after it closed.
type slot struct {
	node *node

	conn    atomic.Pointer[Conn] // read on every request without a lock
	mu      sync.Mutex
	dialing *dialing // a dial in progress, shared by the requests that wait for it
}

type dialing struct {
	done chan struct{}
	conn *Conn
	err  error
}

// current returns the slot's open connection, or nil.
func (s *slot) current() *Conn {
	if c := s.conn.Load(); c != nil && !c.isClosed() {
		return c
	}
	return nil
}

// pool spreads requests over its slots: connectionsPerNode slots per node, slot i going to node
// (start + i) mod n with start random, so that the pools of many processes spread over the nodes.
type pool struct {
	opts   Options
	nodes  []*node
	slots  []*slot
	next   uint32
	closed int32
}

func newPool(opts Options) *pool {
	p := &pool{opts: opts}
	for _, s := range opts.Nodes {
		p.nodes = append(p.nodes, parseNode(s))
	}
	start := rand.Intn(len(p.nodes))
	for i := 0; i < len(p.nodes)*opts.ConnectionsPerNode; i++ {
		p.slots = append(p.slots, &slot{node: p.nodes[(start+i)%len(p.nodes)]})
	}
	return p
}

// get returns an open connection to a node not in avoid: the next open one in turn, opening connections
// of the other slots in the background; or, when none is open, one it opens now, skipping the nodes that
// refused within their backoff unless insist. It fails with a *NoNodeError naming each node's failure,
// or at once with an error that is no node's fault (a refused token, an untrusted certificate).
func (p *pool) get(ctx context.Context, avoid map[*node]bool, insist bool) (*Conn, error) {
	if atomic.LoadInt32(&p.closed) != 0 {
		return nil, ErrClientClosed
	}
	n := uint32(len(p.slots))
	start := atomic.AddUint32(&p.next, 1)
	var live *Conn
	for i := uint32(0); i < n && live == nil; i++ {
		s := p.slots[(start+i)%n]
		if !avoid[s.node] {
			live = s.current()
		}
	}
	if live != nil && n > 1 {
		now := time.Now()
		for _, s := range p.slots {
			if off, _ := s.node.backingOff(now); !off && s.current() == nil {
				p.dialInBackground(s)
			}
		}
	}
	if live != nil {
		return live, nil
	}
	var failures []NodeFailure
	seen := map[*node]bool{}
	now := time.Now()
	for i := uint32(0); i < n; i++ {
		s := p.slots[(start+i)%n]
		if avoid[s.node] || seen[s.node] {
			continue
		}
		if off, why := s.node.backingOff(now); off && !insist {
			seen[s.node] = true
			failures = append(failures, NodeFailure{Addr: s.node.addr, Err: fmt.Errorf("skipped after a refusal: %w", why)})
			continue
		}
		conn, err := p.dial(ctx, s)
		if err == nil {
			return conn, nil
		}
		if ctx.Err() != nil || notNodesFault(err) {
			return nil, err
		}
		seen[s.node] = true
		failures = append(failures, NodeFailure{Addr: s.node.addr, Err: err})
	}
	if len(failures) == 0 {
		for nd := range avoid {
			failures = append(failures, NodeFailure{Addr: nd.addr, Err: errors.New("already tried for this request")})
		}
	}
	return nil, &NoNodeError{Failures: failures}
}

// dial opens the slot's connection, or waits for the dial already in progress.
func (p *pool) dial(ctx context.Context, s *slot) (*Conn, error) {
	s.mu.Lock()
	if c := s.current(); c != nil {
		s.mu.Unlock()
		return c, nil
	}
	d := s.dialing
	if d == nil {
		d = &dialing{done: make(chan struct{})}
		s.dialing = d
		go p.runDial(s, d)
	}
	s.mu.Unlock()
	select {
	case <-d.done:
		return d.conn, d.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *pool) dialInBackground(s *slot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dialing != nil || s.current() != nil {
		return
	}
	d := &dialing{done: make(chan struct{})}
	s.dialing = d
	go p.runDial(s, d)
}

// runDial dials on its own deadline (DialTimeout), not a request's: the connection outlives the request
// that asked for it.
func (p *pool) runDial(s *slot, d *dialing) {
	ctx, cancel := context.WithTimeout(context.Background(), p.opts.DialTimeout)
	defer cancel()
	conn, err := dialNode(ctx, s.node, p.opts, true)
	if err != nil {
		s.node.refused(err)
	} else {
		s.node.accepted()
	}
	s.mu.Lock()
	if err == nil && atomic.LoadInt32(&p.closed) != 0 {
		conn.Close()
		conn, err = nil, ErrClientClosed
	}
	if err == nil {
		if old := s.conn.Swap(conn); old != nil {
			old.Close()
		}
	}
	s.dialing = nil
	s.mu.Unlock()
	d.conn, d.err = conn, err
	close(d.done)
}

func (p *pool) close() {
	atomic.StoreInt32(&p.closed, 1)
	for _, s := range p.slots {
		s.mu.Lock()
		if c := s.conn.Load(); c != nil {
			c.Close()
		}
		s.mu.Unlock()
	}
}

// dialNode opens a connection to a node: TCP or Unix, TLS over TCP when configured, and auth with the
// token. A pooled connection belongs to the node's slot and drops pushed lines (a pool holds no watch).
func dialNode(ctx context.Context, n *node, opts Options, pooled bool) (*Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, n.network, n.addr)
	if err != nil {
		return nil, &DialError{Addr: n.addr, Err: err}
	}
	if opts.TLSConfig != nil && n.network == "tcp" {
		cfg := opts.TLSConfig.Clone()
		if cfg.ServerName == "" {
			cfg.ServerName = n.host
		}
		tc := tls.Client(nc, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			var header tls.RecordHeaderError
			if errors.As(err, &header) {
				err = fmt.Errorf("the server does not speak TLS on this port (connect without TLSConfig): %w", err)
			}
			return nil, &DialError{Addr: n.addr, Err: err}
		}
		nc = tc
	}
	owner := n
	if !pooled {
		owner = nil
	}
	c := newConn(nc, n.addr, owner)
	if opts.Token != "" {
		if err := c.call(ctx, authRequest{token: opts.Token}, nil); err != nil {
			c.Close()
			return nil, &DialError{Addr: n.addr, Err: err}
		}
	}
	return c, nil
}

// notNodesFault: an error every node would give alike, so trying the others is pointless: a refused
// token, a certificate this client does not trust, TLS where the server speaks plain text or the reverse.
func notNodesFault(err error) bool {
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var header tls.RecordHeaderError
	return errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrForbidden) || errors.Is(err, ErrTLSRequired) ||
		errors.As(err, &unknownAuthority) || errors.As(err, &hostname) || errors.As(err, &invalid) ||
		errors.As(err, &header)
}
