package entitled

import (
	"encoding/json"
	"time"
)

// Answers are decoded with encoding/json; fields this client does not know are ignored (PROTOCOL.md §7).
// A time that may be null or absent is a *time.Time (nil: null or absent).

// Membership is one purchase or grant of one product (PROTOCOL.md §4, The membership object).
type Membership struct {
	ID        string     `json:"id"`
	ProductID string     `json:"productId"`
	PlanID    string     `json:"planId,omitempty"`
	User      string     `json:"user,omitempty"`
	Device    string     `json:"device,omitempty"`
	Status    Status     `json:"status"`
	IsActive  bool       `json:"isActive"`
	CreatedAt time.Time  `json:"createdAt"`
	ExpiresAt *time.Time `json:"expiresAt"` // nil: lifetime
	Source    Source     `json:"source"`
	RevokedAt *time.Time `json:"revokedAt,omitempty"`
	// Reason is the revocation's reason (set with RevokedAt).
	Reason                 string        `json:"reason,omitempty"`
	WillRenew              bool          `json:"willRenew"`
	PeriodType             PeriodType    `json:"periodType"`
	RenewState             RenewState    `json:"renewState"`
	RenewsCount            int           `json:"renewsCount"`
	Environment            Environment   `json:"environment"`
	Ownership              Ownership     `json:"ownership"`
	GrantType              GrantType     `json:"grantType"`
	UnsubscribeDetectedAt  *time.Time    `json:"unsubscribeDetectedAt,omitempty"`
	BillingIssueDetectedAt *time.Time    `json:"billingIssueDetectedAt,omitempty"`
	GracePeriodExpiresAt   *time.Time    `json:"gracePeriodExpiresAt,omitempty"`
	PausedAt               *time.Time    `json:"pausedAt,omitempty"`
	Transactions           []Transaction `json:"transactions,omitempty"`
}

// Transaction is a store transaction of a membership.
type Transaction struct {
	ID                    string     `json:"id"`
	OriginalTransactionID string     `json:"originalTransactionId"`
	Type                  string     `json:"type"` // purchase, trial_started, renewal, product_change
	Time                  time.Time  `json:"time"`
	ExpiresAt             *time.Time `json:"expiresAt"`
	RevokedAt             *time.Time `json:"revokedAt"`
}

// CheckResult is the answer to a check.
type CheckResult struct {
	Active bool `json:"active"`
	// ExpiresAt is when access stops by itself, when Active: nil means never (lifetime). Nil when not Active.
	ExpiresAt *time.Time `json:"expiresAt"`
}

// GrantResult is the answer to a grant.
type GrantResult struct {
	Seq        int64      `json:"seq"`
	Membership Membership `json:"membership"`
	// IdempotentReplay: nothing was created; Membership is the earlier grant's, as it is now.
	IdempotentReplay bool `json:"idempotentReplay"`
	// TransferredFrom names the former owner when the grant moved a purchase to its user.
	TransferredFrom *Subject `json:"transferredFrom"`
}

// ClaimResult is the answer to a claim.
type ClaimResult struct {
	Seq     int64 `json:"seq"`
	Claimed int   `json:"claimed"` // how many memberships moved
}

// RevokeResult is the answer to a revoke.
type RevokeResult struct {
	Seq        int64      `json:"seq"`
	Membership Membership `json:"membership"`
}

// ExtendResult is the answer to an extend.
type ExtendResult struct {
	Seq               int64      `json:"seq"`
	Membership        Membership `json:"membership"`
	PreviousExpiresAt time.Time  `json:"previousExpiresAt"`
}

// MembershipsPage is one page of memberships. Next is "" on the last page; otherwise pass it as After.
type MembershipsPage struct {
	Memberships []Membership `json:"memberships"`
	Next        string       `json:"next"`
}

// DefineResult is the answer to a define or an undefine: the entitlement and its products (for undefine,
// those it had), sorted.
type DefineResult struct {
	Seq         int64    `json:"seq"`
	Entitlement string   `json:"entitlement"`
	Products    []string `json:"products"`
}

// SnapshotResult is the answer to a snapshot.
type SnapshotResult struct {
	File        string `json:"file"`
	Sequence    int64  `json:"sequence"`
	Bytes       int64  `json:"bytes"`
	DurationMs  int64  `json:"durationMs"`
	Memberships int64  `json:"memberships"`
}

// EventResult is the answer to an event. An ignored event is not an error: Applied is false and Reason
// says why (duplicate, out_of_order, revoked).
type EventResult struct {
	Seq        int64      `json:"seq"`
	Membership Membership `json:"membership"`
	Applied    bool       `json:"applied"`
	Reason     string     `json:"reason"`
}

