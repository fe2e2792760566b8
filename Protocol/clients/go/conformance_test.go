package entitled_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	entitled "github.com/entitled-dev/entitled/Protocol/clients/go"
)

// The conformance scenarios of Protocol/conformance (README.md there: format and matching rules), run
// through this client's public API: one Conn of Client.Dial per scenario connection, its raw Send and
// SendLine (pipelined: a send does not wait), its push stream and its closed signal.

var scenarioDir = filepath.Join(repoRoot, "Protocol", "conformance")

func TestConformance(t *testing.T) {
	srv := shared(t)
	runScenarios(t, srv, filepath.Join(scenarioDir, "*.ndjson"))
}

func TestConformanceRestricted(t *testing.T) {
	srv := newServer(t, "--auth", filepath.Join(scenarioDir, "restricted", "auth.json"), "--max-connections", "4")
	runScenarios(t, srv, filepath.Join(scenarioDir, "restricted", "*.ndjson"))
}

func runScenarios(t *testing.T, srv *server, pattern string) {
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios in %s (%v)", pattern, err)
	}
	sort.Strings(files)
	runTag := randomHex(3)
	client := srv.client(t, &entitled.Options{LoadingWait: -1, RequestTimeout: -1})
	for _, file := range files {
		file := file
		t.Run(strings.TrimSuffix(filepath.Base(file), ".ndjson"), func(t *testing.T) {
			r := &scenario{client: client, tag: strings.TrimSuffix(filepath.Base(file), ".ndjson") + "-" + runTag,
				conns: map[string]*scenarioConn{}, captures: map[string]any{}}
			defer r.close()
			if err := r.run(file); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

type scenario struct {
	client   *entitled.Client
	tag      string
	conns    map[string]*scenarioConn
	captures map[string]any
}

type scenarioConn struct {
	name     string
	conn     *entitled.Conn
	calls    []*entitled.Call // requests whose answers no expect has taken yet, oldest first
	pushes   []map[string]any // pushed lines no expectPush has taken yet
	stream   <-chan entitled.Push
	lastLine bool // the line the server closed the connection with was taken by an expect
}

func (r *scenario) close() {
	for _, c := range r.conns {
		c.conn.Close()
	}
}

func (r *scenario) conn(name string) (*scenarioConn, error) {
	if c, ok := r.conns[name]; ok {
		return c, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := r.client.Dial(ctx)
	if err != nil {
		return nil, err
	}
	c := &scenarioConn{name: name, conn: conn, stream: conn.Pushes()}
	r.conns[name] = c
	return c, nil
}

var directives = []string{"send", "sendRaw", "expect", "expectPush", "expectNoPush", "expectClosed", "sleep", "comment"}

func (r *scenario) run(file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	scanner := bufio.NewScanner(bytes.NewReader(data))
	scanner.Buffer(make([]byte, 1<<20), 1<<24)
	for number := 1; scanner.Scan(); number++ {
		text := strings.TrimSpace(scanner.Text())
		if text == "" {
			continue
		}
		value, err := parseOrdered([]byte(text))
		if err != nil {
			return fmt.Errorf("line %d: not JSON: %v", number, err)
		}
		step, ok := value.(*object)
		if !ok {
			return fmt.Errorf("line %d: a step must be an object", number)
		}
		kind := ""
		for _, d := range directives {
			if _, ok := step.get(d); ok {
				kind = d
			}
		}
		if kind == "" {
			return fmt.Errorf("line %d: no directive", number)
		}
		if err := r.step(kind, step); err != nil {
			return fmt.Errorf("line %d (%s): %v", number, kind, err)
		}
	}
	return r.finish()
}

func (r *scenario) step(kind string, step *object) error {
	if kind == "comment" {
		return nil
	}
	if kind == "sleep" {
		time.Sleep(seconds(step.must("sleep")))
		return nil
	}
	name := "main"
	if v, ok := step.get("connection"); ok {
		name = v.(string)
	}
	timeout := 5 * time.Second
	if v, ok := step.get("timeout"); ok {
		timeout = seconds(v)
	}
	c, err := r.conn(name)
	if err != nil {
		return fmt.Errorf("[%s] cannot connect: %v", name, err)
	}
	switch kind {
	case "send":
		request, err := substitute(step.must("send"), r.captures, r.tag)
		if err != nil {
			return err
		}
		text, err := json.Marshal(request)
		if err != nil {
			return err
		}
		return c.send(func() ([]*entitled.Call, error) {
			call, err := c.conn.Send(json.RawMessage(text))
			return []*entitled.Call{call}, err
		})
	case "sendRaw":
		raw, err := substitute(step.must("sendRaw"), r.captures, r.tag)
		if err != nil {
			return err
		}
		repeat := 1
		if v, ok := step.get("repeat"); ok {
			n, _ := v.(json.Number).Int64()
			repeat = int(n)
		}
		text := strings.Repeat(raw.(string), repeat)
		if v, ok := step.get("newline"); !ok || v != false {
			text += "\n"
		}
		return c.send(func() ([]*entitled.Call, error) { return c.conn.SendLine(text) })
	case "expect":
		answer, err := c.nextAnswer(timeout)
		if err != nil {
			return err
		}
		r.captures, err = match(tagOnly(step.must("expect"), r.tag), answer, r.captures, "$")
		return err
	case "expectPush":
		return c.takePush(tagOnly(step.must("expectPush"), r.tag), r, timeout)
	case "expectNoPush":
		c.readPushes(time.Now().Add(seconds(step.must("expectNoPush"))))
		if len(c.pushes) > 0 {
			return fmt.Errorf("[%s] expected no pushed line, got %s", c.name, describe(c.pushes[0]))
		}
		return nil
	case "expectClosed":
		return c.expectClosed(timeout)
	}
	return fmt.Errorf("unknown directive %s", kind)
}

// send queues a request; a connection the server has closed already takes nothing more, as a socket's
// peer that closed reads nothing more: the line gets no answer.
func (c *scenarioConn) send(f func() ([]*entitled.Call, error)) error {
	calls, err := f()
	if err != nil {
		if errors.Is(err, entitled.ErrConnClosed) {
			return nil
		}
		return fmt.Errorf("[%s] %v", c.name, err)
	}
	c.calls = append(c.calls, calls...)
	return nil
}

// nextAnswer is the next response: the oldest request's answer, or the line the server closed the
// connection with when no request waits (busy).
func (c *scenarioConn) nextAnswer(timeout time.Duration) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if len(c.calls) == 0 {
		select {
		case <-c.conn.Done():
		case <-ctx.Done():
			return nil, fmt.Errorf("[%s] expected a response, but none was sent within %v", c.name, timeout)
		}
		if line := closingLine(c.conn); line != nil && !c.lastLine {
			c.lastLine = true
			return decode(line)
		}
		return nil, fmt.Errorf("[%s] expected a response, but the server closed the connection", c.name)
	}
	call := c.calls[0]
	c.calls = c.calls[1:]
	line, err := call.WaitLine(ctx)
	switch {
	case errors.Is(err, entitled.ErrTimeout):
		return nil, fmt.Errorf("[%s] expected a response, but none came within %v", c.name, timeout)
	case err != nil:
		return nil, fmt.Errorf("[%s] expected a response, but the server closed the connection: %v", c.name, err)
	}
	return decode(line)
}

// closingLine is the line a connection was closed with, which answered no request (busy), if any.
func closingLine(conn *entitled.Conn) json.RawMessage {
	var e *entitled.Error
	if errors.As(conn.Err(), &e) && e.Answer != nil {
		return e.Answer
	}
	return nil
}

func decode(line []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, fmt.Errorf("a line that is not a JSON object: %.300s", line)
	}
	return m, nil
}

// readPushes takes the pushed lines that arrive until the deadline.
func (c *scenarioConn) readPushes(deadline time.Time) bool {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case p, ok := <-c.stream:
		if !ok {
			return false
		}
		m, err := decode(p.Line)
		if err == nil {
			c.pushes = append(c.pushes, m)
		}
		return true
	case <-timer.C:
		return false
	}
}

func (c *scenarioConn) takePush(expected any, r *scenario, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		for i, p := range c.pushes {
			if captures, err := match(expected, p, r.captures, "$"); err == nil {
				r.captures = captures
				c.pushes = append(c.pushes[:i], c.pushes[i+1:]...)
				return nil
			}
		}
		if time.Now().After(deadline) || !c.readPushes(deadline) {
			break
		}
	}
	if len(c.pushes) > 0 {
		_, why := match(expected, c.pushes[0], r.captures, "$")
		return fmt.Errorf("[%s] no pushed line matched within %v; %d unmatched, the first differs: %v", c.name, timeout, len(c.pushes), why)
	}
	return fmt.Errorf("[%s] expected a pushed line within %v, got none", c.name, timeout)
}

