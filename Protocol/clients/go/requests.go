package entitled

import "time"

// A request's fields are named as the protocol spells them, in Go's casing; a field left at its zero
// value is not sent (the protocol reads an absent field as its default). The structs hold exactly the
// fields each operation takes, so a field an operation would refuse cannot be passed.

// request is a typed request: its op and its fields.
type request interface {
	op() string
	encode(w *wire)
}

// GrantRequest creates a membership (PROTOCOL.md §6 grant). Give User, Device or both, and Product.
type GrantRequest struct {
	User    string
	Device  string
	Product string
	Plan    string
	Source  Source // default manual
	// ExpiresAt or Duration, not both; with neither the membership is lifetime.
	ExpiresAt time.Time
	Duration  Duration
	// PurchasedAt and RenewsCount import a purchase made before: it is dated at PurchasedAt.
	PurchasedAt time.Time
	RenewsCount int
	WillRenew   *bool // nil: the server's default, false
	PeriodType  PeriodType
	Environment Environment
	Ownership   Ownership
	GrantType   GrantType
	// TransactionID is the store's transaction; OriginalTransactionID the subscription's first one.
	TransactionID         string
	OriginalTransactionID string
	// IdempotencyKey makes a retry safe: a grant whose outcome is unknown (MayHaveBeenApplied) is sent
	// again with the same key, and answers the first one's membership if it was applied.
	IdempotencyKey string
	Reason         string
}

func (GrantRequest) op() string { return "grant" }
func (r GrantRequest) encode(w *wire) {
	w.str("user", r.User)
	w.str("device", r.Device)
	w.str("product", r.Product)
	w.str("plan", r.Plan)
	w.str("source", string(r.Source))
	w.time("expiresAt", r.ExpiresAt)
	w.str("duration", string(r.Duration))
	w.time("purchasedAt", r.PurchasedAt)
	w.int("renewsCount", int64(r.RenewsCount))
	w.optFlag("willRenew", r.WillRenew)
	w.str("periodType", string(r.PeriodType))
	w.str("environment", string(r.Environment))
	w.str("ownership", string(r.Ownership))
	w.str("grantType", string(r.GrantType))
	w.str("transactionId", r.TransactionID)
	w.str("originalTransactionId", r.OriginalTransactionID)
	w.str("idempotencyKey", r.IdempotencyKey)
	w.str("reason", r.Reason)
}

// CheckRequest asks whether a subject has access (PROTOCOL.md §6 check): to Product, to Entitlement, or
// (neither) to anything. Give User, Device or both.
type CheckRequest struct {
	User        string
	Device      string
	Product     string
	Entitlement string
	At          time.Time // zero: now
	// MinSeq: answer once the server has applied this change (a write's Seq); 0: at once. With
	// Options.ReadYourWrites a zero MinSeq is the client's LastSeq.
	MinSeq int64
}

func (CheckRequest) op() string { return "check" }
func (r CheckRequest) encode(w *wire) {
	w.str("user", r.User)
	w.str("device", r.Device)
	w.str("product", r.Product)
	w.str("entitlement", r.Entitlement)
	w.time("at", r.At)
	w.int("minSeq", r.MinSeq)
}

// ClaimRequest gives a device's guest memberships to a user (PROTOCOL.md §6 claim).
type ClaimRequest struct {
	Device string
	User   string
	Reason string
}

func (ClaimRequest) op() string { return "claim" }
func (r ClaimRequest) encode(w *wire) {
	w.str("device", r.Device)
	w.str("user", r.User)
	w.str("reason", r.Reason)
}

// RevokeRequest takes a membership back (PROTOCOL.md §6 revoke).
type RevokeRequest struct {
	Membership string
	Reason     string // default manual
}

func (RevokeRequest) op() string { return "revoke" }
func (r RevokeRequest) encode(w *wire) {
	w.str("membership", r.Membership)
	w.str("reason", r.Reason)
}

// ExtendRequest moves a membership's expiry later by hand (PROTOCOL.md §6 extend): Duration or
// ExpiresAt, one of the two. An extension by Duration sent twice extends twice; one to ExpiresAt is safe
// to repeat.
type ExtendRequest struct {
	Membership string
	Duration   Duration
	ExpiresAt  time.Time
	Reason     string
}

func (ExtendRequest) op() string { return "extend" }
func (r ExtendRequest) encode(w *wire) {
	w.str("membership", r.Membership)
	w.str("duration", string(r.Duration))
	w.time("expiresAt", r.ExpiresAt)
	w.str("reason", r.Reason)
}

// MembershipsRequest lists memberships a page at a time (PROTOCOL.md §6 memberships): those a subject
// (User, Device or both) sees, those holding a TransactionID, those of the subscription an
// OriginalTransactionID started, or a Source's (oldest first, with EndedAfter). One of the four.
type MembershipsRequest struct {
	User                  string
	Device                string
	TransactionID         string
	OriginalTransactionID string
	Source                Source
	EndedAfter            time.Time // only with Source
	At                    time.Time // only with a subject
	MinSeq                int64     // as for CheckRequest
	Limit                 int       // 1 to 1000; 0: the server's default, 100
	After                 string    // the Next of the page before, unchanged
}

