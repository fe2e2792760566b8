package entitled_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The conformance matcher's rules (Protocol/conformance/README.md, Matching), each with a case that must
// fail: a matcher that accepted everything would pass every scenario.
func TestMatcher(t *testing.T) {
	cases := []struct {
		expected, actual string
		ok               bool
	}{
		{`{"ok":true}`, `{"ok":true,"id":1}`, true},
		{`{"$exact":true,"ok":true}`, `{"ok":true,"id":1}`, false},
		{`{"id":"$absent"}`, `{"ok":true}`, true},
		{`{"id":"$absent"}`, `{"id":1}`, false},
		{`{"n":1}`, `{"n":1.0}`, true},
		{`{"n":"$integer"}`, `{"n":1.5}`, false},
		{`{"n":true}`, `{"n":1}`, false},
		{`{"t":"$time"}`, `{"t":"2026-11-22T00:31:45.833Z"}`, true},
		{`{"t":"$time"}`, `{"t":"2026-11-22T00:31:45.000Z"}`, false},
		{`{"m":"$id"}`, `{"m":"mem_1ymr6jcw5jqzv"}`, true},
		{`{"m":"$id"}`, `{"m":"mem_1ymr6jcw5jqzi"}`, false},
		{`{"a":"$id:x","b":"$id:x"}`, `{"a":"mem_1ymr6jcw5jqzv","b":"mem_1ymr6jcw5jqzv"}`, true},
		{`{"a":"$id:x","b":"$id:x"}`, `{"a":"mem_1ymr6jcw5jqzv","b":"mem_2ymr6jcw5jqzv"}`, false},
		{`{"a":"$id:x","b":"$id:y"}`, `{"a":"mem_1ymr6jcw5jqzv","b":"mem_1ymr6jcw5jqzv"}`, false},
		{`{"l":[1,2]}`, `{"l":[1,2,3]}`, false},
		{`{"s":"$$x"}`, `{"s":"$x"}`, true},
		{`{"$anyOf":[{"p":"$object"},{"r":"$object"}]}`, `{"r":{}}`, true},
		{`{"$anyOf":[{"p":"$object"},{"r":"$object"}]}`, `{"q":{}}`, false},
		{`{"$exact":true,"$anyOf":[{"p":"$any"}],"ok":true}`, `{"ok":true,"p":1}`, true},
	}
	for _, c := range cases {
		expected, err := parseOrdered([]byte(c.expected))
		if err != nil {
			t.Fatal(err)
		}
		actual, err := decode([]byte(c.actual))
		if err != nil {
			t.Fatal(err)
		}
		_, err = match(expected, actual, map[string]any{}, "$")
		if (err == nil) != c.ok {
			t.Errorf("match(%s, %s): %v, want ok=%v", c.expected, c.actual, err, c.ok)
		}
	}
}

// TestScenarioRunnerFails runs a scenario with a wrong expectation: the runner must report it.
func TestScenarioRunnerFails(t *testing.T) {
	srv := shared(t)
	file := filepath.Join(t.TempDir(), "wrong.ndjson")
	os.WriteFile(file, []byte(`{"send": {"op": "ping", "id": "a"}}`+"\n"+`{"expect": {"ok": true, "id": "b"}}`+"\n"), 0o644)
	r := &scenario{client: srv.client(t, nil), tag: "t", conns: map[string]*scenarioConn{}, captures: map[string]any{}}
	defer r.close()
	if err := r.run(file); err == nil || !strings.Contains(err.Error(), `expected "b"`) {
		t.Fatalf("the runner did not report the mismatch: %v", err)
	}
	os.WriteFile(file, []byte(`{"send": {"op": "ping", "id": "a"}}`+"\n"), 0o644)
	r2 := &scenario{client: srv.client(t, nil), tag: "t", conns: map[string]*scenarioConn{}, captures: map[string]any{}}
	defer r2.close()
	if err := r2.run(file); err == nil || !strings.Contains(err.Error(), "did not expect") {
		t.Fatalf("the runner did not report an unexpected response: %v", err)
	}
}
