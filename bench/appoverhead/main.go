// Command appoverhead measures what Docket's recipe for not losing calls
// costs the application, against baselines measured in the same run,
// because absolute times on shared machines are not stable:
//
//   - the example app's p99 latency of /ask at a fixed request rate with
//     tracing on (the blocking batch span processor and the span account of
//     examples/llmapp, exporting to docket collector) as a ratio to the same
//     app with tracing off (OTEL_TRACES_SAMPLER=always_off), over
//     interleaved rounds; target ≤ 1.05;
//   - the collector killed mid-load and restarted: the app's error rate and
//     peak memory against the rounds where it stayed up, and the calls the
//     app answered against the ledger's rows once the collector is back
//     (what is missing there is what reconciliation reports missing).
//
// Run after `make build` and `go build -o bin/… ./examples/{llmapp,fakeprovider}`:
//
//	go run ./bench/appoverhead
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
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/docketlabs/docket/bench/internal/procstat"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/storage/chdb"
)

type options struct {
	rate          int
	round         time.Duration
	rounds        int
	outage        bool
	outageRound   time.Duration
	docket, app   string
	provider      string
	timeout       time.Duration
	drainDeadline time.Duration
}

func main() {
	var o options
	flag.IntVar(&o.rate, "rate", 150, "requests per second sent to the app, on a fixed schedule")
	flag.DurationVar(&o.round, "round", 10*time.Second, "length of one round of load")
	flag.IntVar(&o.rounds, "rounds", 4, "interleaved rounds of each of tracing off and on, after one warm-up round that is not counted")
	flag.BoolVar(&o.outage, "outage", true, "also run a round with the collector killed for the middle third")
	flag.DurationVar(&o.outageRound, "outage-round", 30*time.Second, "length of the outage round")
	flag.StringVar(&o.docket, "docket", "bin/docket", "docket binary")
	flag.StringVar(&o.app, "llmapp", "bin/llmapp", "example app binary")
	flag.StringVar(&o.provider, "fakeprovider", "bin/fakeprovider", "fake provider binary")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Second, "time limit of one request; a request over it is an error")
	flag.DurationVar(&o.drainDeadline, "drain", 3*time.Minute, "time the ledger may take to hold every call after a round")
	flag.Parse()
	if err := run(o); err != nil {
		slog.Error("bench failed", "err", err)
		os.Exit(1)
	}
}

// round is one round's result.
type round struct {
	sent, ok, failed int
	p50, p99         time.Duration
	peakRSSKiB       int64
	// cpu is the app's CPU time (user + system) during the load, which
	// other processes on the machine disturb far less than latency.
	cpu time.Duration
	// appLost is the app's own account of spans not exported at exit.
	appLost int64
	// rows is the ledger's calls after the round (outage round only).
	rows int64
}

