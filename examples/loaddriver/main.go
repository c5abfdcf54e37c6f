// Command loaddriver sends questions to llmapp's POST /ask with bounded
// concurrency, count and time, and reports what came back, including how many
// distinct trace IDs the app returned, so that every request can be looked up
// afterwards.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		slog.Error("loaddriver", "err", err)
		os.Exit(1)
	}
}

type options struct {
	target         *url.URL
	requests       int
	concurrency    int
	duration       time.Duration
	requestTimeout time.Duration
	users          int
	seed           uint64
	traceIDsFile   string
}

func parseOptions(args []string) (options, error) {
	fs := flag.NewFlagSet("loaddriver", flag.ContinueOnError)
	var (
		target      = fs.String("url", "http://127.0.0.1:8090/ask", "llmapp /ask endpoint")
		requests    = fs.Int("n", 10000, "requests to send")
		concurrency = fs.Int("c", 16, "requests in flight at most")
		duration    = fs.Duration("duration", 10*time.Minute, "stop sending after this long")
		timeout     = fs.Duration("timeout", 60*time.Second, "time limit of one request")
		users       = fs.Int("users", 1000, "distinct users user0000@example.com … (llmapp seeds 1000)")
		seed        = fs.Uint64("seed", 1, "seed for the choice of users and questions")
		traceIDs    = fs.String("trace-ids", "", "write the returned trace IDs to this file, one per line")
		allowRemote = fs.Bool("allow-remote", false, "allow a target that is not a loopback address")
	)
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	u, err := checkTarget(*target, *allowRemote)
	if err != nil {
		return options{}, err
	}
	if *requests < 1 || *concurrency < 1 || *users < 1 || *duration <= 0 || *timeout <= 0 {
		return options{}, errors.New("-n, -c and -users must be ≥ 1; -duration and -timeout > 0")
	}
	return options{
		target: u, requests: *requests, concurrency: *concurrency, duration: *duration,
		requestTimeout: *timeout, users: *users, seed: *seed, traceIDsFile: *traceIDs,
	}, nil
}

// checkTarget accepts http(s) URLs whose host is a loopback address unless
// remote targets are allowed: a load test aimed at the wrong host is an attack.
func checkTarget(raw string, allowRemote bool) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("-url must be an http(s) URL, got %q", raw)
	}
	if allowRemote {
		return u, nil
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); host == "localhost" || (err == nil && ip.IsLoopback()) {
		return u, nil
	}
	return nil, fmt.Errorf("-url host %q is not a loopback address; pass -allow-remote to target it", host)
}

func run(args []string, out io.Writer) error {
	opts, err := parseOptions(args)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, opts.duration)
	defer cancel()

	client := &http.Client{
		Timeout: opts.requestTimeout,
		// Keep one connection per worker instead of opening (and leaving in
		// TIME_WAIT) one per request.
		Transport: &http.Transport{MaxIdleConnsPerHost: opts.concurrency, MaxConnsPerHost: opts.concurrency},
	}
	res := drive(ctx, client, opts)
	res.report(out)
	if opts.traceIDsFile != "" {
		if err := writeTraceIDs(opts.traceIDsFile, res.traceIDs); err != nil {
			return err
		}
	}
	if res.ok == 0 {
		return errors.New("no request succeeded")
	}
	return nil
}

// results are the counts of one run.
type results struct {
	sent, ok      int
	byStatus      map[int]int // non-2xx answers
	transportErrs int
	elapsed       time.Duration
	latencies     []time.Duration
	traceIDs      map[string]struct{} // distinct IDs returned
	missingTrace  int                 // answers without a trace ID
	mismatched    int                 // body and traceresponse header disagree
	stoppedEarly  bool
}

