// Command appoverhead measures what Docket's recipe for not losing calls
// costs the application, against baselines measured in the same run,
// because absolute times on shared machines are not stable:
//
//   - the example app's p99 latency of /ask at a fixed request rate with
//     tracing on (the blocking batch span processor and the span account of
//     examples/llmapp, exporting to docket collector) as a ratio to the same
//     app with tracing off (OTEL_TRACES_SAMPLER=always_off); target ≤ 1.05.
//     Both apps run for the whole measurement, warm, with the same
//     GOMAXPROCS, and take the load in many short rounds, alternately
//     (on-off, off-on, …), so that a change in the machine's load falls on
//     every arm alike. The collector works behind the traced app (a batch
//     every 100 ms from the app, an insert every flush_timeout), and shares
//     the cores with it: each round therefore counts its requests only
//     after a warm-in, once that work runs as under steady load, and the
//     next round starts only when the ledger has written what the collector
//     received, so that none of it falls on the untraced app's rounds.
//     Each arm's p99 is over its rounds pooled; the ratio is also given per
//     block of consecutive rounds (median and range), which shows how far
//     the machine let it move, and as the median of the rounds' own p99s,
//     which a stall from outside in a few rounds hardly moves; beside it
//     each arm's CPU time per request, its threads' wait for a core (run
//     delay) per request and the collector's CPU during its rounds, which
//     other processes disturb far less. Further traced arms (-variant) take
//     their turn in the same rounds, the order rotating: the app with other
//     settings, or with a collector of its own in the scheduler's idle class
//     (-idle-collector) or at nice 19, which models a collector that does
//     not compete with the app for the cores, as on a host of its own;
//   - the collector killed mid-load and restarted: the app's error rate and
//     peak memory against the rounds where it stayed up, and the calls the
//     app answered against the ledger's rows once the collector is back
//     (what is missing there is what reconciliation reports missing).
//
// Run after `make build` and `go build -o bin/… ./examples/{llmapp,fakeprovider}`,
// on a machine otherwise idle:
//
//	go run ./bench/appoverhead -rate 150 -round 4s -rounds 20 -blocks 4 -gomaxprocs 2
//
// (about 10 minutes, and 5 more per further arm; -pprof DIR also writes
// every app's CPU profile). The fake provider answers in about a
// millisecond, so the app's latency is nearly all its own work and its
// instrumentation's: the worst case for the ratio. -provider-latency gives
// every answer a model's generation time instead (the app then runs enough
// workers for the calls in flight).
package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/docketlabs/docket/bench/internal/ledgermetrics"
	"github.com/docketlabs/docket/bench/internal/procstat"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/storage/chdb"
)

type options struct {
	rate          int
	round         time.Duration
	rounds        int
	blocks        int
	gomaxprocs    int
	warmIn        time.Duration
	settle        time.Duration
	outage        bool
	outageRound   time.Duration
	docket, app   string
	provider      string
	timeout       time.Duration
	drainDeadline time.Duration
	pprofDir      string
	// providerLatency is how long the fake provider takes per answer.
	providerLatency time.Duration
	variants        []variant
}

// variant is a further traced arm: the app with other settings or binary,
// or its own collector at a lower CPU priority, measured in the same
// rounds as the others so that its ratio to the untraced app is comparable.
type variant struct {
	name string
	// args and env are added to the app's; app replaces its binary.
	args, env []string
	app       string
	// priority runs the arm's collector as the scheduler's "idle" class
	// or at nice 19, to model a collector that does not compete with the
	// app for the cores (as on a host of its own), or confined to one core
	// ("core", as a cpuset would), so that its bursts leave the app the
	// other; empty shares the collector of the plain traced arm.
	priority string
	// docket gives the arm a collector of its own from that binary.
	docket string
}

