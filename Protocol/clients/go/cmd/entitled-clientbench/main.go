// Command entitled-clientbench measures checks through the Go client: it keeps exactly --in-flight checks
// in flight through one Client (one pooled connection, so the checks are pipelined on it, as
// entitled-loadgen --connections 1 --pipeline N does), for --duration seconds after --warmup, and prints
// one JSON line with the checks answered, the rate and this process's CPU time per check.
//
//	go run ./cmd/entitled-clientbench --port 7117 --in-flight 50 --duration 5 --warmup 1 --users 1000
//
// --gomaxprocs (default 1) is the client's GOMAXPROCS: like entitled-loadgen's one thread, the client then
// takes one core at most, and the server keeps the others (on a 2-core machine, one).
//
// It grants --users users a product first (each a new membership), then checks them round-robin. Each
// of the --in-flight goroutines sends its next check as soon as its previous one is answered. The CPU
// time is this process's (getrusage), user and system.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	entitled "github.com/entitled-dev/entitled/Protocol/clients/go"
)

func main() {
	host := flag.String("host", "127.0.0.1", "server host")
	port := flag.Int("port", 7117, "server port")
	inFlight := flag.Int("in-flight", 50, "checks kept in flight")
	duration := flag.Float64("duration", 5, "seconds measured")
	warmup := flag.Float64("warmup", 1, "seconds before measuring")
	users := flag.Int("users", 1000, "users granted before the checks")
	procs := flag.Int("gomaxprocs", 1, "GOMAXPROCS for the client: 1, one core as entitled-loadgen's one thread, leaving the other cores to the server; 0: Go's default, every core")
	flag.Parse()
	if *procs > 0 {
		runtime.GOMAXPROCS(*procs)
	}

	c := entitled.NewClient(&entitled.Options{Nodes: []string{net.JoinHostPort(*host, strconv.Itoa(*port))}})
	defer c.Close()
	ctx := context.Background()

	prefix := fmt.Sprintf("bench-%d-%d-", os.Getpid(), time.Now().UnixNano())
	ids := make([]string, *users)
	for i := range ids {
		ids[i] = prefix + strconv.Itoa(i)
	}
	if err := grantAll(ctx, c, ids, *inFlight); err != nil {
		fail(err)
	}

	var counting int32
	var checks int64
	var firstErr atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := 0; g < *inFlight; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := g; ; i += *inFlight {
				select {
				case <-stop:
					return
				default:
				}
				r, err := c.Check(ctx, entitled.CheckRequest{User: ids[i%len(ids)], Product: "prod_bench"})
				if err != nil || !r.Active {
					firstErr.CompareAndSwap(nil, fmt.Errorf("check: %v (active %v)", err, r.Active))
					continue
				}
				if atomic.LoadInt32(&counting) == 1 {
					atomic.AddInt64(&checks, 1)
				}
			}
		}(g)
	}
	time.Sleep(time.Duration(*warmup * float64(time.Second)))
	user0, sys0 := cpu()
	start := time.Now()
	atomic.StoreInt32(&counting, 1)
	time.Sleep(time.Duration(*duration * float64(time.Second)))
	atomic.StoreInt32(&counting, 0)
	elapsed := time.Since(start).Seconds()
	n := atomic.LoadInt64(&checks)
	user1, sys1 := cpu()
	close(stop)
	wg.Wait()
	if err, ok := firstErr.Load().(error); ok {
		fail(err)
	}
	u, s := user1-user0, sys1-sys0
	out, _ := json.Marshal(map[string]any{
		"client":                  "go",
		"checks":                  n,
		"seconds":                 round(elapsed, 3),
		"checksPerSecond":         round(float64(n)/elapsed, 0),
		"cpuUserSeconds":          round(u, 3),
		"cpuSystemSeconds":        round(s, 3),
		"cpuMicrosecondsPerCheck": round((u+s)/float64(n)*1e6, 2),
		"inFlight":                *inFlight,
		"gomaxprocs":              runtime.GOMAXPROCS(0),
		"connections":             1,
	})
	fmt.Println(string(out))
}

// grantAll grants each user the benchmark's product, inFlight grants at a time.
func grantAll(ctx context.Context, c *entitled.Client, ids []string, inFlight int) error {
	sem := make(chan struct{}, inFlight)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for _, id := range ids {
		sem <- struct{}{}
		wg.Add(1)
		go func(id string) {
			defer func() { <-sem; wg.Done() }()
			if _, err := c.Grant(ctx, entitled.GrantRequest{User: id, Product: "prod_bench"}); err != nil {
				select {
				case errs <- err:
				default:
				}
			}
		}(id)
	}
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// cpu returns this process's user and system CPU seconds.
func cpu() (user, system float64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fail(err)
	}
	return float64(ru.Utime.Nano()) / 1e9, float64(ru.Stime.Nano()) / 1e9
}

func round(v float64, digits int) float64 {
	p, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', digits, 64), 64)
	return p
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "entitled-clientbench:", err)
	os.Exit(1)
}
