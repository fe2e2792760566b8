package entitled_test

import (
	"bufio"
	"encoding/json"
	"net"
	"sync"
	"testing"
)

// fake is a local line server whose behaviour a test scripts: serve runs for each accepted connection,
// with the connection's number (0 for the first).
type fake struct {
	l     net.Listener
	mu    sync.Mutex
	lines []string // every line received, on every connection
	conns int
	wg    sync.WaitGroup
}

func newFake(t *testing.T, serve func(c *fakeConn)) *fake {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fake{l: l}
	go func() {
		for {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			f.mu.Lock()
			n := f.conns
			f.conns++
			f.mu.Unlock()
			f.wg.Add(1)
			go func() {
				defer f.wg.Done()
				defer nc.Close()
				serve(&fakeConn{f: f, nc: nc, r: bufio.NewReader(nc), n: n})
			}()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		f.wg.Wait()
	})
	return f
}

func (f *fake) addr() string { return f.l.Addr().String() }

func (f *fake) connections() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.conns
}

func (f *fake) received() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.lines...)
}

// fakeConn is one connection of a fake.
type fakeConn struct {
	f  *fake
	nc net.Conn
	r  *bufio.Reader
	n  int
}

// read returns the next request line decoded (nil at the end of the connection).
func (c *fakeConn) read() map[string]any {
	line, err := c.r.ReadBytes('\n')
	if err != nil {
		return nil
	}
	c.f.mu.Lock()
	c.f.lines = append(c.f.lines, string(line))
	c.f.mu.Unlock()
	var m map[string]any
	if json.Unmarshal(line, &m) != nil {
		return map[string]any{}
	}
	return m
}

// write sends one line ("\n" added).
func (c *fakeConn) write(line string) {
	c.nc.Write([]byte(line + "\n"))
}

// idOf is the request's id as JSON text.
func idOf(req map[string]any) string {
	b, _ := json.Marshal(req["id"])
	return string(b)
}

// answer sends {"ok":true,"id":ID<rest>} for the request; rest is more fields, such as `,"active":true`.
func (c *fakeConn) answer(req map[string]any, rest string) {
	c.write(`{"ok":true,"id":` + idOf(req) + rest + `}`)
}

// answerError sends an error answer with the code.
func (c *fakeConn) answerError(req map[string]any, code, extra string) {
	c.write(`{"ok":false,"id":` + idOf(req) + `,"error":{"code":"` + code + `","message":"scripted"` + extra + `}}`)
}

// answerAll answers every request of the connection ok, with the fields a check, or a grant, needs.
func (c *fakeConn) answerAll() {
	for req := c.read(); req != nil; req = c.read() {
		c.answer(req, okFields(req))
	}
}

func okFields(req map[string]any) string {
	switch req["op"] {
	case "check":
		return `,"active":false`
	case "grant":
		return `,"seq":1,"membership":{"id":"mem_0000000000000","productId":"p","status":"active","isActive":true,"createdAt":"2026-01-01T00:00:00Z","expiresAt":null,"source":"manual","willRenew":false,"periodType":"normal","renewState":"non_renewable","renewsCount":0,"environment":"production","ownership":"purchased","grantType":"purchase"}`
	}
	return ""
}
