package entitled

// ProtocolVersion is the protocol version this client speaks (PROTOCOL.md §7).
const ProtocolVersion = 5

// Operations lists every operation of protocol version 5, each with the method that sends it.
var Operations = []Operation{
	{"ping", "Client.Ping", false},
	{"hello", "Client.Hello", false},
	{"auth", "Conn.Auth", false},
	{"grant", "Client.Grant", true},
	{"check", "Client.Check", false},
	{"claim", "Client.Claim", true},
	{"revoke", "Client.Revoke", true},
	{"extend", "Client.Extend", true},
	{"memberships", "Client.Memberships", false},
	{"define", "Client.Define", true},
	{"undefine", "Client.Undefine", true},
	{"catalog", "Client.Catalog", false},
	{"snapshot", "Client.Snapshot", false},
	{"event", "Client.Event", true},
	{"customer", "Client.Customer", false},
	{"history", "Client.History", false},
	{"watch", "Client.Watch", false},
	{"unwatch", "Watch.Remove", false},
	{"stats", "Client.Stats", false},
	{"reload", "Client.Reload", false},
	{"erase", "Client.Erase", true},
	{"changes", "Client.Changes", false},
	{"export", "Conn.Export", false},
}

// Operation describes one operation of the protocol.
type Operation struct {
	Name   string // the protocol's op
	Method string // the Go method that sends it, as Type.Method
	// Write: one of the protocol's writes, which answer "seq". The client never sends one twice on its
	// own: a connection that drops after sending it fails it with an error for which MayHaveBeenApplied
	// is true. Only the reads (check, memberships, customer, catalog, history, hello, ping, stats,
	// changes) are sent again on another connection.
	Write bool
}

// readOps are the operations a pool sends again to another node when a connection drops (OPERATIONS.md,
// "Clients of several nodes"): they change nothing. Not export: its pages after the first must go to the
// server that took the copy, so it is sent on a Conn (ExportIter), never through the pool.
var readOps = map[string]bool{
	"check": true, "memberships": true, "customer": true, "catalog": true, "history": true,
	"hello": true, "ping": true, "stats": true, "changes": true,
}

// isWriteOp reports whether a failure after sending op leaves the outcome unknown: the protocol's writes
// (grant, claim, revoke, extend, define, undefine, event, erase), and any op this client does not know,
// which may change something.
func isWriteOp(op string) bool {
	if op == "" {
		return false
	}
	for _, o := range Operations {
		if o.Name == op {
			return o.Write
		}
	}
	return true
}
