// webhook-bench: the two ends of the webhook benchmark (Tools/webhook-bench/README.md), standard library only.
//
//	webhook-bench receive --secret whsec_... [--port 0] [--no-verify]
//	    A fast Standard Webhooks receiver: POST anywhere but /stats and /dump is a message. Each one's
//	    signature is checked (HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>" with the base64 key
//	    after "whsec_", against each space-separated "v1,<base64>" entry of webhook-signature, the timestamp
//	    within five minutes; --no-verify skips it, and /stats then says "verified": false), its payload read
//	    (data.sequence, timestamp, the membership's user) and its arrival time taken (the wall clock, in
//	    nanoseconds, once the body is read), then it is answered 204. A bad signature is answered 401 and
//	    counted, never recorded. Prints "listening on PORT".
//	    GET /stats: counts so far. POST /dump?path=FILE: writes one line per message taken,
//	    "sequence,arrival_ns,payload_ms,duplicate", to FILE.
//
//	webhook-bench write --port P --rate R --warmup W --duration D --users U --out FILE
//	    Grants at a steady R a second on one pipelined connection to entitled (sends paced to the
//	    schedule, answers read as they come) for W + D seconds, and writes one line per grant,
//	    "sequence,send_ns,answer_ns,measured" (measured 0 for the warm-up's), to FILE.
//	webhook-bench write --port P --count N --users U [--batch 1000]
//	    Grants N as fast as the server takes them, --batch pipelined at a time (the drain's backlog).
//
//	webhook-bench blast --url URL --secret whsec_... [--connections 8] [--duration 5]
//	    A receiver's capacity alone: signed messages shaped as the deliverer's (about 700 bytes), each
//	    connection sending the next once the last is answered, for --duration seconds.
//
// Each prints one JSON line of totals on stdout when it is done.
package main

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: webhook-bench receive|write|blast [options]")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "receive":
		receive(os.Args[2:])
	case "write":
		write(os.Args[2:])
	case "blast":
		blast(os.Args[2:])
	default:
		fmt.Fprintln(os.Stderr, "usage: webhook-bench receive|write|blast [options]")
		os.Exit(2)
	}
}

// MARK: receiver

type delivery struct {
	sequence  uint64
	arrival   int64 // Unix nanoseconds
	payloadMs int64 // the payload's timestamp, Unix milliseconds
	duplicate bool
}

type receiver struct {
	key    []byte
	verify bool

	mu         sync.Mutex
	deliveries []delivery
	seen       map[uint64]struct{}
	lastOfUser map[string]uint64
	outOfOrder int
	duplicates int
	rejected   int
	malformed  int

	active      int64 // handlers running now
	maxActive   int64
	connections int64               // connections accepted so far (the /stats polls' included)
	peers       map[string]struct{} // the connections (client addresses) that carried a message
	closing     int64               // messages whose request asked to close its connection (Connection: close)
}

type payload struct {
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	Data      struct {
		Sequence   uint64 `json:"sequence"`
		Membership *struct {
			User   string `json:"user"`
			Device string `json:"device"`
		} `json:"membership"`
	} `json:"data"`
}

