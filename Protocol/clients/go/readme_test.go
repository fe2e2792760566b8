package entitled_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README's programs run against a real server: the first session, and the change feed's.

// readmeProgram returns the README's first go block after the heading ("" for the top of the file).
func readmeProgram(t *testing.T, heading string) string {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	if heading != "" {
		i := strings.Index(text, "\n"+heading+"\n")
		if i < 0 {
			t.Fatalf("README.md has no heading %q", heading)
		}
		text = text[i:]
	}
	block := regexp.MustCompile("(?s)```go\n(.*?)```").FindStringSubmatch(text)
	if block == nil {
		t.Fatalf("README.md has no go block after %q", heading)
	}
	return block[1]
}

// runReadmeProgram runs a program of the README against a new server and checks that its output holds
// each of want.
func runReadmeProgram(t *testing.T, source string, want ...string) {
	t.Helper()
	srv := newServer(t)
	program := strings.Replace(source, `"127.0.0.1:7117"`, `"`+srv.addr()+`"`, 1)
	if program == source {
		t.Fatal("the program does not connect to 127.0.0.1:7117")
	}
	module, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	goMod := "module readme\n\ngo 1.19\n\nrequire github.com/entitled-dev/entitled/Protocol/clients/go v0.0.0\n\n" +
		"replace github.com/entitled-dev/entitled/Protocol/clients/go => " + module + "\n"
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte(goMod), 0o644)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte(program), 0o644)
	cmd := exec.Command("go", "run", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the program failed: %v\n%s", err, out)
	}
	for _, w := range want {
		if !strings.Contains(string(out), w) {
			t.Errorf("the output lacks %q:\n%s", w, out)
		}
	}
}

// TestReadmeFirstSession runs the README's first code block, a program, against a real server.
func TestReadmeFirstSession(t *testing.T) {
	runReadmeProgram(t, readmeProgram(t, ""), "pro: true until ", "gold: not in the catalog",
		"pushed: revoke revoked", "membership: prod_pro_monthly revoked")
}

// TestReadmeChangeFeedProgram runs the program of "The change feed and exports": a copy, then the feed.
func TestReadmeChangeFeedProgram(t *testing.T) {
	runReadmeProgram(t, readmeProgram(t, "## The change feed and exports"),
		"copied 1 memberships as of change 1\n", "change 2 grant position 2\n", "memberships: 2\n")
}
