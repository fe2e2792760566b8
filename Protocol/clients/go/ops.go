package entitled

import "context"

// The typed operations of PROTOCOL.md §6. Each takes a context first: its deadline is the request's
// timeout (Options.RequestTimeout when it has none), and cancelling it fails the request at once.
// An error answer is returned as an *Error (errors.Is(err, ErrNotFound), ...); see MayHaveBeenApplied for
// what a failed write means.

// Ping checks that a server answers.
func (c *Client) Ping(ctx context.Context) error {
	return c.do(ctx, bare("ping"), nil)
}

// Hello says which protocol version, server and operations the server has, and which fields each takes.
func (c *Client) Hello(ctx context.Context) (HelloResult, error) {
	var out HelloResult
	err := c.do(ctx, bare("hello"), &out)
	return out, err
}

// Grant creates a membership. Give an IdempotencyKey to retry a grant whose outcome is unknown
// (MayHaveBeenApplied) without making a second membership.
func (c *Client) Grant(ctx context.Context, req GrantRequest) (GrantResult, error) {
	var out GrantResult
	err := c.do(ctx, req, &out)
	return out, err
}

// Check says whether the subject has access.
func (c *Client) Check(ctx context.Context, req CheckRequest) (CheckResult, error) {
	req.MinSeq = c.minSeq(req.MinSeq)
	w := getWire()
	req.encode(w) // on the value, not through the request interface: a check allocates nothing here
	cl, err := c.exchange(ctx, outgoing{op: "check", fields: w.b, wantCheck: true})
	putWire(w)
	if err != nil {
		return CheckResult{}, err
	}
	// Not through doEncoded: its out is an interface, which moved the result to the heap, the one
	// allocation a check made (16 B, measured with BenchmarkCheckPipelined -benchmem). The reader decoded
	// the usual answer already; any other (an error answer) is decoded here, on the heap.
	if cl.checked {
		out := cl.checkOut
		cl.release()
		return out, nil
	}
	out := new(CheckResult)
	err = decodeAnswer(cl.line, "check", out)
	cl.release()
	return *out, err
}

// Claim gives every guest membership of the device to the user (the SDKs' logIn). Safe to repeat.
func (c *Client) Claim(ctx context.Context, req ClaimRequest) (ClaimResult, error) {
	var out ClaimResult
	err := c.do(ctx, req, &out)
	return out, err
}

// Revoke takes a membership back. Safe to repeat: a repeat answers the membership as revoked.
func (c *Client) Revoke(ctx context.Context, req RevokeRequest) (RevokeResult, error) {
	var out RevokeResult
	err := c.do(ctx, req, &out)
	return out, err
}

// Extend moves a membership's expiry later (an admin operation). With Duration it is not safe to repeat:
// after an unknown outcome, read the membership first, or extend to an ExpiresAt.
func (c *Client) Extend(ctx context.Context, req ExtendRequest) (ExtendResult, error) {
	var out ExtendResult
	err := c.do(ctx, req, &out)
	return out, err
}

// Memberships returns one page of memberships; MembershipsIter follows the pages to the end.
func (c *Client) Memberships(ctx context.Context, req MembershipsRequest) (MembershipsPage, error) {
	req.MinSeq = c.minSeq(req.MinSeq)
	var out MembershipsPage
	err := c.do(ctx, req, &out)
	return out, err
}

// Define sets the products that unlock an entitlement.
func (c *Client) Define(ctx context.Context, req DefineRequest) (DefineResult, error) {
	var out DefineResult
	err := c.do(ctx, req, &out)
	return out, err
}

// Undefine removes an entitlement from the catalog (an admin operation); the result holds the products it
// had.
func (c *Client) Undefine(ctx context.Context, req UndefineRequest) (DefineResult, error) {
	var out DefineResult
	err := c.do(ctx, req, &out)
	return out, err
}

// Catalog returns every entitlement and its products.
func (c *Client) Catalog(ctx context.Context) (map[string][]string, error) {
	var out struct {
		Entitlements map[string][]string `json:"entitlements"`
	}
	err := c.do(ctx, bare("catalog"), &out)
	return out.Entitlements, err
}

// Snapshot has the server write a snapshot now (an admin operation).
func (c *Client) Snapshot(ctx context.Context) (SnapshotResult, error) {
	var out SnapshotResult
	err := c.do(ctx, bare("snapshot"), &out)
	return out, err
}

// Event applies a store's lifecycle event to a membership. Safe to retry with the same EventID.
func (c *Client) Event(ctx context.Context, req EventRequest) (EventResult, error) {
	var out EventResult
	err := c.do(ctx, req, &out)
	return out, err
}

// Customer returns the CustomerInfo view of a subject.
func (c *Client) Customer(ctx context.Context, req CustomerRequest) (Customer, error) {
	req.MinSeq = c.minSeq(req.MinSeq)
	var out struct {
		Customer Customer `json:"customer"`
	}
	err := c.do(ctx, req, &out)
	return out.Customer, err
}

// History returns one page of the audit trail; HistoryIter follows the pages to the end.
func (c *Client) History(ctx context.Context, req HistoryRequest) (HistoryPage, error) {
	var out HistoryPage
	err := c.do(ctx, req, &out)
	return out, err
}

// Stats returns the server's counters (an admin operation).
func (c *Client) Stats(ctx context.Context) (Stats, error) {
	var out Stats
	err := c.do(ctx, bare("stats"), &out)
	return out, err
}

// Reload has the server re-read its auth file (an admin operation).
func (c *Client) Reload(ctx context.Context) (ReloadResult, error) {
	var out ReloadResult
	err := c.do(ctx, bare("reload"), &out)
	return out, err
}

// Erase erases a person (an admin operation; the GDPR's right to be forgotten).
func (c *Client) Erase(ctx context.Context, req EraseRequest) (EraseResult, error) {
	var out EraseResult
	err := c.do(ctx, req, &out)
	return out, err
}