func (MembershipsRequest) op() string { return "memberships" }
func (r MembershipsRequest) encode(w *wire) {
	w.str("user", r.User)
	w.str("device", r.Device)
	w.str("source", string(r.Source))
	w.time("at", r.At)
	w.str("transactionId", r.TransactionID)
	w.str("originalTransactionId", r.OriginalTransactionID)
	w.int("limit", int64(r.Limit))
	w.int("minSeq", r.MinSeq)
	w.str("after", r.After)
	w.time("endedAfter", r.EndedAfter)
}

// DefineRequest sets the products that unlock an entitlement (PROTOCOL.md §6 define).
type DefineRequest struct {
	Entitlement string
	Products    []string // at least one
	Reason      string
}

func (DefineRequest) op() string { return "define" }
func (r DefineRequest) encode(w *wire) {
	w.str("entitlement", r.Entitlement)
	w.str("reason", r.Reason)
	w.strs("products", r.Products)
}

// UndefineRequest removes an entitlement from the catalog (PROTOCOL.md §6 undefine).
type UndefineRequest struct {
	Entitlement string
	Reason      string
}

func (UndefineRequest) op() string { return "undefine" }
func (r UndefineRequest) encode(w *wire) {
	w.str("entitlement", r.Entitlement)
	w.str("reason", r.Reason)
}

// EventRequest applies a store's lifecycle event to a membership (PROTOCOL.md §6 event). EventID makes a
// retry safe: an event applied already answers Applied false with the reason duplicate.
type EventRequest struct {
	Membership string
	Type       EventType
	EventID    string
	EventTime  time.Time
	// ExpiresAt: renewal, extension (required), resume (optional).
	ExpiresAt time.Time
	// GracePeriodExpiresAt: billing_issue (optional).
	GracePeriodExpiresAt time.Time
	// Product: product_change (required).
	Product       string
	TransactionID string
	Reason        string
}

func (EventRequest) op() string { return "event" }
func (r EventRequest) encode(w *wire) {
	w.str("product", r.Product)
	w.time("expiresAt", r.ExpiresAt)
	w.str("membership", r.Membership)
	w.str("reason", r.Reason)
	w.str("type", string(r.Type))
	w.str("eventId", r.EventID)
	w.time("eventTime", r.EventTime)
	w.time("gracePeriodExpiresAt", r.GracePeriodExpiresAt)
	w.str("transactionId", r.TransactionID)
}

// CustomerRequest asks for the CustomerInfo view of a subject (PROTOCOL.md §6 customer).
type CustomerRequest struct {
	User   string
	Device string
	MinSeq int64 // as for CheckRequest
}

func (CustomerRequest) op() string { return "customer" }
func (r CustomerRequest) encode(w *wire) {
	w.str("user", r.User)
	w.str("device", r.Device)
	w.int("minSeq", r.MinSeq)
}

// HistoryRequest asks for the audit trail a page at a time (PROTOCOL.md §6 history): of a subject (User,
// Device or both), of an Entitlement, or with Erasures alone, of the erasures.
type HistoryRequest struct {
	User        string
	Device      string
	Entitlement string
	Erasures    bool
	Limit       int    // 1 to 1000; 0: the server's default, 100
	After       string // the Next of the page before, unchanged
}

func (HistoryRequest) op() string { return "history" }
func (r HistoryRequest) encode(w *wire) {
	w.str("user", r.User)
	w.str("device", r.Device)
	w.str("entitlement", r.Entitlement)
	w.int("limit", int64(r.Limit))
	w.flag("erasures", r.Erasures)
	w.str("after", r.After)
}

// EraseRequest erases a person: a user, a device or both (PROTOCOL.md §6 erase).
type EraseRequest struct {
	User   string
	Device string
	Reason string // kept in the audit trail: name a ticket, not the person
}

func (EraseRequest) op() string { return "erase" }
func (r EraseRequest) encode(w *wire) {
	w.str("user", r.User)
	w.str("device", r.Device)
	w.str("reason", r.Reason)
}

// bare is a request without fields: ping, hello, catalog, snapshot, stats, reload.
type bare string

func (b bare) op() string { return string(b) }
func (bare) encode(*wire) {}

// authRequest authenticates a connection; its token is never logged nor shown in an error.
type authRequest struct{ token string }

func (authRequest) op() string { return "auth" }
func (r authRequest) encode(w *wire) {
	w.key("token")
	w.b = appendJSONString(w.b, r.token)
}

// watchRequest adds (or with unwatch, removes) a watch target.
type watchRequest struct {
	name   string // watch or unwatch
	target WatchTarget
}

func (r watchRequest) op() string { return r.name }
func (r watchRequest) encode(w *wire) {
	w.str("user", r.target.User)
	w.str("device", r.target.Device)
	w.flag("all", r.target.All)
}