// verified says whether one v1 entry of the signature header is the HMAC-SHA256 of id.timestamp.body.
func (r *receiver) verified(h http.Header, body []byte) bool {
	id, stamp, signature := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || stamp == "" || signature == "" {
		return false
	}
	seconds, err := strconv.ParseInt(stamp, 10, 64)
	if err != nil {
		return false
	}
	if skew := time.Now().Unix() - seconds; skew > 300 || skew < -300 {
		return false
	}
	mac := hmac.New(sha256.New, r.key)
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write([]byte(stamp))
	mac.Write([]byte{'.'})
	mac.Write(body)
	expected := make([]byte, base64.StdEncoding.EncodedLen(sha256.Size))
	base64.StdEncoding.Encode(expected, mac.Sum(nil))
	for _, entry := range strings.Split(signature, " ") {
		if strings.HasPrefix(entry, "v1,") && hmac.Equal([]byte(entry[3:]), expected) {
			return true
		}
	}
	return false
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, q *http.Request) {
	switch {
	case q.Method == http.MethodGet && q.URL.Path == "/stats":
		r.stats(w)
		return
	case q.Method == http.MethodPost && q.URL.Path == "/dump":
		r.dump(w, q.URL.Query().Get("path"))
		return
	case q.Method != http.MethodPost:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	now := atomic.AddInt64(&r.active, 1)
	defer atomic.AddInt64(&r.active, -1)
	for {
		seen := atomic.LoadInt64(&r.maxActive)
		if now <= seen || atomic.CompareAndSwapInt64(&r.maxActive, seen, now) {
			break
		}
	}
	body, err := io.ReadAll(q.Body)
	arrival := time.Now().UnixNano()
	if q.Close {
		atomic.AddInt64(&r.closing, 1)
	}
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if r.verify && !r.verified(q.Header, body) {
		r.mu.Lock()
		r.rejected++
		r.mu.Unlock()
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var message payload
	if err := json.Unmarshal(body, &message); err != nil || message.Data.Sequence == 0 {
		r.mu.Lock()
		r.malformed++
		r.mu.Unlock()
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var payloadMs int64
	if stamp, err := time.Parse(time.RFC3339Nano, message.Timestamp); err == nil {
		payloadMs = stamp.UnixMilli()
	}
	subject := ""
	if m := message.Data.Membership; m != nil {
		subject = m.User + "|" + m.Device
	}
	r.mu.Lock()
	r.peers[q.RemoteAddr] = struct{}{}
	_, duplicate := r.seen[message.Data.Sequence]
	if duplicate {
		r.duplicates++
	} else {
		r.seen[message.Data.Sequence] = struct{}{}
		if subject != "" {
			if last, ok := r.lastOfUser[subject]; ok && last > message.Data.Sequence {
				r.outOfOrder++
			}
			r.lastOfUser[subject] = message.Data.Sequence
		}
	}
	r.deliveries = append(r.deliveries, delivery{message.Data.Sequence, arrival, payloadMs, duplicate})
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiver) stats(w http.ResponseWriter) {
	r.mu.Lock()
	out := map[string]any{
		"received": len(r.deliveries), "distinct": len(r.seen), "duplicates": r.duplicates, "rejected": r.rejected,
		"malformed": r.malformed, "outOfOrder": r.outOfOrder, "verified": r.verify,
		"maxConcurrent": atomic.LoadInt64(&r.maxActive), "connections": atomic.LoadInt64(&r.connections), "messageConnections": len(r.peers),
		"closeRequested": atomic.LoadInt64(&r.closing),
	}
	if n := len(r.deliveries); n > 0 {
		out["firstArrivalNs"] = r.deliveries[0].arrival
		out["lastArrivalNs"] = r.deliveries[n-1].arrival
	}
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

func (r *receiver) dump(w http.ResponseWriter, path string) {
	r.mu.Lock()
	list := append([]delivery(nil), r.deliveries...)
	r.mu.Unlock()
	var b bytes.Buffer
	b.WriteString("sequence,arrival_ns,payload_ms,duplicate\n")
	for _, d := range list {
		dup := 0
		if d.duplicate {
			dup = 1
		}
		fmt.Fprintf(&b, "%d,%d,%d,%d\n", d.sequence, d.arrival, d.payloadMs, dup)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	fmt.Fprintf(w, "%d\n", len(list))
}

func receive(arguments []string) {
	flags := flag.NewFlagSet("receive", flag.ExitOnError)
	port := flags.Int("port", 0, "the loopback port (0: a free one)")
	secret := flags.String("secret", "", "the endpoint's whsec_ secret")
	noVerify := flags.Bool("no-verify", false, "take every message without checking its signature")
	flags.Parse(arguments)
	r := &receiver{verify: !*noVerify, seen: map[uint64]struct{}{}, lastOfUser: map[string]uint64{}, peers: map[string]struct{}{},
		deliveries: make([]delivery, 0, 1<<17)}
	if r.verify {
		if !strings.HasPrefix(*secret, "whsec_") {
			fmt.Fprintln(os.Stderr, "--secret whsec_... is needed (or --no-verify)")
			os.Exit(2)
		}
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(*secret, "whsec_"))
		if err != nil {
			fmt.Fprintln(os.Stderr, "the secret is not whsec_ and base64")
			os.Exit(2)
		}
		r.key = key
	}
	listener, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	server := &http.Server{Handler: r, ConnState: func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			atomic.AddInt64(&r.connections, 1)
		}
	}}
	fmt.Printf("listening on %d\n", listener.Addr().(*net.TCPAddr).Port)
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() { <-signals; os.Exit(0) }()
	if err := server.Serve(listener); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// MARK: writer

// answerFields reads "ok", "id" and "seq" from an answer line (the server writes ok, id, seq first).
func answerFields(line []byte) (ok bool, id int64, seq int64) {
	ok = bytes.HasPrefix(line, []byte(`{"ok":true`))
	id, seq = -1, -1
	if i := bytes.Index(line, []byte(`"id":`)); i >= 0 {
		id = leadingInt(line[i+5:])
	}
	if i := bytes.Index(line, []byte(`"seq":`)); i >= 0 {
		seq = leadingInt(line[i+6:])
	}
	return
}

func leadingInt(b []byte) int64 {
	var n int64 = -1
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		if n < 0 {
			n = 0
		}
		n = n*10 + int64(c-'0')
	}
	return n
}

func appendGrant(b []byte, id int64, users int) []byte {
	b = append(b, `{"op":"grant","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"user":"wb-`...)
	b = strconv.AppendInt(b, 1_000_000+id%int64(users), 10)
	b = append(b, `","product":"prod_`...)
	b = strconv.AppendInt(b, id%3, 10)
	return append(b, "\"}\n"...)
}

func write(arguments []string) {
	flags := flag.NewFlagSet("write", flag.ExitOnError)
	port := flags.Int("port", 0, "entitled's port on 127.0.0.1")
	rate := flags.Float64("rate", 0, "grants a second (steady mode)")
	warmup := flags.Float64("warmup", 0, "seconds of the steady rate before the measured window")
	duration := flags.Float64("duration", 0, "seconds of the measured window")
	count := flags.Int("count", 0, "grants to make as fast as the server takes them (bulk mode)")
	batch := flags.Int("batch", 1000, "bulk mode: grants pipelined at a time")
	users := flags.Int("users", 10000, "the grants go round-robin to this many users")
	out := flags.String("out", "", "steady mode: the file of seq,send_ns,answer_ns,measured")
	flags.Parse(arguments)
	connection, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	connection.(*net.TCPConn).SetNoDelay(true)
	reader := bufio.NewReaderSize(connection, 1<<20)
	if *count > 0 {
		bulk(connection, reader, *count, *batch, *users)
	} else {
		steady(connection, reader, *rate, *warmup, *duration, *users, *out)
	}
}

func bulk(connection net.Conn, reader *bufio.Reader, count, batch, users int) {
	start := time.Now()
	var firstSeq, lastSeq int64 = -1, -1
	errors := 0
	var buffer []byte
	for done := 0; done < count; {
		n := batch
		if count-done < n {
			n = count - done
		}
		buffer = buffer[:0]
		for i := 0; i < n; i++ {
			buffer = appendGrant(buffer, int64(done+i+1), users)
		}
		if _, err := connection.Write(buffer); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for i := 0; i < n; i++ {
			line, err := reader.ReadSlice('\n')
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			ok, _, seq := answerFields(line)
			if !ok {
				if errors == 0 {
					fmt.Fprintf(os.Stderr, "a grant failed: %s", line)
				}
				errors++
				continue
			}
			if firstSeq < 0 {
				firstSeq = seq
			}
			lastSeq = seq
		}
		done += n
	}
	seconds := time.Since(start).Seconds()
	json.NewEncoder(os.Stdout).Encode(map[string]any{"granted": count - errors, "errors": errors, "firstSeq": firstSeq,
		"lastSeq": lastSeq, "seconds": seconds, "perSecond": float64(count) / seconds})
}

func steady(connection net.Conn, reader *bufio.Reader, rate, warmup, duration float64, users int, out string) {
	total := int(rate * (warmup + duration))
	warm := int(rate * warmup)
	sendNs := make([]int64, total+1)
	answerNs := make([]int64, total+1)
	seqs := make([]int64, total+1)
	errors := int64(0)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for answered := 0; answered < total; answered++ {
			line, err := reader.ReadSlice('\n')
			now := time.Now().UnixNano()
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			ok, id, seq := answerFields(line)
			if !ok || id < 1 || id > int64(total) {
				if atomic.AddInt64(&errors, 1) == 1 {
					fmt.Fprintf(os.Stderr, "a grant failed: %s", line)
				}
				continue
			}
			answerNs[id] = now
			seqs[id] = seq
		}
	}()
	interval := time.Duration(float64(time.Second) / rate)
	start := time.Now()
	var buffer []byte
	late := time.Duration(0)
	for i := 1; i <= total; {
		due := start.Add(time.Duration(i-1) * interval)
		if wait := time.Until(due); wait > 0 {
			time.Sleep(wait)
		} else if -wait > late {
			late = -wait
		}
		// Every grant that is due now goes in this write (a late wake-up sends the ones it missed at once).
		now := time.Now()
		buffer = buffer[:0]
		stamp := now.UnixNano()
		for ; i <= total && !start.Add(time.Duration(i-1)*interval).After(now); i++ {
			buffer = appendGrant(buffer, int64(i), users)
			sendNs[i] = stamp
		}
		if _, err := connection.Write(buffer); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	sent := time.Since(start).Seconds()
	<-done
	var b bytes.Buffer
	b.WriteString("seq,send_ns,answer_ns,measured\n")
	for i := 1; i <= total; i++ {
		if seqs[i] <= 0 {
			continue
		}
		measured := 1
		if i <= warm {
			measured = 0
		}
		fmt.Fprintf(&b, "%d,%d,%d,%d\n", seqs[i], sendNs[i], answerNs[i], measured)
	}
	if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	json.NewEncoder(os.Stdout).Encode(map[string]any{"sent": total, "errors": errors, "sendSeconds": sent,
		"perSecond": float64(total) / sent, "latestSendMs": float64(late) / 1e6})
}

// MARK: blaster

func blast(arguments []string) {
	flags := flag.NewFlagSet("blast", flag.ExitOnError)
	url := flags.String("url", "", "the receiver's URL")
	secret := flags.String("secret", "", "the whsec_ secret to sign with")
	connections := flags.Int("connections", 8, "connections, each with one message in flight")
	duration := flags.Float64("duration", 5, "seconds")
	flags.Parse(arguments)
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(*secret, "whsec_"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "the secret is not whsec_ and base64")
		os.Exit(2)
	}
	transport := &http.Transport{MaxIdleConnsPerHost: *connections, MaxConnsPerHost: *connections}
	client := &http.Client{Transport: transport, Timeout: 10 * time.Second}
	var next, answered, failed int64
	deadline := time.Now().Add(time.Duration(*duration * float64(time.Second)))
	start := time.Now()
	var group sync.WaitGroup
	for c := 0; c < *connections; c++ {
		group.Add(1)
		go func() {
			defer group.Done()
			for time.Now().Before(deadline) {
				sequence := atomic.AddInt64(&next, 1)
				id := fmt.Sprintf("msg_%d_mem_bench%08d", sequence, sequence)
				body := fmt.Sprintf(`{"type":"membership.grant","timestamp":"%s","data":{"time":"%[1]s","actor":"admin",`+
					`"action":"grant","sequence":%d,"membership":{"id":"mem_bench%08[2]d","productId":"prod_1","user":"wb-%d",`+
					`"status":"active","isActive":true,"createdAt":"%[1]s","expiresAt":null,"willRenew":false,"periodType":"normal",`+
					`"renewState":"non_renewable","renewsCount":0,"environment":"production","ownership":"purchased",`+
					`"grantType":"purchase"}}}`, time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), sequence, sequence%10000)
				stamp := strconv.FormatInt(time.Now().Unix(), 10)
				mac := hmac.New(sha256.New, key)
				mac.Write([]byte(id + "." + stamp + "."))
				mac.Write([]byte(body))
				request, _ := http.NewRequest(http.MethodPost, *url, strings.NewReader(body))
				request.Header.Set("content-type", "application/json")
				request.Header.Set("webhook-id", id)
				request.Header.Set("webhook-timestamp", stamp)
				request.Header.Set("webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
				response, err := client.Do(request)
				if err != nil {
					atomic.AddInt64(&failed, 1)
					continue
				}
				io.Copy(io.Discard, response.Body)
				response.Body.Close()
				if response.StatusCode/100 == 2 {
					atomic.AddInt64(&answered, 1)
				} else {
					atomic.AddInt64(&failed, 1)
				}
			}
		}()
	}
	group.Wait()
	seconds := time.Since(start).Seconds()
	json.NewEncoder(os.Stdout).Encode(map[string]any{"answered": answered, "failed": failed, "seconds": seconds,
		"perSecond": float64(answered) / seconds})
}
