package entitled_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	entitled "github.com/entitled-dev/entitled/Protocol/clients/go"
)

// The tests run against real servers: $ENTITLED_BINARY (default <repo>/.build/debug/entitled), started
// with --port 0, a temporary data directory and --snapshot-interval 0; the port is read from the ready
// line. Tests that do not interfere share one server (shared()); the others start their own.

var repoRoot = func() string {
	dir, err := filepath.Abs("../../..")
	if err != nil {
		panic(err)
	}
	return dir
}()

func serverBinary() string {
	if b := os.Getenv("ENTITLED_BINARY"); b != "" {
		if !filepath.IsAbs(b) {
			b = filepath.Join(repoRoot, b)
		}
		return b
	}
	return filepath.Join(repoRoot, ".build/debug/entitled")
}

var readyLine = regexp.MustCompile(`listening on .*?tcp 127\.0\.0\.1:(\d+)`)

// server is one entitled process.
type server struct {
	cmd    *exec.Cmd
	dir    string
	port   int
	socket string
	stdout *syncBuffer
	stderr *syncBuffer
	args   []string

	exited   chan struct{} // closed when the process has exited
	exitCode int
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServer starts a server on any free port in a new temporary directory; extra arguments come after
// the usual ones.
func startServer(extra ...string) (*server, error) { return startServerOn(0, extra...) }

// startServerOn starts a server on a given port (0: any).
func startServerOn(port int, extra ...string) (*server, error) {
	dir, err := os.MkdirTemp("", "entitled-go-")
	if err != nil {
		return nil, err
	}
	s := &server{dir: dir, socket: filepath.Join(dir, "e.sock")}
	s.args = append([]string{"--data-dir", filepath.Join(dir, "data"), "--snapshot-interval", "0",
		"--socket", s.socket}, extra...)
	if err := s.start(port); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// start runs the binary on the port (0: any) and waits for its ready line.
func (s *server) start(port int) error {
	s.stdout, s.stderr = &syncBuffer{}, &syncBuffer{}
	args := append([]string{"--port", strconv.Itoa(port)}, s.args...)
	s.cmd = exec.Command(serverBinary(), args...)
	s.cmd.Dir = s.dir
	s.cmd.Stdout, s.cmd.Stderr = s.stdout, s.stderr
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("cannot start %s (set ENTITLED_BINARY): %w", serverBinary(), err)
	}
	exited := make(chan struct{})
	s.exited = exited
	go func() {
		s.cmd.Wait()
		s.exitCode = s.cmd.ProcessState.ExitCode()
		close(exited)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if m := readyLine.FindStringSubmatch(s.stdout.String()); m != nil {
			s.port, _ = strconv.Atoi(m[1])
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("entitled exited before it was ready: %s", s.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	s.cmd.Process.Kill()
	<-exited
	return fmt.Errorf("entitled did not become ready: %s", s.stderr.String())
}

func (s *server) addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// client returns a client of the server, closed at the end of the test.
func (s *server) client(t testing.TB, opts *entitled.Options) *entitled.Client {
	t.Helper()
	if opts == nil {
		opts = &entitled.Options{}
	}
	if len(opts.Nodes) == 0 {
		opts.Nodes = []string{s.addr()}
	}
	c := entitled.NewClient(opts)
	t.Cleanup(func() { c.Close() })
	return c
}

// stop sends SIGTERM and returns the exit status.
func (s *server) stop() (int, error) {
	select {
	case <-s.exited:
		return s.exitCode, nil
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(15 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
		return -1, fmt.Errorf("entitled did not exit within 15 s of SIGTERM")
	}
	return s.exitCode, nil
}

// kill stops the server at once (SIGKILL), as a crash would.
func (s *server) kill() {
	s.cmd.Process.Kill()
	<-s.exited
}

// close stops the server, expecting exit status 0, and removes its directory.
func (s *server) close(t testing.TB) {
	t.Helper()
	defer os.RemoveAll(s.dir)
	status, err := s.stop()
	if err != nil {
		t.Error(err)
	} else if status != 0 {
		t.Errorf("entitled's exit status after SIGTERM: %d; stderr:\n%s", status, s.stderr.String())
	}
}

// newServer starts a server stopped at the end of the test.
func newServer(t *testing.T, extra ...string) *server { return newServerOn(t, 0, extra...) }

// newServerOn starts a server on a given port, stopped at the end of the test.
func newServerOn(t *testing.T, port int, extra ...string) *server {
	t.Helper()
	s, err := startServerOn(port, extra...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.close(t) })
	return s
}

var (
	sharedOnce   sync.Once
	sharedServer *server
	sharedErr    error
)

// shared returns the server the tests that do not interfere share (ids unique per test); TestMain stops
// it at the end.
func shared(t testing.TB) *server {
	t.Helper()
	sharedOnce.Do(func() { sharedServer, sharedErr = startServer() })
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return sharedServer
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedServer != nil {
		status, err := sharedServer.stop()
		os.RemoveAll(sharedServer.dir)
		if err != nil || status != 0 {
			fmt.Fprintf(os.Stderr, "the shared entitled exited with %d (%v); stderr:\n%s\n", status, err, sharedServer.stderr.String())
			code = 1
		}
	}
	os.Exit(code)
}

var idCounter struct {
	sync.Mutex
	n int
}

// uid returns an id unique in the test run.
func uid(name string) string {
	idCounter.Lock()
	defer idCounter.Unlock()
	idCounter.n++
	return fmt.Sprintf("go%d.%d.%s", os.Getpid(), idCounter.n, name)
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// freePort returns a TCP port nothing listens on now.
func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