// Customer is the CustomerInfo view of a subject (PROTOCOL.md §6 customer).
type Customer struct {
	Entitlements           map[string]EntitlementInfo `json:"entitlements"`
	ActiveProducts         []string                   `json:"activeProducts"`
	AllPurchasedProductIDs []string                   `json:"allPurchasedProductIds"`
	LatestExpirationDate   *time.Time                 `json:"latestExpirationDate"`
	FirstSeen              *time.Time                 `json:"firstSeen"`
	RequestDate            time.Time                  `json:"requestDate"`
}

// EntitlementInfo describes one entitlement of a Customer by its representative membership.
type EntitlementInfo struct {
	IsActive               bool       `json:"isActive"`
	ProductID              string     `json:"productId"`
	Membership             string     `json:"membership"`
	ExpiresAt              *time.Time `json:"expiresAt"`
	WillRenew              bool       `json:"willRenew"`
	PeriodType             PeriodType `json:"periodType"`
	Store                  Source     `json:"store"`
	LatestPurchaseDate     time.Time  `json:"latestPurchaseDate"`
	OriginalPurchaseDate   time.Time  `json:"originalPurchaseDate"`
	BillingIssueDetectedAt *time.Time `json:"billingIssueDetectedAt"`
	UnsubscribeDetectedAt  *time.Time `json:"unsubscribeDetectedAt"`
}

// HistoryPage is one page of the audit trail. Next is "" on the last page; otherwise pass it as After.
type HistoryPage struct {
	Entries []HistoryEntry `json:"history"`
	Next    string         `json:"next"`
}

// HistoryEntry is one entry of the audit trail (PROTOCOL.md §5, Audit trail).
type HistoryEntry struct {
	Time              time.Time   `json:"time"`
	Actor             string      `json:"actor"`
	Action            string      `json:"action"`
	Reason            string      `json:"reason"`
	Sequence          int64       `json:"sequence"` // 0 for a plain grant
	EventID           string      `json:"eventId"`
	EventTime         *time.Time  `json:"eventTime"`
	PreviousExpiresAt *time.Time  `json:"previousExpiresAt"`
	Membership        *Membership `json:"membership"`
	Entitlement       string      `json:"entitlement"`
	Products          []string    `json:"products"`
	Erased            *Erased     `json:"erased"`
}

// Erased counts what an erase removed.
type Erased struct {
	Memberships    int `json:"memberships"`
	HistoryEntries int `json:"historyEntries"`
}

// EraseResult is the answer to an erase.
type EraseResult struct {
	Seq    int64  `json:"seq"`
	Erased Erased `json:"erased"`
}

// HelloResult says which protocol version, server and operations the server has.
type HelloResult struct {
	Protocol     int                 `json:"protocol"`
	Server       string              `json:"server"`
	Operations   []string            `json:"operations"`
	Fields       map[string][]string `json:"fields"`
	AuthRequired bool                `json:"authRequired"`
}

// AuthResult is the answer to an auth: the token's name and role.
type AuthResult struct {
	Name         string `json:"name"`
	Role         string `json:"role"`
	AuthRequired bool   `json:"authRequired"`
}

// ReloadResult is the answer to a reload: the number of tokens in force now.
type ReloadResult struct {
	Tokens int `json:"tokens"`
}

// Stats is the server's counters (PROTOCOL.md §6 stats), as decoded JSON (numbers are float64).
type Stats map[string]any

// Push is a line a watch received (PROTOCOL.md §5, Watching and pushed lines), or a gap marker.
type Push struct {
	Cause      string     `json:"cause"`    // grant, claim, revoke, renewal, ..., expired, erase
	Sequence   int64      `json:"sequence"` // the change's number; 0 for expired
	Membership Membership `json:"membership"`
	// Gap is set (and the other fields are empty) on a marker a Watch delivers after its connection
	// dropped and it watched again: lines may have been missed meanwhile. Re-read the state (Check,
	// Customer, Memberships).
	Gap *Gap `json:"-"`
	// Line is the pushed line as received (nil for a gap marker).
	Line json.RawMessage `json:"-"`
}

// Gap is the time during which a Watch was not watching: pushes of changes made between From and To may
// be missing.
type Gap struct {
	From, To time.Time
	Err      error // why the connection dropped
}

// seq is the change number of a write's answer, which the Client keeps as LastSeq.
func (r *GrantResult) seq() int64  { return r.Seq }
func (r *ClaimResult) seq() int64  { return r.Seq }
func (r *RevokeResult) seq() int64 { return r.Seq }
func (r *ExtendResult) seq() int64 { return r.Seq }
func (r *DefineResult) seq() int64 { return r.Seq }
func (r *EventResult) seq() int64  { return r.Seq }
func (r *EraseResult) seq() int64  { return r.Seq }