func run(o options) error {
	dir, err := os.MkdirTemp("", "appoverhead-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	prov, provURL, err := startProvider(o, dir)
	if err != nil {
		return err
	}
	defer stop(prov)
	col, err := startCollector(o, filepath.Join(dir, "steady"))
	if err != nil {
		return err
	}
	// The first round warms the machine, the collector and the page cache.
	if _, err = appRound(o, dir, provURL, col, true, nil); err != nil {
		stop(col.cmd)
		return err
	}
	var off, on []round
	for r := 0; r < o.rounds; r++ {
		// Alternate which goes first, so a trend in the machine's load
		// favours neither.
		order := []bool{r%2 == 1, r%2 == 0}
		for _, tracing := range order {
			res, rerr := appRound(o, dir, provURL, col, tracing, nil)
			if rerr != nil {
				stop(col.cmd)
				return rerr
			}
			if tracing {
				on = append(on, res)
			} else {
				off = append(off, res)
			}
			fmt.Printf("tracing %-3s  sent %d  ok %d  failed %d  p50 %s  p99 %s  app CPU %s  peak RSS %d KiB  app spans not exported %d\n",
				onOff(tracing), res.sent, res.ok, res.failed, res.p50, res.p99, res.cpu, res.peakRSSKiB, res.appLost)
		}
	}
	stop(col.cmd)
	offP99, onP99 := median(off, func(r round) time.Duration { return r.p99 }), median(on, func(r round) time.Duration { return r.p99 })
	ratios := make([]float64, len(on))
	for i := range on {
		ratios[i] = float64(on[i].p99) / float64(off[i].p99)
	}
	slices.Sort(ratios)
	fmt.Printf("\np99 with tracing on / off (medians of %d rounds at %d req/s): %s / %s = %.3f; per-round ratios %.3f (target ≤ 1.05)\n",
		o.rounds, o.rate, onP99, offP99, float64(onP99)/float64(offP99), ratios)
	fmt.Printf("p50 with tracing on / off: %s / %s\n", median(on, func(r round) time.Duration { return r.p50 }), median(off, func(r round) time.Duration { return r.p50 }))
	onCPU, offCPU := median(on, func(r round) time.Duration { return r.cpu }), median(off, func(r round) time.Duration { return r.cpu })
	fmt.Printf("app CPU per request with tracing on / off: %s / %s = %.3f\n", onCPU/time.Duration(on[0].sent), offCPU/time.Duration(off[0].sent), float64(onCPU)/float64(offCPU))
	if !o.outage {
		return nil
	}

	odir := filepath.Join(dir, "outage")
	col, err = startCollector(o, odir)
	if err != nil {
		return err
	}
	oo := o
	oo.round = o.outageRound
	res, err := appRound(oo, dir, provURL, col, true, func(elapsed time.Duration) {
		switch {
		case elapsed >= oo.round/3 && col.cmd != nil && !col.killed:
			_ = col.cmd.Process.Kill()
			_ = col.cmd.Wait()
			col.killed = true
			fmt.Printf("collector killed at %s\n", elapsed.Round(time.Millisecond))
		case elapsed >= 2*oo.round/3 && col.killed && !col.restarted:
			if serr := col.start(); serr != nil {
				slog.Error("restart collector", "err", serr)
			}
			col.restarted = true
			fmt.Printf("collector restarted at %s\n", elapsed.Round(time.Millisecond))
		}
	})
	if err == nil {
		err = col.drain()
	}
	stop(col.cmd)
	if err != nil {
		return err
	}
	if res.rows, err = countLedger(filepath.Join(odir, "ledger")); err != nil {
		return err
	}
	steadyErr := float64(sumOf(on, func(r round) int { return r.failed })) / float64(max(1, sumOf(on, func(r round) int { return r.sent })))
	fmt.Printf("collector killed for the middle third: sent %d  ok %d  failed %d  p99 %s  peak RSS %d KiB  app spans not exported %d\n",
		res.sent, res.ok, res.failed, res.p99, res.peakRSSKiB, res.appLost)
	fmt.Printf("error rate with the outage / steady: %.4f%% / %.4f%%\n", 100*float64(res.failed)/float64(max(1, res.sent)), 100*steadyErr)
	fmt.Printf("peak app RSS with the outage / steady (max of rounds): %d / %d KiB = %.3f\n", res.peakRSSKiB,
		maxOf(on, func(r round) int64 { return r.peakRSSKiB }), float64(res.peakRSSKiB)/float64(maxOf(on, func(r round) int64 { return r.peakRSSKiB })))
	fmt.Printf("calls answered %d, ledger calls %d, missing %d (%.3f%%)\n", res.ok, res.rows, int64(res.ok)-res.rows,
		100*float64(int64(res.ok)-res.rows)/float64(max(1, res.ok)))
	return nil
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// collector is a docket collector process on its own data directory.
type collector struct {
	o                 options
	dir               string
	otlp, metrics     string
	cmd               *exec.Cmd
	killed, restarted bool
}

func startCollector(o options, dir string) (*collector, error) {
	c := &collector{o: o, dir: dir, otlp: freeAddr(), metrics: freeAddr()}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return c, c.start()
}

func (c *collector) start() error {
	cmd := exec.Command(c.o.docket, "collector", "--config", "bench/appoverhead/collector.yaml")
	_, otlpPort, _ := net.SplitHostPort(c.otlp)
	_, metricsPort, _ := net.SplitHostPort(c.metrics)
	cmd.Env = append(os.Environ(), "BENCH_DATA="+c.dir, "BENCH_OTLP_PORT="+otlpPort, "BENCH_METRICS_PORT="+metricsPort)
	logf, err := os.OpenFile(filepath.Join(c.dir, "collector.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start collector: %w", err)
	}
	c.cmd = cmd
	return waitHTTP("http://"+c.metrics+"/metrics", time.Minute)
}

// drain waits until the ledger exporter's queue is empty and every call
// span this process received is written (after a restart it also writes
// what the killed process had queued, so written may exceed received).
func (c *collector) drain() error {
	deadline := time.Now().Add(c.o.drainDeadline)
	for {
		m, err := c.scrape()
		if err == nil && m["queue"] == 0 && m["received"] <= m["written"] {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("ledger not drained within %s: %v (err %w); log in %s", c.o.drainDeadline, m, err, c.dir)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

var (
	stageLine = regexp.MustCompile(`^otelcol_exporter_ledger_completeness_spans(?:_total)?\{[^}]*stage="(received|written)"[^}]*\} (\S+)$`)
	queueLine = regexp.MustCompile(`^otelcol_exporter_queue_size\{[^}]*exporter="ledger"[^}]*\} (\S+)$`)
)

// scrape reads the collector's account of call spans received and written
// (summed over tenants) and the ledger queue's size.
func (c *collector) scrape() (map[string]int64, error) {
	resp, err := http.Get("http://" + c.metrics + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	m := map[string]int64{"queue": -1}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if g := stageLine.FindStringSubmatch(sc.Text()); g != nil {
			n, _ := strconv.ParseFloat(g[2], 64)
			m[g[1]] += int64(n)
		} else if g := queueLine.FindStringSubmatch(sc.Text()); g != nil {
			n, _ := strconv.ParseFloat(g[1], 64)
			m["queue"] = int64(n)
		}
	}
	return m, sc.Err()
}

func startProvider(o options, dir string) (*exec.Cmd, string, error) {
	addr := freeAddr()
	cmd := exec.Command(o.provider, "-listen", addr)
	logf, err := os.Create(filepath.Join(dir, "fakeprovider.log"))
	if err != nil {
		return nil, "", err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("start fake provider: %w", err)
	}
	return cmd, "http://" + addr + "/v1", waitTCP(addr, 30*time.Second)
}

// appRound starts the app, drives one round of load at the fixed rate
// (tick, when set, is called as the round goes on), stops the app and reads
// its account, then waits for the ledger to write every call it received.
func appRound(o options, dir, provURL string, col *collector, tracing bool, tick func(time.Duration)) (round, error) {
	addr := freeAddr()
	cmd := exec.Command(o.app, "-listen", addr, "-otlp-endpoint", col.otlp, "-provider-url", provURL, "-queue", "4096")
	cmd.Env = os.Environ()
	if !tracing {
		cmd.Env = append(cmd.Env, "OTEL_TRACES_SAMPLER=always_off")
	}
	var logBuf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logBuf, &logBuf
	if err := cmd.Start(); err != nil {
		return round{}, fmt.Errorf("start app: %w", err)
	}
	defer stop(cmd)
	if err := waitTCP(addr, 30*time.Second); err != nil {
		return round{}, err
	}
	cpu0 := procstat.CPU(cmd.Process.Pid)
	res := drive(o, "http://"+addr+"/ask", tick)
	res.cpu = procstat.CPU(cmd.Process.Pid) - cpu0
	res.peakRSSKiB = peakRSS(cmd.Process.Pid)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	res.appLost = appLost(logBuf.String())
	if !tracing {
		return res, nil
	}
	return res, col.drain()
}

// drive sends requests on a fixed schedule, each in its own goroutine, and
// times each from when it was due, so a stalled app is not hidden by sending
// less (coordinated omission).
func drive(o options, url string, tick func(time.Duration)) round {
	client := &http.Client{Timeout: o.timeout, Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	n := int(o.round.Seconds() * float64(o.rate))
	interval := time.Second / time.Duration(o.rate)
	lat := make([]time.Duration, n)
	failed := make([]bool, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < n; i++ {
		due := start.Add(time.Duration(i) * interval)
		time.Sleep(time.Until(due))
		if tick != nil {
			tick(time.Since(start))
		}
		wg.Go(func() {
			body, _ := json.Marshal(map[string]string{"user": fmt.Sprintf("user%04d@example.com", i%1000), "question": fmt.Sprintf("Where is my order %d?", i)})
			resp, err := client.Post(url, "application/json", bytes.NewReader(body))
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					err = errors.New(resp.Status)
				}
			}
			lat[i], failed[i] = time.Since(due), err != nil
		})
	}
	wg.Wait()
	client.CloseIdleConnections()
	res := round{sent: n}
	var oks []time.Duration
	for i := range n {
		if failed[i] {
			res.failed++
			continue
		}
		oks = append(oks, lat[i])
	}
	res.ok = len(oks)
	slices.Sort(oks)
	if len(oks) > 0 {
		res.p50, res.p99 = oks[len(oks)/2], oks[min(len(oks)-1, len(oks)*99/100)]
	}
	return res
}

// peakRSS is the process's high-water resident memory.
func peakRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return -1
}

var notExported = regexp.MustCompile(`spans not exported .*not_exported=(\d+)`)

// appLost is the app's exit account of spans it ended and never delivered.
func appLost(log string) int64 {
	m := notExported.FindStringSubmatch(log)
	if m == nil {
		return -1
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

func countLedger(path string) (int64, error) {
	eng, err := chdb.Open(path)
	if err != nil {
		return 0, fmt.Errorf("open ledger: %w", err)
	}
	defer func() { _ = eng.Close() }()
	c, err := ledgerstore.New(eng).CountCalls(context.Background())
	return int64(c.Calls), err
}

func median(rs []round, f func(round) time.Duration) time.Duration {
	v := make([]time.Duration, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	slices.Sort(v)
	if len(v)%2 == 0 {
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return v[len(v)/2]
}

func sumOf(rs []round, f func(round) int) int {
	n := 0
	for _, r := range rs {
		n += f(r)
	}
	return n
}

func maxOf(rs []round, f func(round) int64) int64 {
	var m int64 = 1
	for _, r := range rs {
		m = max(m, f(r))
	}
	return m
}

func stop(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil || cmd.ProcessState != nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(90 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

func waitTCP(addr string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not listening: %w", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func waitHTTP(url string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not answering: %w", url, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