func drive(ctx context.Context, client *http.Client, opts options) *results {
	res := &results{byStatus: map[int]int{}, traceIDs: map[string]struct{}{}}
	var mu sync.Mutex
	next := make(chan askRequest)
	go func() {
		defer close(next)
		rng := rand.New(rand.NewPCG(opts.seed, 0))
		for range opts.requests {
			select {
			case next <- randomAsk(rng, opts.users):
			case <-ctx.Done():
				return
			}
		}
	}()

	start := time.Now()
	var wg sync.WaitGroup
	for range opts.concurrency {
		wg.Go(func() {
			for ask := range next {
				o := send(ctx, client, opts.target.String(), ask)
				mu.Lock()
				res.add(o)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	res.stoppedEarly = res.sent < opts.requests
	return res
}

type askRequest struct {
	User     string `json:"user"`
	Question string `json:"question"`
}

var (
	questionTemplates = []string{
		"How do I %s?", "Can I %s from my phone?", "What happens when I %s?",
		"I tried to %s and it did not work. What should I do?", "Is there a limit when I %s?",
	}
	tasks = []string{
		"reset my password", "enable two-factor authentication", "change my billing plan",
		"get a refund for my annual plan", "export my data as CSV", "buy extra storage",
		"download an invoice", "add a team member", "delete my account", "change my time zone",
	}
)

func randomAsk(rng *rand.Rand, users int) askRequest {
	return askRequest{
		User:     fmt.Sprintf("user%04d@example.com", rng.IntN(users)),
		Question: fmt.Sprintf(questionTemplates[rng.IntN(len(questionTemplates))], tasks[rng.IntN(len(tasks))]),
	}
}

// outcome is what one request gave.
type outcome struct {
	status        int // 0 when no HTTP answer came
	latency       time.Duration
	bodyTraceID   string
	headerTraceID string
}

func send(ctx context.Context, client *http.Client, target string, ask askRequest) outcome {
	body, _ := json.Marshal(ask) // two strings: cannot fail
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return outcome{}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return outcome{latency: time.Since(start)}
	}
	defer resp.Body.Close()
	var answer struct {
		TraceID string `json:"trace_id"`
	}
	_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&answer)
	_, _ = io.Copy(io.Discard, resp.Body) // lets the connection be reused
	return outcome{
		status:        resp.StatusCode,
		latency:       time.Since(start),
		bodyTraceID:   answer.TraceID,
		headerTraceID: traceIDFromTraceresponse(resp.Header.Get("traceresponse")),
	}
}

// traceIDFromTraceresponse returns the trace-id field of a W3C
// "version-traceid-spanid-flags" header, or "".
func traceIDFromTraceresponse(h string) string {
	parts := strings.Split(h, "-")
	if len(parts) != 4 || len(parts[1]) != 32 {
		return ""
	}
	return parts[1]
}

func (r *results) add(o outcome) {
	r.sent++
	switch {
	case o.status == 0:
		r.transportErrs++
		return
	case o.status/100 == 2:
		r.ok++
		r.latencies = append(r.latencies, o.latency)
	default:
		r.byStatus[o.status]++
	}
	switch {
	case o.bodyTraceID == "":
		r.missingTrace++
	case o.bodyTraceID != o.headerTraceID:
		r.mismatched++
	default:
		r.traceIDs[o.bodyTraceID] = struct{}{}
	}
}

func (r *results) report(w io.Writer) {
	failed := r.sent - r.ok
	fmt.Fprintf(w, "sent %d  ok %d  failed %d", r.sent, r.ok, failed)
	for _, status := range slices.Sorted(maps.Keys(r.byStatus)) {
		fmt.Fprintf(w, "  http_%d=%d", status, r.byStatus[status])
	}
	if r.transportErrs > 0 {
		fmt.Fprintf(w, "  transport_errors=%d", r.transportErrs)
	}
	fmt.Fprintln(w)
	rate := 0.0
	if r.elapsed > 0 {
		rate = float64(r.sent) / r.elapsed.Seconds()
	}
	fmt.Fprintf(w, "elapsed %s  %.1f req/s\n", r.elapsed.Round(time.Millisecond), rate)
	if len(r.latencies) > 0 {
		slices.Sort(r.latencies)
		fmt.Fprintf(w, "latency of ok requests: p50 %s  p95 %s  p99 %s  max %s\n",
			percentile(r.latencies, 50), percentile(r.latencies, 95), percentile(r.latencies, 99), r.latencies[len(r.latencies)-1])
	}
	fmt.Fprintf(w, "trace ids %d distinct  missing %d  header/body mismatch %d\n", len(r.traceIDs), r.missingTrace, r.mismatched)
	if r.stoppedEarly {
		fmt.Fprintln(w, "stopped early: time limit or interrupt")
	}
}

// percentile returns the p-th percentile (nearest rank) of sorted durations.
func percentile(sorted []time.Duration, p int) time.Duration {
	i := (len(sorted)*p + 99) / 100
	return sorted[max(i-1, 0)].Round(time.Microsecond)
}

func writeTraceIDs(path string, ids map[string]struct{}) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("trace ids: %w", err)
	}
	w := bufio.NewWriter(f)
	for _, id := range slices.Sorted(maps.Keys(ids)) {
		fmt.Fprintln(w, id)
	}
	if err := w.Flush(); err != nil {
		_ = f.Close()
		return fmt.Errorf("trace ids: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("trace ids: %w", err)
	}
	return nil
}