func (c *scenarioConn) expectClosed(timeout time.Duration) error {
	select {
	case <-c.conn.Done():
	case <-time.After(timeout):
		if line := c.answered(); line != nil {
			return fmt.Errorf("[%s] expected the connection to close, got %s", c.name, line)
		}
		return fmt.Errorf("[%s] expected the server to close the connection within %v", c.name, timeout)
	}
	if line := c.answered(); line != nil {
		return fmt.Errorf("[%s] expected the connection to close, got %s", c.name, line)
	}
	return nil
}

// answered returns an answer that came for a request no expect took (or an untaken closing line).
func (c *scenarioConn) answered() []byte {
	for _, call := range c.calls {
		select {
		case <-call.Done():
			if line, err := call.WaitLine(context.Background()); err == nil {
				return line
			}
		default:
		}
	}
	if line := closingLine(c.conn); line != nil && !c.lastLine {
		return line
	}
	return nil
}

// finish fails on a response that no expect took (waiting briefly for those still on their way).
func (r *scenario) finish() error {
	for _, c := range r.conns {
		if len(c.calls) > 0 {
			select {
			case <-c.calls[len(c.calls)-1].Done():
			case <-c.conn.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
		if line := c.answered(); line != nil {
			return fmt.Errorf("end [%s]: a response the scenario did not expect: %s", c.name, line)
		}
	}
	return nil
}

func seconds(v any) time.Duration {
	f, _ := v.(json.Number).Float64()
	return time.Duration(f * float64(time.Second))
}

// MARK: ordered JSON

// object is a JSON object that keeps its keys' order: a request is sent with its keys as the scenario
// wrote them, since the server reports the first problem in line order.
type object struct {
	keys []string
	vals []any
}

func (o *object) get(key string) (any, bool) {
	for i, k := range o.keys {
		if k == key {
			return o.vals[i], true
		}
	}
	return nil, false
}

func (o *object) must(key string) any {
	v, _ := o.get(key)
	return v
}

func (o *object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := marshalNoEscape(k)
		b.Write(key)
		b.WriteByte(':')
		val, err := marshalNoEscape(o.vals[i])
		if err != nil {
			return nil, err
		}
		b.Write(val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func parseOrdered(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	v, err := parseValue(d)
	if err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("text after the value")
	}
	return v, nil
}

func parseValue(d *json.Decoder) (any, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := &object{}
		for d.More() {
			k, err := d.Token()
			if err != nil {
				return nil, err
			}
			v, err := parseValue(d)
			if err != nil {
				return nil, err
			}
			o.keys = append(o.keys, k.(string))
			o.vals = append(o.vals, v)
		}
		_, err := d.Token()
		return o, err
	case json.Delim('['):
		a := []any{}
		for d.More() {
			v, err := parseValue(d)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := d.Token()
		return a, err
	}
	return tok, nil
}

// MARK: matching (Protocol/conformance/README.md, Matching)

var (
	responseTime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$`)
	membershipID = regexp.MustCompile(`^mem_[0-9abcdefghjkmnpqrstvwxyz]{13}$`)
	capturePat   = regexp.MustCompile(`^\$(id|time|value):([A-Za-z0-9_.-]+)$`)
)

func isResponseTime(v any) bool {
	s, ok := v.(string)
	return ok && responseTime.MatchString(s) && !strings.HasSuffix(s, ".000Z")
}

// substitute puts the tag into ${S} and captured values into "$id:X"-style strings of a request.
func substitute(v any, captures map[string]any, tag string) (any, error) {
	switch v := v.(type) {
	case string:
		if m := capturePat.FindStringSubmatch(v); m != nil {
			value, ok := captures[m[1]+":"+m[2]]
			if !ok {
				return nil, fmt.Errorf("the request uses %s before any response captured it", v)
			}
			return value, nil
		}
		return strings.ReplaceAll(v, "${S}", tag), nil
	case *object:
		out := &object{}
		for i, k := range v.keys {
			val, err := substitute(v.vals[i], captures, tag)
			if err != nil {
				return nil, err
			}
			out.keys = append(out.keys, strings.ReplaceAll(k, "${S}", tag))
			out.vals = append(out.vals, val)
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			val, err := substitute(e, captures, tag)
			if err != nil {
				return nil, err
			}
			out[i] = val
		}
		return out, nil
	}
	return v, nil
}

// tagOnly puts the tag into ${S} of an expected value; placeholders stay for match.
func tagOnly(v any, tag string) any {
	switch v := v.(type) {
	case string:
		return strings.ReplaceAll(v, "${S}", tag)
	case *object:
		out := &object{}
		for i, k := range v.keys {
			out.keys = append(out.keys, strings.ReplaceAll(k, "${S}", tag))
			out.vals = append(out.vals, tagOnly(v.vals[i], tag))
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = tagOnly(e, tag)
		}
		return out
	}
	return v
}

func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		if strings.ContainsAny(string(v), ".eE") {
			return "number"
		}
		return "integer"
	case string:
		return "string"
	case []any:
		return "array"
	}
	return "object"
}

func describe(v any) string {
	b, _ := marshalNoEscape(v)
	if len(b) > 400 {
		return string(b[:400]) + "…"
	}
	return string(b)
}

// match returns the captures extended by matching actual against expected, or the first difference.
func match(expected, actual any, captures map[string]any, path string) (map[string]any, error) {
	if s, ok := expected.(string); ok && strings.HasPrefix(s, "$") {
		if !strings.HasPrefix(s, "$$") {
			return matchPlaceholder(s, actual, captures, path)
		}
		expected = s[1:]
	}
	switch e := expected.(type) {
	case *object:
		a, ok := actual.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: expected an object, got %s", path, describe(actual))
		}
		result := captures
		var alternatives []any
		exact := false
		named := map[string]bool{}
		for i, key := range e.keys {
			value := e.vals[i]
			switch key {
			case "$exact":
				exact = value == true
				continue
			case "$anyOf":
				alternatives = value.([]any)
				continue
			}
			if value == "$absent" {
				if v, present := a[key]; present {
					return nil, fmt.Errorf("%s.%s: expected no such key, got %s", path, key, describe(v))
				}
				continue
			}
			named[key] = true
			v, present := a[key]
			if !present {
				return nil, fmt.Errorf("%s.%s: missing (object was %s)", path, key, describe(actual))
			}
			var err error
			if result, err = match(value, v, result, path+"."+key); err != nil {
				return nil, err
			}
		}
		if alternatives != nil {
			var problems []string
			matched := false
			for _, alternative := range alternatives {
				r, err := match(alternative, actual, result, path)
				if err == nil {
					result, matched = r, true
					break
				}
				problems = append(problems, err.Error())
			}
			if !matched {
				return nil, fmt.Errorf("%s: matches none of the $anyOf patterns: %s", path, strings.Join(problems, " | "))
			}
			for _, alternative := range alternatives {
				o := alternative.(*object)
				for i, k := range o.keys {
					if k != "$exact" && o.vals[i] != "$absent" {
						named[k] = true
					}
				}
			}
		}
		if exact {
			var extra []string
			for k := range a {
				if !named[k] {
					extra = append(extra, k)
				}
			}
			if len(extra) > 0 {
				sort.Strings(extra)
				return nil, fmt.Errorf("%s: unexpected keys %v (object was %s)", path, extra, describe(actual))
			}
		}
		return result, nil
	case []any:
		a, ok := actual.([]any)
		if !ok {
			return nil, fmt.Errorf("%s: expected an array, got %s", path, describe(actual))
		}
		if len(e) != len(a) {
			return nil, fmt.Errorf("%s: expected %d elements, got %d: %s", path, len(e), len(a), describe(actual))
		}
		result := captures
		for i := range e {
			var err error
			if result, err = match(e[i], a[i], result, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return nil, err
			}
		}
		return result, nil
	}
	et, at := jsonType(expected), jsonType(actual)
	numbers := (et == "integer" || et == "number") && (at == "integer" || at == "number")
	if et != at && !numbers {
		return nil, fmt.Errorf("%s: expected %s, got %s", path, describe(expected), describe(actual))
	}
	if numbers {
		x, _ := new(big.Float).SetString(string(expected.(json.Number)))
		y, _ := new(big.Float).SetString(string(actual.(json.Number)))
		if x == nil || y == nil || x.Cmp(y) != 0 {
			return nil, fmt.Errorf("%s: expected %s, got %s", path, describe(expected), describe(actual))
		}
		return captures, nil
	}
	if expected != actual {
		return nil, fmt.Errorf("%s: expected %s, got %s", path, describe(expected), describe(actual))
	}
	return captures, nil
}

func matchPlaceholder(expected string, actual any, captures map[string]any, path string) (map[string]any, error) {
	simple := map[string]func(any) bool{
		"$any":     func(any) bool { return true },
		"$string":  func(v any) bool { return jsonType(v) == "string" },
		"$integer": func(v any) bool { return jsonType(v) == "integer" },
		"$number":  func(v any) bool { t := jsonType(v); return t == "integer" || t == "number" },
		"$bool":    func(v any) bool { return jsonType(v) == "boolean" },
		"$object":  func(v any) bool { return jsonType(v) == "object" },
		"$array":   func(v any) bool { return jsonType(v) == "array" },
		"$time":    isResponseTime,
		"$id":      func(v any) bool { s, ok := v.(string); return ok && membershipID.MatchString(s) },
	}
	if expected == "$absent" {
		return nil, fmt.Errorf("%s: expected to be absent, got %s", path, describe(actual))
	}
	if check, ok := simple[expected]; ok {
		if !check(actual) {
			return nil, fmt.Errorf("%s: expected %s, got %s", path, expected[1:], describe(actual))
		}
		return captures, nil
	}
	m := capturePat.FindStringSubmatch(expected)
	if m == nil {
		return nil, fmt.Errorf("%s: unknown placeholder %q in the scenario", path, expected)
	}
	kind, key := m[1], m[1]+":"+m[2]
	if kind == "id" && !simple["$id"](actual) {
		return nil, fmt.Errorf("%s: expected a membership id for %s, got %s", path, expected, describe(actual))
	}
	if kind == "time" && !isResponseTime(actual) {
		return nil, fmt.Errorf("%s: expected a response time for %s, got %s", path, expected, describe(actual))
	}
	if have, ok := captures[key]; ok {
		if !reflect.DeepEqual(have, actual) {
			return nil, fmt.Errorf("%s: expected %s = %s, got %s", path, expected, describe(have), describe(actual))
		}
		return captures, nil
	}
	if kind == "id" {
		for other, value := range captures {
			if strings.HasPrefix(other, "id:") && value == actual {
				return nil, fmt.Errorf("%s: %s is %v, which %s already is", path, expected, actual, other)
			}
		}
	}
	extended := make(map[string]any, len(captures)+1)
	for k, v := range captures {
		extended[k] = v
	}
	extended[key] = actual
	return extended, nil
}
