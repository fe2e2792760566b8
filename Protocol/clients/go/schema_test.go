package entitled

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

// These tests keep the client in step with Protocol/schema: a new operation, field or error code in the
// schema fails them, naming what the client lacks (or has that the schema does not).

func readSchema(t *testing.T, name string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "schema", name))
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	return schema
}

func dig(v any, path ...string) any {
	for _, key := range path {
		v = v.(map[string]any)[key]
	}
	return v
}

// diff returns what want has that have lacks, and what have has that want lacks.
func diff(want, have []string) (missing, extra []string) {
	w, h := map[string]bool{}, map[string]bool{}
	for _, s := range want {
		w[s] = true
	}
	for _, s := range have {
		h[s] = true
		if !w[s] {
			extra = append(extra, s)
		}
	}
	for _, s := range want {
		if !h[s] {
			missing = append(missing, s)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	return missing, extra
}

func TestSchemaErrorCodes(t *testing.T) {
	var want []string
	for _, c := range dig(readSchema(t, "response.schema.json"), "$defs", "errorCode", "enum").([]any) {
		want = append(want, c.(string))
	}
	var have []string
	for _, c := range Codes {
		have = append(have, string(c))
	}
	missing, extra := diff(want, have)
	if len(missing) > 0 || len(extra) > 0 {
		t.Fatalf("error codes: the client lacks %v and has %v that response.schema.json does not list", missing, extra)
	}
	for _, c := range Codes {
		if SentinelFor(c).(codeSentinel).code != c {
			t.Errorf("no sentinel error for %s", c)
		}
	}
}

// requestTypes are the typed requests, with the operations that take no fields and those sent by
// unexported requests (auth, watch, unwatch).
var requestTypes = []request{
	GrantRequest{}, CheckRequest{}, ClaimRequest{}, RevokeRequest{}, ExtendRequest{}, MembershipsRequest{},
	DefineRequest{}, UndefineRequest{}, EventRequest{}, CustomerRequest{}, HistoryRequest{}, EraseRequest{},
	ChangesRequest{}, ExportRequest{},
	bare("ping"), bare("hello"), bare("catalog"), bare("snapshot"), bare("stats"), bare("reload"),
	authRequest{}, watchRequest{name: "watch"}, watchRequest{name: "unwatch"},
}

func TestSchemaOperations(t *testing.T) {
	operations := dig(readSchema(t, "request.schema.json"), "$defs", "operations").(map[string]any)
	var want, listed, typed []string
	for op := range operations {
		want = append(want, op)
	}
	for _, o := range Operations {
		listed = append(listed, o.Name)
	}
	for _, r := range requestTypes {
		typed = append(typed, r.op())
	}
	if missing, extra := diff(want, listed); len(missing) > 0 || len(extra) > 0 {
		t.Errorf("Operations lacks %v and has %v that request.schema.json does not list", missing, extra)
	}
	if missing, extra := diff(want, typed); len(missing) > 0 || len(extra) > 0 {
		t.Errorf("the typed requests lack %v and have %v that request.schema.json does not list", missing, extra)
	}
	// Every operation's method exists.
	types := map[string]reflect.Type{
		"Client": reflect.TypeOf(&Client{}), "Conn": reflect.TypeOf(&Conn{}), "Watch": reflect.TypeOf(&Watch{}),
	}
	for _, o := range Operations {
		parts := strings.SplitN(o.Method, ".", 2)
		if _, ok := types[parts[0]].MethodByName(parts[1]); !ok {
			t.Errorf("operation %s: no method %s", o.Name, o.Method)
		}
	}
	// The protocol's writes are those whose success answer carries seq.
	success := dig(readSchema(t, "response.schema.json"), "$defs", "success").(map[string]any)
	for _, o := range Operations {
		required := dig(success[o.Name], "required").([]any)
		seq := false
		for _, r := range required {
			seq = seq || r == "seq"
		}
		if seq != o.Write {
			t.Errorf("operation %s: Write is %v, but its answer's seq is required: %v", o.Name, o.Write, seq)
		}
	}
}

// TestSchemaRequestFields fills every field of each typed request and checks that the line sent holds
// exactly the fields request.schema.json lets the operation take: a field the schema adds that the
// client lacks, or a field the client sends that the operation would refuse, fails it.
func TestSchemaRequestFields(t *testing.T) {
	operations := dig(readSchema(t, "request.schema.json"), "$defs", "operations").(map[string]any)
	for _, r := range requestTypes {
		op := r.op()
		var want []string
		for _, f := range dig(operations[op], "propertyNames", "enum").([]any) {
			if f != "op" && f != "id" {
				want = append(want, f.(string))
			}
		}
		filled := fill(r)
		var w wire
		w.start(op, 1)
		filled.encode(&w)
		w.end()
		var sent map[string]any
		if err := json.Unmarshal(w.b, &sent); err != nil {
			t.Fatalf("%s: the line sent is not JSON: %s", op, w.b)
		}
		var have []string
		for k := range sent {
			if k != "op" && k != "id" {
				have = append(have, k)
			}
		}
		if missing, extra := diff(want, have); len(missing) > 0 || len(extra) > 0 {
			t.Errorf("%s: the client lacks the fields %v and sends %v that the operation does not take", op, missing, extra)
		}
	}
}

// fill returns a copy of a request with every field set to a value that is sent.
func fill(r request) request {
	switch r := r.(type) {
	case authRequest:
		return authRequest{token: "t"}
	case watchRequest:
		return watchRequest{name: r.name, target: WatchTarget{User: "u", Device: "d", All: true}}
	case bare:
		return r
	}
	v := reflect.New(reflect.TypeOf(r)).Elem()
	yes := true
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		switch f.Interface().(type) {
		case time.Time:
			f.Set(reflect.ValueOf(time.Now()))
		case time.Duration:
			f.Set(reflect.ValueOf(time.Second)) // sent in whole milliseconds: 1 ns would not be sent
		case *bool:
			f.Set(reflect.ValueOf(&yes))
		case []string:
			f.Set(reflect.ValueOf([]string{"p"}))
		default:
			switch f.Kind() {
			case reflect.String:
				f.SetString("x")
			case reflect.Int, reflect.Int64:
				f.SetInt(1)
			case reflect.Bool:
				f.SetBool(true)
			default:
				panic("fill: a field of an unexpected type in " + v.Type().Name())
			}
		}
	}
	return v.Interface().(request)
}
