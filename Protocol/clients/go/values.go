package entitled

import (
	"strconv"
	"time"
)

// Source is where a membership came from (PROTOCOL.md §4, Sources).
type Source string

// The sources of protocol version 5.
const (
	SourceAppStore    Source = "app_store"
	SourcePlayStore   Source = "play_store"
	SourceStripe      Source = "stripe"
	SourceWhop        Source = "whop"
	SourceManual      Source = "manual"
	SourcePromotional Source = "promotional"
)

// PeriodType is the kind of a membership's period.
type PeriodType string

// The period types of protocol version 5.
const (
	PeriodNormal      PeriodType = "normal"
	PeriodTrial       PeriodType = "trial"
	PeriodIntro       PeriodType = "intro"
	PeriodPromotional PeriodType = "promotional"
)

// Environment says whether a purchase was real or made in a store's test environment.
type Environment string

// The environments of protocol version 5.
const (
	EnvironmentProduction Environment = "production"
	EnvironmentSandbox    Environment = "sandbox"
)

// Ownership says whether the user bought a membership or a family member shared it.
type Ownership string

// The ownerships of protocol version 5.
const (
	OwnershipPurchased    Ownership = "purchased"
	OwnershipFamilyShared Ownership = "family_shared"
)

// GrantType says how access was granted.
type GrantType string

// The grant types of protocol version 5.
const (
	GrantPurchase      GrantType = "purchase"
	GrantFamilySharing GrantType = "family_sharing"
	GrantOfferCode     GrantType = "offer_code"
	GrantManual        GrantType = "manual"
)

// RenewState is derived by the server from a membership's lifecycle fields.
type RenewState string

// The renew states of protocol version 5.
const (
	RenewWillRenew    RenewState = "will_renew"
	RenewNonRenewable RenewState = "non_renewable"
	RenewBillingIssue RenewState = "billing_issue"
	RenewCanceled     RenewState = "canceled"
)

// Status is a membership's status at a moment (PROTOCOL.md §4, Statuses). Later versions may add
// statuses: judge one this client does not know by Membership.IsActive.
type Status string

// The statuses of protocol version 5.
const (
	StatusActive   Status = "active"
	StatusTrialing Status = "trialing"
	StatusPastDue  Status = "past_due"
	StatusCanceled Status = "canceled"
	StatusPaused   Status = "paused"
	StatusExpired  Status = "expired"
	StatusRevoked  Status = "revoked"
)

// EventType is the type of a store's lifecycle event (PROTOCOL.md §5, Lifecycle events).
type EventType string

// The event types of protocol version 5.
const (
	EventRenewal          EventType = "renewal"
	EventCancellation     EventType = "cancellation"
	EventUncancellation   EventType = "uncancellation"
	EventBillingIssue     EventType = "billing_issue"
	EventBillingRecovered EventType = "billing_recovered"
	EventExpiration       EventType = "expiration"
	EventPause            EventType = "pause"
	EventResume           EventType = "resume"
	EventProductChange    EventType = "product_change"
	EventRefund           EventType = "refund"
	EventRefundReversal   EventType = "refund_reversal"
	EventExtension        EventType = "extension"
)

// Duration is a protocol duration (PROTOCOL.md §4, Durations): a positive whole number and a unit,
// such as "30d" or "1mo". Months and years follow the calendar, which time.Duration cannot express; build
// one with Seconds, Minutes, Hours, Days, Weeks, Months, Years or DurationOf.
type Duration string

// Seconds returns the duration of n seconds ("90s").
func Seconds(n int) Duration { return unit(n, "s") }

// Minutes returns the duration of n minutes ("15min").
func Minutes(n int) Duration { return unit(n, "min") }

// Hours returns the duration of n hours ("12h").
func Hours(n int) Duration { return unit(n, "h") }

// Days returns the duration of n days of 24 hours ("30d").
func Days(n int) Duration { return unit(n, "d") }

// Weeks returns the duration of n weeks ("2w").
func Weeks(n int) Duration { return unit(n, "w") }

// Months returns the duration of n calendar months ("1mo").
func Months(n int) Duration { return unit(n, "mo") }

// Years returns the duration of n calendar years ("1y").
func Years(n int) Duration { return unit(n, "y") }

// DurationOf returns d as whole seconds ("2592000s"); a fraction of a second is dropped.
func DurationOf(d time.Duration) Duration { return unit(int(d/time.Second), "s") }

func unit(n int, u string) Duration { return Duration(strconv.Itoa(n) + u) }

// Subject names a user, a device or both (PROTOCOL.md §5, Subjects and visibility).
type Subject struct {
	User   string `json:"user,omitempty"`
	Device string `json:"device,omitempty"`
}

// WatchTarget is what a watch covers: a user, a device, both, or with All every membership
// (PROTOCOL.md §5, Watching and pushed lines).
type WatchTarget struct {
	User   string
	Device string
	All    bool
}
