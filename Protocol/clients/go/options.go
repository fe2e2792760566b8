package entitled

import (
	"crypto/tls"
	"time"
)

// Options configure a Client. The zero value connects to 127.0.0.1:7117 with the defaults below.
type Options struct {
	// Nodes are the servers: "host:port", or a Unix socket path ("/run/entitled.sock", or
	// "unix:relative/path"). Several nodes are the nodes of a cluster, which answer alike; requests are
	// spread over them. Default: 127.0.0.1:7117.
	Nodes []string

	// ConnectionsPerNode is how many connections the pool opens to each node. Default 1: requests are
	// pipelined (many in flight on one connection), so one is enough for most applications.
	ConnectionsPerNode int

	// Token authenticates every new connection (a server started with --auth): it is sent as
	// {"op":"auth"} first. It is never logged nor shown in an error.
	Token string

	// TLSConfig makes TCP connections speak TLS (a server started with --tls-cert). Set RootCAs to trust
	// a private CA or a self-signed certificate; ServerName defaults to the node's host. Unix sockets
	// stay plain text, as the server's do.
	TLSConfig *tls.Config

	// DialTimeout bounds opening a connection (TCP, TLS handshake and auth). Default 5 s.
	DialTimeout time.Duration

	// RequestTimeout bounds the wait for an answer when the request's context has no deadline (each
	// attempt, when a read is sent again). Default 10 s; negative: no bound. A context's deadline, when
	// it has one, is the request's timeout. Dial and Watch take it as their deadline too.
	RequestTimeout time.Duration

	// LoadingWait is how long a request is retried while the server starts and answers loading
	// (PROTOCOL.md §3, loading: nothing was carried out): the client reconnects and sends it again,
	// pausing 50 ms, doubling up to 1 s. Default 60 s; negative: return the loading error at once.
	LoadingWait time.Duration

	// ReadYourWrites sends the highest seq of this client's writes (Client.LastSeq) as minSeq of every
	// check, memberships and customer that gives no MinSeq, so that they see the client's own writes on
	// every node of a cluster.
	ReadYourWrites bool

	// MaxQueuedPushes bounds the events (pushes, and a gap marker) a Watch holds in memory that the
	// application has not received yet. Default 10,000. When that many wait, the Watch stops reading its
	// connection until the application receives one: the server holds the lines meanwhile, and if the
	// application stays behind until 4 MiB are unread the server closes the connection, and the Watch
	// reconnects and delivers a gap marker as after any drop. No push is ever dropped by the client.
	MaxQueuedPushes int
}

const (
	defaultNode           = "127.0.0.1:7117"
	defaultDialTimeout    = 5 * time.Second
	defaultRequestTimeout = 10 * time.Second
	defaultLoadingWait    = 60 * time.Second
	defaultMaxQueued      = 10000

	// A node that refused a connection is not dialled again for a random time up to its backoff (full
	// jitter), which starts at minBackoff and doubles up to maxBackoff with each refusal in a row.
	minBackoff = 50 * time.Millisecond
	maxBackoff = 2 * time.Second

	// While a server answers loading, the client asks again after loadingPause, doubling up to
	// maxLoadingPause.
	loadingPause    = 50 * time.Millisecond
	maxLoadingPause = time.Second
)

func (o Options) withDefaults() Options {
	if len(o.Nodes) == 0 {
		o.Nodes = []string{defaultNode}
	}
	if o.ConnectionsPerNode <= 0 {
		o.ConnectionsPerNode = 1
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = defaultDialTimeout
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = defaultRequestTimeout
	}
	if o.LoadingWait == 0 {
		o.LoadingWait = defaultLoadingWait
	}
	if o.MaxQueuedPushes <= 0 {
		o.MaxQueuedPushes = defaultMaxQueued
	}
	return o
}