// parseVariant reads NAME:TOKEN…, each token -flag=value (an app flag),
// KEY=VALUE (app environment), llmapp=PATH (the app's binary), docket=PATH
// (its own collector from that binary) or
// collector=idle|nice|core (its own collector at that priority, or on one
// core).
func parseVariant(s string) (variant, error) {
	name, spec, ok := strings.Cut(s, ":")
	if !ok || name == "" {
		return variant{}, fmt.Errorf("variant %q: want NAME:TOKEN…", s)
	}
	v := variant{name: name}
	for _, tok := range strings.Fields(spec) {
		key, val, _ := strings.Cut(tok, "=")
		switch {
		case strings.HasPrefix(tok, "-"):
			v.args = append(v.args, tok)
		case key == "llmapp":
			v.app = val
		case key == "docket":
			v.docket = val
		case key == "collector" && (val == "idle" || val == "nice" || val == "core"):
			v.priority = val
		case key != "" && val != "":
			v.env = append(v.env, tok)
		default:
			return variant{}, fmt.Errorf("variant %q: token %q is none of -flag=value, KEY=VALUE, llmapp=PATH, docket=PATH, collector=idle|nice|core", s, tok)
		}
	}
	return v, nil
}

func main() {
	var o options
	flag.IntVar(&o.rate, "rate", 150, "requests per second sent to the app, on a fixed schedule")
	flag.DurationVar(&o.round, "round", 4*time.Second, "counted length of one round of load on one arm (after -warm-in)")
	flag.IntVar(&o.rounds, "rounds", 20, "rounds of each of tracing off and on, alternating, after one warm-up round of each that is not counted")
	flag.IntVar(&o.blocks, "blocks", 4, "blocks of consecutive rounds, each giving one p99 ratio, for the spread")
	flag.IntVar(&o.gomaxprocs, "gomaxprocs", 2, "GOMAXPROCS of both apps")
	flag.DurationVar(&o.warmIn, "warm-in", 6*time.Second, "load at the start of each round that is not counted, so that the collector's work behind the app has reached its steady state: at least the app's batch timeout (100 ms) plus the ledger's flush_timeout (5 s in collector.yaml)")
	flag.DurationVar(&o.settle, "settle", 1500*time.Millisecond, "pause after each round before the collector is waited for; longer than the app's batch timeout (100 ms) and its export, so that its last spans have reached the collector")
	flag.BoolVar(&o.outage, "outage", true, "also run a round with the collector killed for the middle third")
	flag.DurationVar(&o.outageRound, "outage-round", 30*time.Second, "length of the outage round")
	flag.StringVar(&o.docket, "docket", "bin/docket", "docket binary")
	flag.StringVar(&o.app, "llmapp", "bin/llmapp", "example app binary")
	flag.StringVar(&o.provider, "fakeprovider", "bin/fakeprovider", "fake provider binary")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Second, "time limit of one request; a request over it is an error")
	flag.DurationVar(&o.drainDeadline, "drain", 3*time.Minute, "time the ledger may take to hold every call after a round")
	flag.DurationVar(&o.providerLatency, "provider-latency", 0, "time the fake provider takes for every answer, as a model's generation does; 0 answers at once (about 1 ms), which leaves the app's own and its instrumentation's work as the whole latency")
	flag.StringVar(&o.pprofDir, "pprof", "", "directory to write each app's CPU profile of the counted rounds to (cpu-on.pprof, cpu-off.pprof); empty: none")
	idleCollector := flag.Bool("idle-collector", false, "also measure a traced arm whose collector runs in the scheduler's idle class, as a collector that does not compete with the app for the cores would (short for -variant 'on-idle-collector:collector=idle')")
	flag.Func("variant", "a further traced arm, NAME:TOKEN… with tokens -flag=value (app flag), KEY=VALUE (app environment), llmapp=PATH (app binary), docket=PATH (its own collector from that binary), collector=idle|nice|core (its own collector at that CPU priority, or confined to the machine's last core); repeatable", func(s string) error {
		v, err := parseVariant(s)
		o.variants = append(o.variants, v)
		return err
	})
	flag.Parse()
	if *idleCollector {
		o.variants = append(o.variants, variant{name: "on-idle-collector", priority: "idle"})
	}
	if o.rate < 1 || o.rounds < 1 || o.blocks < 1 || o.blocks > o.rounds || o.gomaxprocs < 1 || o.providerLatency < 0 {
		slog.Error("-rate, -rounds, -blocks and -gomaxprocs must be ≥ 1, -blocks ≤ -rounds, -provider-latency ≥ 0")
		os.Exit(2)
	}
	if err := run(o); err != nil {
		slog.Error("bench failed", "err", err)
		os.Exit(1)
	}
}

