package entitled_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeFirstSession runs the README's first code block, a program, against a real server.
func TestReadmeFirstSession(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)```go\n(.*?)```").FindSubmatch(readme)
	if block == nil {
		t.Fatal("README.md has no go block")
	}
	srv := newServer(t)
	program := strings.Replace(string(block[1]), `"127.0.0.1:7117"`, `"`+srv.addr()+`"`, 1)
	if program == string(block[1]) {
		t.Fatal("the first session does not connect to 127.0.0.1:7117")
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
		t.Fatalf("the first session failed: %v\n%s", err, out)
	}
	for _, want := range []string{"pro: true until ", "gold: not in the catalog", "pushed: revoke revoked",
		"membership: prod_pro_monthly revoked"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
}
