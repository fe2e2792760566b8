package entitled_test

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"sync"
	"testing"

	entitled "github.com/entitled-dev/entitled/Protocol/clients/go"
)

// BenchmarkCheckPipelined keeps 50 checks in flight through one pooled connection to a loopback server
// that answers every check at once, as entitled-clientbench does against a real server: go test -bench
// CheckPipelined -benchmem shows the client's allocations and time per check.
func BenchmarkCheckPipelined(b *testing.B) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			go serveChecks(nc)
		}
	}()
	c := entitled.NewClient(&entitled.Options{Nodes: []string{l.Addr().String()}})
	defer c.Close()
	ctx := context.Background()
	req := entitled.CheckRequest{User: "bench-00000001", Product: "prod_bench"}
	if _, err := c.Check(ctx, req); err != nil {
		b.Fatal(err)
	}
	const inFlight = 50
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	for g := 0; g < inFlight; g++ {
		n := b.N / inFlight
		if g < b.N%inFlight {
			n++
		}
		wg.Add(1)
		go func(n int) {
			defer wg.Done()
			for i := 0; i < n; i++ {
				if r, err := c.Check(ctx, req); err != nil || !r.Active {
					b.Errorf("check: %v %v", r, err)
					return
				}
			}
		}(n)
	}
	wg.Wait()
}

// serveChecks answers each line {"op":"check","id":N,...} with an active check of that id, writing
// whenever no more requests are buffered.
func serveChecks(nc net.Conn) {
	defer nc.Close()
	r := bufio.NewReaderSize(nc, 64<<10)
	w := bufio.NewWriterSize(nc, 64<<10)
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return
		}
		id := line[bytes.Index(line, []byte(`"id":`))+5:]
		id = id[:bytes.IndexAny(id, ",}")]
		w.WriteString(`{"ok":true,"id":`)
		w.Write(id)
		w.WriteString(`,"active":true,"expiresAt":null}` + "\n")
		if r.Buffered() == 0 {
			if w.Flush() != nil {
				return
			}
		}
	}
}