// round is one round's result.
type round struct {
	sent, ok, failed int
	// load is the requests sent, the uncounted warm-in included.
	load     int
	p50, p99 time.Duration
	// lat holds the answered requests' latencies, sorted.
	lat        []time.Duration
	peakRSSKiB int64
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
	col, err := startCollector(o, filepath.Join(dir, "steady"), "", o.docket)
	if err != nil {
		return err
	}
	fmt.Printf("load average at start: %s\n", loadavg())
	on, err := steady(o, provURL, dir, col)
	if err != nil {
		stop(col.cmd)
		return err
	}
	fmt.Printf("load average at end: %s\n", loadavg())
	stop(col.cmd)
	if !o.outage {
		return nil
	}

	odir := filepath.Join(dir, "outage")
	col, err = startCollector(o, odir, "", o.docket)
	if err != nil {
		return err
	}
	oo := o
	oo.round = o.outageRound
	oo.warmIn = 0
	res, err := appRound(oo, provURL, col, true, func(elapsed time.Duration) {
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
	steadyErr := float64(on.failed) / float64(max(1, on.sent))
	fmt.Printf("collector killed for the middle third: sent %d  ok %d  failed %d  p99 %s  peak RSS %d KiB  app spans not exported %d\n",
		res.sent, res.ok, res.failed, res.p99, res.peakRSSKiB, res.appLost)
	fmt.Printf("error rate with the outage / steady: %.4f%% / %.4f%%\n", 100*float64(res.failed)/float64(max(1, res.sent)), 100*steadyErr)
	fmt.Printf("peak app RSS with the outage / steady: %d / %d KiB = %.3f\n", res.peakRSSKiB,
		on.peakRSSKiB, float64(res.peakRSSKiB)/float64(max(1, on.peakRSSKiB)))
	fmt.Printf("calls answered %d, ledger calls %d, missing %d (%.3f%%)\n", res.ok, res.rows, int64(res.ok)-res.rows,
		100*float64(int64(res.ok)-res.rows)/float64(max(1, res.ok)))
	return nil
}

// collector is a docket collector process on its own data directory.
type collector struct {
	o             options
	dir           string
	otlp, metrics string
	// priority is the CPU priority it runs at (see variant).
	priority string
	// bin is the docket binary it runs.
	bin               string
	cmd               *exec.Cmd
	killed, restarted bool
}

func startCollector(o options, dir, priority, bin string) (*collector, error) {
	c := &collector{o: o, dir: dir, otlp: freeAddr(), metrics: freeAddr(), priority: priority, bin: bin}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return c, c.start()
}

func (c *collector) start() error {
	cmd := exec.Command(c.bin, "collector", "--config", "bench/appoverhead/collector.yaml")
	_, otlpPort, _ := net.SplitHostPort(c.otlp)
	_, metricsPort, _ := net.SplitHostPort(c.metrics)
	cmd.Env = append(os.Environ(), "BENCH_DATA="+c.dir, "BENCH_OTLP_PORT="+otlpPort, "BENCH_METRICS_PORT="+metricsPort)
	logf, err := os.OpenFile(filepath.Join(c.dir, "collector.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := startAtPriority(cmd, c.priority); err != nil {
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
		a, err := ledgermetrics.Scrape("http://" + c.metrics + "/metrics")
		if err == nil && a.Queue == 0 && a.Received <= a.Written {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("ledger not drained within %s: %+v (err %w); log in %s", c.o.drainDeadline, a, err, c.dir)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// startAtPriority starts cmd in the scheduler's idle class ("idle"), at
// nice 19 ("nice"), on the machine's last core ("core") or as the bench
// runs (""). A child inherits each from
// the thread that forks it: that thread is lowered and locked to its
// goroutine, which exits without unlocking, so that the runtime ends the
// thread rather than run other goroutines at the lowered priority.
func startAtPriority(cmd *exec.Cmd, priority string) error {
	if priority == "" {
		return cmd.Start()
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		var err error
		switch priority {
		case "idle":
			err = unix.SchedSetAttr(0, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_IDLE}, 0)
		case "nice":
			err = unix.Setpriority(unix.PRIO_PROCESS, 0, 19)
		case "core":
			var set unix.CPUSet
			set.Set(runtime.NumCPU() - 1)
			err = unix.SchedSetaffinity(0, &set)
		default:
			err = fmt.Errorf("unknown priority %q", priority)
		}
		if err != nil {
			errc <- fmt.Errorf("lower priority to %s: %w", priority, err)
			return
		}
		errc <- cmd.Start()
	}()
	return <-errc
}

func startProvider(o options, dir string) (*exec.Cmd, string, error) {
	addr := freeAddr()
	cmd := exec.Command(o.provider, "-listen", addr, "-latency", o.providerLatency.String())
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

// workers is the app's worker count: its default of 8, and with a slow
// provider as many more as the calls in flight at the rate need (half as
// many again, for bursts), so that the provider's latency does not queue
// requests in the app.
func (o options) workers() int {
	return 8 + int(math.Ceil(1.5*float64(o.rate)*o.providerLatency.Seconds()))
}

// app is one example app process.
type app struct {
	cmd    *exec.Cmd
	url    string
	pprof  string // the app's pprof address, when profiled
	log    bytes.Buffer
	client *http.Client
}

// startApp starts the example app exporting to col, with tracing on or
// off and the settings of v, and waits until it listens.
func startApp(o options, provURL string, col *collector, tracing bool, v variant) (*app, error) {
	addr := freeAddr()
	a := &app{url: "http://" + addr + "/ask",
		client: &http.Client{Timeout: o.timeout, Transport: &http.Transport{MaxIdleConnsPerHost: 256}}}
	a.cmd = exec.Command(cmp.Or(v.app, o.app), "-listen", addr, "-otlp-endpoint", col.otlp, "-provider-url", provURL,
		"-queue", "4096", "-workers", strconv.Itoa(o.workers()))
	if o.pprofDir != "" {
		a.pprof = freeAddr()
		a.cmd.Args = append(a.cmd.Args, "-pprof", a.pprof)
	}
	a.cmd.Args = append(a.cmd.Args, v.args...)
	a.cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(o.gomaxprocs))
	if !tracing {
		a.cmd.Env = append(a.cmd.Env, "OTEL_TRACES_SAMPLER=always_off")
	}
	a.cmd.Env = append(a.cmd.Env, v.env...)
	a.cmd.Stdout, a.cmd.Stderr = &a.log, &a.log
	if err := a.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start app: %w", err)
	}
	if err := waitTCP(addr, 30*time.Second); err != nil {
		stop(a.cmd)
		return nil, err
	}
	return a, nil
}

func (a *app) cpu() time.Duration { return procstat.CPU(a.cmd.Process.Pid) }

// profile writes the app's CPU profile of the next d to path.
func (a *app) profile(d time.Duration, path string) error {
	url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", a.pprof, int(d.Seconds()))
	resp, err := (&http.Client{Timeout: d + time.Minute}).Get(url)
	if err != nil {
		return fmt.Errorf("profile app: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile app: %s", resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return fmt.Errorf("profile app: %w", err)
	}
	return f.Close()
}

// stop stops the app and returns its peak memory and its exit account of
// spans not exported.
func (a *app) stop() (peakRSSKiB, lost int64) {
	peakRSSKiB = peakRSS(a.cmd.Process.Pid)
	stop(a.cmd)
	a.client.CloseIdleConnections()
	return peakRSSKiB, appLost(a.log.String())
}

// arm is one side of the steady measurement: one app and its rounds.
type arm struct {
	name    string
	tracing bool
	v       variant
	col     *collector
	app     *app
	rounds  []round
	cpu     time.Duration
	// wait is the app's run delay: its threads' time waiting for a core.
	wait time.Duration
	// colCPU is the arm's collector's CPU time during its rounds (and the
	// settle after each): what competes with the app for the cores.
	colCPU time.Duration
}

// steady measures the p99 and CPU ratios (see the package comment) and
// returns the plain tracing arm's totals, the baseline of the outage
// round. Variants with a collector of their own get one in dir.
func steady(o options, provURL, dir string, col *collector) (round, error) {
	arms := []*arm{{name: "off", col: col}, {name: "on", tracing: true, col: col}}
	cols := []*collector{col}
	defer func() {
		for _, a := range arms {
			if a.app != nil && a.app.cmd.ProcessState == nil {
				a.app.stop()
			}
		}
		for _, c := range cols[1:] {
			stop(c.cmd)
		}
	}()
	for _, v := range o.variants {
		a := &arm{name: v.name, tracing: true, v: v, col: col}
		if v.priority != "" || v.docket != "" {
			c, err := startCollector(o, filepath.Join(dir, "steady-"+v.name), v.priority, cmp.Or(v.docket, o.docket))
			if err != nil {
				return round{}, err
			}
			a.col = c
			cols = append(cols, c)
		}
		arms = append(arms, a)
	}
	for _, a := range arms {
		var err error
		if a.app, err = startApp(o, provURL, a.col, a.tracing, a.v); err != nil {
			return round{}, err
		}
	}
	// One round each warms the apps, the collectors and the page cache.
	for _, a := range arms {
		drive(o, a.app, nil)
		if err := quiesce(o, cols); err != nil {
			return round{}, err
		}
	}
	cpu0, wait0 := make([]time.Duration, len(arms)), make([]time.Duration, len(arms))
	for i, a := range arms {
		cpu0[i], wait0[i] = a.app.cpu(), procstat.RunDelay(a.app.cmd.Process.Pid)
	}
	var profiles sync.WaitGroup
	if o.pprofDir != "" {
		// Every profile spans the counted rounds, the arm's own and the
		// others' alike.
		d := time.Duration(o.rounds*len(arms)) * (o.warmIn + o.round + o.settle)
		for _, a := range arms {
			profiles.Go(func() {
				if err := a.app.profile(d, filepath.Join(o.pprofDir, "cpu-"+a.name+".pprof")); err != nil {
					slog.Error("profile", "err", err)
				}
			})
		}
	}
	for r := range o.rounds {
		// Each arm takes each place in the order equally often.
		for i := range arms {
			a := arms[(i+r)%len(arms)]
			c0 := procstat.CPU(a.col.cmd.Process.Pid)
			a.rounds = append(a.rounds, drive(o, a.app, nil))
			if err := quiesce(o, cols); err != nil {
				return round{}, err
			}
			a.colCPU += procstat.CPU(a.col.cmd.Process.Pid) - c0
		}
	}
	for i, a := range arms {
		a.cpu, a.wait = a.app.cpu()-cpu0[i], procstat.RunDelay(a.app.cmd.Process.Pid)-wait0[i]
	}
	profiles.Wait()
	total := make([]round, len(arms))
	for i, a := range arms {
		total[i] = pool(a.rounds)
		total[i].peakRSSKiB, total[i].appLost = a.app.stop()
	}
	for _, c := range cols {
		if err := c.drain(); err != nil {
			return round{}, err
		}
	}
	perRequest := func(i int) time.Duration { return arms[i].cpu / time.Duration(max(1, total[i].load)) }
	for i, t := range total {
		fmt.Printf("tracing %-3s  sent %d  ok %d  failed %d  p50 %s  p99 %s  app CPU %s per request  peak RSS %d KiB  app spans not exported %d\n",
			arms[i].name, t.sent, t.ok, t.failed, t.p50, t.p99, perRequest(i), t.peakRSSKiB, t.appLost)
	}
	for _, a := range arms {
		p99s := make([]string, len(a.rounds))
		for r, rd := range a.rounds {
			p99s[r] = fmt.Sprintf("%.1f", float64(rd.p99)/float64(time.Millisecond))
		}
		fmt.Printf("rounds' p99 (ms), tracing %s: %s\n", a.name, strings.Join(p99s, " "))
	}
	off := total[0]
	for i := 1; i < len(arms); i++ {
		on := total[i]
		ratios := make([]float64, o.blocks)
		for b := range o.blocks {
			from, to := b*o.rounds/o.blocks, (b+1)*o.rounds/o.blocks
			ratios[b] = float64(pool(arms[i].rounds[from:to]).p99) / float64(max(1, pool(arms[0].rounds[from:to]).p99))
		}
		slices.Sort(ratios)
		fmt.Printf("\np99 with tracing %s / off (%d rotating %s rounds each at %d req/s, provider latency %s, pooled, GOMAXPROCS=%d): %s / %s = %.3f (target ≤ 1.05)\n",
			arms[i].name, o.rounds, o.round, o.rate, o.providerLatency, o.gomaxprocs, on.p99, off.p99, float64(on.p99)/float64(max(1, off.p99)))
		fmt.Printf("p99 ratio per block of %d rounds: median %.3f, range %.3f–%.3f; all %.3f\n",
			o.rounds/o.blocks, medianOf(ratios), ratios[0], ratios[len(ratios)-1], ratios)
		fmt.Printf("median of the rounds' p99 with tracing %s / off: %s / %s = %.3f\n", arms[i].name,
			medianP99(arms[i].rounds), medianP99(arms[0].rounds), float64(medianP99(arms[i].rounds))/float64(max(1, medianP99(arms[0].rounds))))
		fmt.Printf("p50 with tracing %s / off: %s / %s\n", arms[i].name, on.p50, off.p50)
		fmt.Printf("app CPU per request with tracing %s / off: %s / %s = %.3f\n",
			arms[i].name, perRequest(i), perRequest(0), float64(perRequest(i))/float64(max(1, perRequest(0))))
		fmt.Printf("app's wait for a core per request with tracing %s / off: %s / %s\n", arms[i].name,
			arms[i].wait/time.Duration(max(1, on.load)), arms[0].wait/time.Duration(max(1, off.load)))
		fmt.Printf("collector CPU per request during tracing %s / off rounds: %s / %s\n",
			arms[i].name, arms[i].colCPU/time.Duration(max(1, on.load)), arms[0].colCPU/time.Duration(max(1, off.load)))
	}
	return total[1], nil
}

// pool is the rounds as one: their counts summed, percentiles over all
// their latencies.
func pool(rs []round) round {
	var p round
	for _, r := range rs {
		p.sent += r.sent
		p.load += r.load
		p.ok += r.ok
		p.failed += r.failed
		p.lat = append(p.lat, r.lat...)
	}
	slices.Sort(p.lat)
	p.p50, p.p99 = percentiles(p.lat)
	return p
}

func percentiles(sorted []time.Duration) (p50, p99 time.Duration) {
	if len(sorted) == 0 {
		return 0, 0
	}
	return sorted[len(sorted)/2], sorted[min(len(sorted)-1, len(sorted)*99/100)]
}

// medianP99 is the median of the rounds' own p99s: a stall from outside
// that lands in a few rounds moves the pooled p99 but hardly this.
func medianP99(rs []round) time.Duration {
	p := make([]float64, len(rs))
	for i, r := range rs {
		p[i] = float64(r.p99)
	}
	slices.Sort(p)
	return time.Duration(medianOf(p))
}

func medianOf(sorted []float64) float64 {
	if len(sorted)%2 == 0 {
		return (sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2
	}
	return sorted[len(sorted)/2]
}

// quiesce waits after a round until the app's last spans have reached the
// collector (settle) and the ledger has written what it received, so that
// the collector's work behind one arm's round does not fall on the next
// round, which may be the other arm's.
func quiesce(o options, cols []*collector) error {
	time.Sleep(o.settle)
	for _, c := range cols {
		if err := c.drain(); err != nil {
			return err
		}
	}
	return nil
}

// loadavg is the machine's load average (1, 5 and 15 minutes).
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// appRound starts the app, drives one round of load at the fixed rate
// (tick, when set, is called as the round goes on), stops the app and reads
// its account, then waits for the ledger to write every call it received.
func appRound(o options, provURL string, col *collector, tracing bool, tick func(time.Duration)) (round, error) {
	a, err := startApp(o, provURL, col, tracing, variant{})
	if err != nil {
		return round{}, err
	}
	cpu0 := a.cpu()
	res := drive(o, a, tick)
	res.cpu = a.cpu() - cpu0
	res.peakRSSKiB, res.appLost = a.stop()
	if !tracing {
		return res, nil
	}
	return res, col.drain()
}

// drive sends requests on a fixed schedule, each in its own goroutine, and
// times each from when it was due, so a stalled app is not hidden by sending
// less (coordinated omission). The requests of the warm-in are sent but not
// counted.
func drive(o options, a *app, tick func(time.Duration)) round {
	uncounted := int(o.warmIn.Seconds() * float64(o.rate))
	n := uncounted + int(o.round.Seconds()*float64(o.rate))
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
			resp, err := a.client.Post(a.url, "application/json", bytes.NewReader(body))
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
	res := round{sent: n - uncounted, load: n}
	for i := uncounted; i < n; i++ {
		if failed[i] {
			res.failed++
			continue
		}
		res.lat = append(res.lat, lat[i])
	}
	res.ok = len(res.lat)
	slices.Sort(res.lat)
	res.p50, res.p99 = percentiles(res.lat)
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
