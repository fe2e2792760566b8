// Package entitled is a client for the entitled server, which answers whether a user or a device may use
// a product or an entitlement. It speaks protocol version 5 (Protocol/PROTOCOL.md): newline-delimited
// JSON over TCP, TLS or a Unix socket.
//
//	c := entitled.NewClient(&entitled.Options{Nodes: []string{"127.0.0.1:7117"}})
//	defer c.Close()
//	access, err := c.Check(ctx, entitled.CheckRequest{User: "alice", Entitlement: "pro"})
//
// A Client is a pool of pipelined connections, safe for concurrent use: many requests are in flight on
// one connection, their answers matched in order and by id. Every method takes a context first: its
// deadline is the request's timeout (Options.RequestTimeout when it has none), and cancelling it fails the
// request at once; the request keeps its place on the connection and its late answer is discarded.
//
// # Errors and retries
//
// An error answer is an *Error; errors.Is matches it against the sentinel of its code (ErrNotFound,
// ErrConflict, ..., ErrUnknownCode for a code from a newer server). Client-side failures are
// *RequestError (ErrConnClosed, ErrTimeout, ErrCanceled, ErrProtocol, ErrClientClosed), *DialError
// (ErrCannotConnect) and *NoNodeError (ErrNoNodeAvailable).
//
// MayHaveBeenApplied(err) tells what a failed write means (PROTOCOL.md, "What an answer means"): true for
// outcome_unknown and internal, and for a write whose connection dropped, or whose deadline passed or
// context was cancelled, after it was sent. Such a write may have been carried out: retry it with the same
// idempotency key (GrantRequest.IdempotencyKey, EventRequest.EventID), which answers the first attempt's
// result if it was applied. False for every other error: the write was certainly not applied, and a retry
// cannot make a duplicate. The client never sends a write twice by itself; a read whose connection drops
// is sent again, on another node when there are several, at most once per node.
//
// # Pool
//
// Options.Nodes are one server or the nodes of a cluster; Options.ConnectionsPerNode connections go to
// each (default 1). A dropped connection is opened again when a request needs it; a node that refuses is
// skipped for a backoff (50 ms doubling to 2 s, full jitter). A starting server's loading answers are
// waited out (Options.LoadingWait). A read refused stale is asked once more on another node. The client
// keeps its writes' highest seq (LastSeq); Options.ReadYourWrites sends it as minSeq with every read that
// gives none. Options.Token authenticates every new connection; Options.TLSConfig makes TCP speak TLS.
//
// # Pages and watches
//
// MembershipsIter and HistoryIter follow a listing's pages to the end. Watch returns a *Watch whose
// Pushes channel delivers the pushed lines of its targets, on a connection of its own; after a reconnect
// it delivers a gap marker (Push.Gap) before the next push.
//
// # The change feed and exports
//
// To keep a copy of the store (admin only): ExportIter reads a full copy a page at a time on a connection
// of its own (the server that took the copy holds it) and names the change it is as of (Seq); Follow
// then delivers every change after it, item after item, on a connection of its own, reconnecting after
// drops and restarts without skipping one, and exposes the Position to store. A feed that no longer
// reaches back ends with a *TruncatedError (errors.Is(err, ErrTruncated)): copy again. Changes reads one
// page.
//
// # Raw requests
//
// Client.Do sends a request map as it is through the pool; Client.Dial opens a *Conn of its own, whose
// Send, SendLine, NextPush and Done serve tools and the conformance tests.
package entitled
