package entitled

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Code is a protocol error code (PROTOCOL.md §3, Error codes). A code this client does not know (from a
// newer server) is kept as the server sent it; errors.Is(err, ErrUnknownCode) is then true.
type Code string

// The error codes of protocol version 5, in the order of response.schema.json's errorCode.
const (
	CodeBadJSON        Code = "bad_json"
	CodeBadRequest     Code = "bad_request"
	CodeUnknownOp      Code = "unknown_op"
	CodeNotFound       Code = "not_found"
	CodeConflict       Code = "conflict"
	CodeTooLarge       Code = "too_large"
	CodeUnauthorized   Code = "unauthorized"
	CodeForbidden      Code = "forbidden"
	CodeBusy           Code = "busy"
	CodeTLSRequired    Code = "tls_required"
	CodeInternal       Code = "internal"
	CodeUnavailable    Code = "unavailable"
	CodeStale          Code = "stale"
	CodeOutcomeUnknown Code = "outcome_unknown"
	CodeOverLimit      Code = "over_limit"
	CodeLoading        Code = "loading"
	CodeTruncated      Code = "truncated"
)

// Codes lists every error code this client knows.
var Codes = []Code{
	CodeBadJSON, CodeBadRequest, CodeUnknownOp, CodeNotFound, CodeConflict, CodeTooLarge, CodeUnauthorized,
	CodeForbidden, CodeBusy, CodeTLSRequired, CodeInternal, CodeUnavailable, CodeStale, CodeOutcomeUnknown,
	CodeOverLimit, CodeLoading, CodeTruncated,
}

// Known reports whether c is one of Codes.
func (c Code) Known() bool {
	for _, known := range Codes {
		if c == known {
			return true
		}
	}
	return false
}

// codeSentinel is the type of the Err* values that stand for a protocol code: immutable, compared by code.
type codeSentinel struct{ code Code }

func (s codeSentinel) Error() string { return "entitled: " + string(s.code) }

// Sentinel errors, one per protocol error code, for errors.Is: errors.Is(err, entitled.ErrNotFound) is
// true for an *Error whose Code is not_found. ErrUnknownCode matches every code this client does not know.
var (
	ErrBadJSON        error = codeSentinel{CodeBadJSON}
	ErrBadRequest     error = codeSentinel{CodeBadRequest}
	ErrUnknownOp      error = codeSentinel{CodeUnknownOp}
	ErrNotFound       error = codeSentinel{CodeNotFound}
	ErrConflict       error = codeSentinel{CodeConflict}
	ErrTooLarge       error = codeSentinel{CodeTooLarge}
	ErrUnauthorized   error = codeSentinel{CodeUnauthorized}
	ErrForbidden      error = codeSentinel{CodeForbidden}
	ErrBusy           error = codeSentinel{CodeBusy}
	ErrTLSRequired    error = codeSentinel{CodeTLSRequired}
	ErrInternal       error = codeSentinel{CodeInternal}
	ErrUnavailable    error = codeSentinel{CodeUnavailable}
	ErrStale          error = codeSentinel{CodeStale}
	ErrOutcomeUnknown error = codeSentinel{CodeOutcomeUnknown}
	ErrOverLimit      error = codeSentinel{CodeOverLimit}
	ErrLoading        error = codeSentinel{CodeLoading}
	ErrTruncated      error = codeSentinel{CodeTruncated}
	ErrUnknownCode    error = codeSentinel{"unknown"}
)

// SentinelFor returns the sentinel error of a code (ErrUnknownCode for a code this client does not know).
func SentinelFor(c Code) error {
	if !c.Known() {
		return ErrUnknownCode
	}
	return codeSentinel{c}
}

// Error is an error answer of the server: {"ok":false,"error":{"code":...,"message":...}}.
//
// What it says about a write (PROTOCOL.md, "What an answer means"): outcome_unknown and internal mean the
// write may have been applied (MayHaveBeenApplied is true: retry it with the same idempotency key, or read
// to find out); every other code means it was certainly not applied, so a retry cannot make a duplicate.
// A code this client does not know is taken as "may have been applied", the safe assumption.
type Error struct {
	Code    Code   // the code as the server sent it
	Message string // a sentence for people; its wording is not part of the protocol
	Op      string // the operation of the request it answers ("" for a line the server sent on its own)
	// Loaded and Total are the memberships loaded so far and known to come, for code loading.
	Loaded, Total int64
	// Answer is the answer line as received.
	Answer json.RawMessage
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("entitled: ")
	if e.Op != "" {
		b.WriteString(e.Op)
		b.WriteString(": ")
	}
	b.WriteString(string(e.Code))
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	switch e.Code {
	case CodeLoading:
		fmt.Fprintf(&b, " (loaded %d of %d memberships)", e.Loaded, e.Total)
	case CodeTLSRequired:
		b.WriteString(" (set Options.TLSConfig to connect with TLS)")
	case CodeTruncated:
		b.WriteString(" (copy with Client.ExportIter, then Follow from its Seq)")
	case CodeOutcomeUnknown, CodeInternal:
		if isWriteOp(e.Op) {
			b.WriteString(mayApplyAdvice(e.Op))
		}
	}
	return b.String()
}

// Is makes errors.Is(err, ErrNotFound) (and every other code sentinel) work.
func (e *Error) Is(target error) bool {
	s, ok := target.(codeSentinel)
	if !ok {
		return false
	}
	if s == ErrUnknownCode {
		return !e.Code.Known()
	}
	return s.code == e.Code
}

// TruncatedError is a read of the change feed (Changes, Follower) answered truncated: the feed no longer
// holds every change after AfterSeq, because its retention let them go or a failover of a
// cluster's database lost them. Reading on would skip changes, so nothing is retried: take a full copy
// (Client.ExportIter) and follow the feed from the copy's Seq. It unwraps to the server's *Error, so
// errors.Is(err, ErrTruncated) holds too. A read, it was not applied (MayHaveBeenApplied is false).
type TruncatedError struct {
	AfterSeq int64  // the afterSeq that was asked for
	Err      *Error // the server's answer, Code truncated
}

func (e *TruncatedError) Error() string { return e.Err.Error() }
func (e *TruncatedError) Unwrap() error { return e.Err }

// truncatedOf returns a truncated answer to a read after afterSeq as a *TruncatedError, any other error
// as it is.
func truncatedOf(err error, afterSeq int64) error {
	var e *Error
	if errors.As(err, &e) && e.Code == CodeTruncated {
		return &TruncatedError{AfterSeq: afterSeq, Err: e}
	}
	return err
}

// Sentinel errors for failures on the client's side, for errors.Is.
var (
	// ErrCannotConnect: a connection could not be opened (refused, unreachable, TLS handshake, token refused).
	ErrCannotConnect = errors.New("entitled: cannot connect")
	// ErrNoNodeAvailable: no node of Options.Nodes accepted a connection (see *NoNodeError).
	ErrNoNodeAvailable = errors.New("entitled: no node available")
	// ErrConnClosed: the connection closed or failed before the answer came.
	ErrConnClosed = errors.New("entitled: connection closed")
	// ErrTimeout: the request's deadline passed before the answer came. Also matches context.DeadlineExceeded.
	ErrTimeout = errors.New("entitled: timed out")
	// ErrCanceled: the request's context was cancelled before the answer came. Also matches context.Canceled.
	ErrCanceled = errors.New("entitled: canceled")
	// ErrProtocol: the server sent a line the protocol does not allow; the connection was closed.
	ErrProtocol = errors.New("entitled: protocol error")
	// ErrClientClosed: the Client (or Conn, or Watch) was closed by its owner.
	ErrClientClosed = errors.New("entitled: client closed")
)

// RequestError is a request that failed on the client's side: its connection closed or failed, its
// deadline passed, it was cancelled, or the server broke the protocol. Kind is one of ErrConnClosed,
// ErrTimeout, ErrCanceled, ErrProtocol, ErrClientClosed (errors.Is matches it); Err is the cause.
type RequestError struct {
	Kind error
	Op   string // the request's operation
	Addr string // the connection's address
	// Sent: the request's bytes were handed to the connection (they may have reached the server).
	Sent bool
	Err  error
}

func (e *RequestError) Error() string {
	var b strings.Builder
	b.WriteString(e.Kind.Error())
	if e.Op != "" {
		b.WriteString(" (")
		b.WriteString(e.Op)
		if e.Addr != "" {
			b.WriteString(" to ")
			b.WriteString(e.Addr)
		}
		b.WriteString(")")
	}
	if e.Err != nil && e.Err != e.Kind {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	if e.mayHaveBeenApplied() {
		b.WriteString(mayApplyAdvice(e.Op))
	} else if isWriteOp(e.Op) {
		b.WriteString("; the " + e.Op + " was not sent, so it was not applied")
	}
	return b.String()
}

func (e *RequestError) Unwrap() error { return e.Err }

// Is matches the error's Kind, and context.DeadlineExceeded / context.Canceled for ErrTimeout / ErrCanceled.
func (e *RequestError) Is(target error) bool {
	if target == e.Kind {
		return true
	}
	return (e.Kind == ErrTimeout && target == context.DeadlineExceeded) ||
		(e.Kind == ErrCanceled && target == context.Canceled)
}

func (e *RequestError) mayHaveBeenApplied() bool {
	return e.Sent && isWriteOp(e.Op)
}

// DialError is a connection that could not be opened, naming the address and the reason.
type DialError struct {
	Addr string
	Err  error
}

func (e *DialError) Error() string {
	return "entitled: cannot connect to " + e.Addr + ": " + e.Err.Error()
}
func (e *DialError) Unwrap() error { return e.Err }

// Is matches ErrCannotConnect.
func (e *DialError) Is(target error) bool { return target == ErrCannotConnect }

// NoNodeError says that no node accepted a connection; Failures holds each node's failure.
type NoNodeError struct {
	Failures []NodeFailure
}

// NodeFailure is why one node was not used.
type NodeFailure struct {
	Addr string
	Err  error
}

func (e *NoNodeError) Error() string {
	parts := make([]string, len(e.Failures))
	for i, f := range e.Failures {
		parts[i] = f.Addr + ": " + f.Err.Error()
	}
	return "entitled: no node available (" + strings.Join(parts, "; ") + ")"
}

// Is matches ErrNoNodeAvailable.
func (e *NoNodeError) Is(target error) bool { return target == ErrNoNodeAvailable }

// MayHaveBeenApplied reports whether a failed write may have been carried out by the server
// (PROTOCOL.md, "What an answer means"):
//
//   - true for the error codes outcome_unknown and internal (and a code this client does not know), and
//     for a write whose connection closed or failed, or whose deadline passed or context was cancelled,
//     after its bytes were handed to the connection: retry it with the same idempotency key (grant's
//     IdempotencyKey, event's EventID), which answers the first attempt's result if it was applied, or
//     read to find out. claim, revoke and extend with ExpiresAt are safe to repeat as they are; extend
//     with Duration is not.
//   - false for every other error: the write was certainly not applied (every other code, and a failure
//     before its bytes were written), so a retry cannot make a duplicate. Also false for reads, which
//     change nothing, and for nil.
func MayHaveBeenApplied(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		return e.Code == CodeOutcomeUnknown || e.Code == CodeInternal || !e.Code.Known()
	}
	var r *RequestError
	if errors.As(err, &r) {
		return r.mayHaveBeenApplied()
	}
	return false
}

func mayApplyAdvice(op string) string {
	switch op {
	case "grant":
		return "; the grant may have been applied: retry it with the same idempotencyKey"
	case "event":
		return "; the event may have been applied: retry it with the same eventId"
	case "extend":
		return "; the extension may have been applied: read the membership's expiresAt, or retry with expiresAt"
	default:
		return "; the " + op + " may have been applied: retry it (a repeat changes nothing) or read to find out"
	}
}
