package entitled

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// The raw API: requests sent as the caller wrote them, and answers returned as decoded JSON, error
// answers included. For tools, tests and operations this client does not know yet.

// Do sends a request as it is (the caller's "id" kept, and not checked) and returns the answer as decoded
// JSON (numbers as json.Number). req is a map[string]any, a json.RawMessage, or anything else that
// encodes to a JSON object; a json.RawMessage keeps its keys' order. An error answer is returned as an
// answer, not as an error; the error is for a request that got no answer.
func (c *Conn) Do(ctx context.Context, req any) (map[string]any, error) {
	call, err := c.Send(req)
	if err != nil {
		return nil, err
	}
	return call.Wait(ctx)
}

// Send sends a request as Do does, without waiting: the answer comes with the returned Call's Wait. Many
// requests may be sent before any answer is read (pipelining).
func (c *Conn) Send(req any) (*Call, error) {
	text, op, err := encodeRaw(req)
	if err != nil {
		return nil, err
	}
	calls, err := c.sendBytes(op, text, time.Time{})
	if err != nil {
		return nil, err
	}
	return &Call{c: c, cl: calls[0]}, nil
}

// SendLine writes text as it is, without adding "\n", for lines that are not valid requests; a line may
// be split over several calls. It returns a Call for each line that text ends (each "\n" it holds). Do
// not interleave it with other requests while a line is unfinished.
func (c *Conn) SendLine(text string) ([]*Call, error) {
	calls, err := c.sendBytes("", []byte(text), time.Time{})
	if err != nil {
		return nil, err
	}
	out := make([]*Call, len(calls))
	for i, cl := range calls {
		out[i] = &Call{c: c, cl: cl}
	}
	return out, nil
}

// Call is a request sent with Conn.Send or Conn.SendLine.
type Call struct {
	c  *Conn
	cl *call
}

// Done is closed when the answer came, the connection closed, or a Wait gave up.
func (k *Call) Done() <-chan struct{} { return k.cl.done }

// Wait returns the answer as decoded JSON, waiting until ctx ends.
func (k *Call) Wait(ctx context.Context) (map[string]any, error) {
	line, err := k.WaitLine(ctx)
	if err != nil {
		return nil, err
	}
	return decodeRaw(line)
}

// WaitLine returns the answer line as received.
func (k *Call) WaitLine(ctx context.Context) (json.RawMessage, error) {
	if err := k.c.wait(ctx, k.cl); err != nil {
		return nil, err
	}
	return k.cl.line, nil
}

// encodeRaw encodes a caller's request as one line, and reads its op.
func encodeRaw(req any) ([]byte, string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(req); err != nil { // Encode ends the line with "\n"
		return nil, "", fmt.Errorf("entitled: the request does not encode as JSON: %w", err)
	}
	var head struct {
		Op any `json:"op"`
	}
	if err := json.Unmarshal(buf.Bytes(), &head); err != nil {
		return nil, "", fmt.Errorf("entitled: a request must be a JSON object: %w", err)
	}
	op, _ := head.Op.(string)
	return buf.Bytes(), op, nil
}

func decodeRaw(line []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProtocol, err)
	}
	return m, nil
}

// NextPush returns the oldest pushed line not yet returned, waiting for one until ctx ends. Once the
// connection has closed and every queued line was returned, it returns the connection's error. A line
// that does not decode into a Push is returned with its Line and an ErrProtocol error.
func (c *Conn) NextPush(ctx context.Context) (Push, error) {
	p, err := c.peekPush(ctx)
	if p.Line != nil || p.Gap != nil {
		c.dropPush()
	}
	return p, err
}

// peekPush is NextPush without taking the push: a Watch takes it (dropPush) once the application has it,
// so that what waits in the queue is all it holds.
func (c *Conn) peekPush(ctx context.Context) (Push, error) {
	for {
		c.pushMu.Lock()
		if len(c.pushes) > 0 {
			q := c.pushes[0]
			c.pushMu.Unlock()
			if q.gap != nil {
				return Push{Gap: q.gap}, nil
			}
			return decodePush(q.line)
		}
		c.pushMu.Unlock()
		select {
		case <-c.pushSignal:
		case <-c.done:
			c.pushMu.Lock()
			empty := len(c.pushes) == 0
			c.pushMu.Unlock()
			if empty {
				return Push{}, c.Err()
			}
		case <-ctx.Done():
			return Push{}, ctx.Err()
		}
	}
}

// dropPush takes the oldest queued push, and wakes the reader if it waits for room.
func (c *Conn) dropPush() {
	c.pushMu.Lock()
	if len(c.pushes) > 0 {
		c.pushes[0] = queuedPush{}
		c.pushes = c.pushes[1:]
	}
	c.pushMu.Unlock()
	select {
	case c.pushSpace <- struct{}{}:
	default:
	}
}

// Pushes returns a channel of the pushed lines, closed once the connection has closed and every line was
// delivered. Use either Pushes or NextPush, not both.
func (c *Conn) Pushes() <-chan Push {
	c.pushOnce.Do(func() {
		c.pushChan = make(chan Push, 64)
		go func() {
			defer close(c.pushChan)
			for {
				p, err := c.NextPush(context.Background())
				if p.Line == nil && err != nil {
					return
				}
				c.pushChan <- p
			}
		}()
	})
	return c.pushChan
}

func decodePush(line []byte) (Push, error) {
	var p Push
	if err := json.Unmarshal(line, &p); err != nil {
		return Push{Line: line}, fmt.Errorf("%w: a pushed line that does not decode: %v", ErrProtocol, err)
	}
	p.Line = line
	return p, nil
}
