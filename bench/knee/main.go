// Command knee finds the ingest load knee of docket collector with content
// on: the rate of LLM calls per second at which the p95 acknowledgement
// latency of OTLP/gRPC requests passes 1 s. It starts the demo pipeline
// (bench/appoverhead/collector.yaml: sqlsanitizer, contentref with the
// directory content store, the ledger with its persistent queue) and sends
// calls whose prompt and answer the content store takes, on a fixed
// schedule, in steps of rising rate; each request is timed from when it was
// due, so a stalled collector is not hidden by sending less.
//
//	go run ./bench/knee -rates 400,800,1200,1600,2000,2400,3200
//
// An acknowledged call is durable in the ledger's persistent queue, not yet
// in the ledger: after the steps the bench waits (-drain) until the ledger
// has written every acknowledged call and reports how long that took: a
// ledger that falls behind the steps shows as a long wait, its backlog
// held in the queue.
//
// Where the data directory is on ext4 without a journal, runs interfere:
// each ends by deleting the content files it wrote, and the kernel's inode
// allocation then scans past recently freed inodes (recently_deleted in
// fs/ext4/ialloc.c). On a fresh such filesystem, creating a file took
// 36 µs of CPU, and 720-970 µs after 100,000 had been deleted, still 60 s
// later. Put TMPDIR on a journaled filesystem to compare builds.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/docketlabs/docket/bench/internal/ledgermetrics"
	"github.com/docketlabs/docket/bench/internal/procstat"
	"github.com/docketlabs/docket/internal/conventions"
)

// kneeLatency is the acknowledgement latency whose p95 marks the knee.
const kneeLatency = time.Second

func main() {
	rates := flag.String("rates", "400,800,1200,1600,2000,2400,3200", "calls per second of each step, rising")
	step := flag.Duration("step", 8*time.Second, "length of one step")
	warmup := flag.Duration("warmup", 8*time.Second, "unmeasured load at the first rate before the steps")
	batch := flag.Int("batch", 10, "call spans per OTLP request")
	bin := flag.String("docket", "bin/docket", "docket binary")
	drain := flag.Duration("drain", 3*time.Minute, "longest wait, after the steps, for the ledger to write every acknowledged call (0: do not wait)")
	flag.Parse()
	var rs []int
	for _, f := range strings.Split(*rates, ",") {
		r, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || r < *batch {
			slog.Error("bad -rates", "value", f)
			os.Exit(2)
		}
		rs = append(rs, r)
	}
	if err := run(*bin, rs, *step, *warmup, *batch, *drain); err != nil {
		slog.Error("bench failed", "err", err)
		os.Exit(1)
	}
}

func run(bin string, rates []int, step, warmup time.Duration, batch int, drain time.Duration) error {
	dir, err := os.MkdirTemp("", "knee-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	otlp, metrics := freePort(), freePort()
	cmd := exec.Command(bin, "collector", "--config", "bench/appoverhead/collector.yaml")
	cmd.Env = append(os.Environ(), "BENCH_DATA="+dir, "BENCH_OTLP_PORT="+otlp, "BENCH_METRICS_PORT="+metrics)
	logf, err := os.Create(filepath.Join(dir, "collector.log"))
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err = cmd.Start(); err != nil {
		return err
	}
	defer func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }()
	conn, err := grpc.NewClient("127.0.0.1:"+otlp, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	client := ptraceotlp.NewGRPCClient(conn)
	if err := waitReady(client); err != nil {
		return err
	}
	var seq atomic.Int64
	began := time.Now()
	acked := 0
	fmt.Printf("batch %d calls per request, steps of %s after %s of warm-up, content on\n", batch, step, warmup)
	// A collector just started is still opening its ledger and store:
	// its first seconds would set the first step's p95.
	if warmup > 0 {
		_, _, failed, sent := stepAt(client, &seq, rates[0], warmup, batch)
		acked += (sent - failed) * batch
	}
	knee := 0
	for _, rate := range rates {
		cpu0 := procstat.CPU(cmd.Process.Pid)
		p50, p95, failed, sent := stepAt(client, &seq, rate, step, batch)
		acked += (sent - failed) * batch
		// The collector's CPU per call tells its cost apart from how much
		// CPU a shared machine left it.
		cpu := (procstat.CPU(cmd.Process.Pid) - cpu0) / time.Duration(sent*batch)
		fmt.Printf("%5d calls/s  requests %d  failed %d  ack p50 %s  p95 %s  collector CPU %s/call  load %s\n", rate, sent, failed,
			p50.Round(time.Millisecond), p95.Round(time.Millisecond), cpu.Round(time.Microsecond), loadAverage())
		if p95 > kneeLatency || failed > 0 {
			knee = rate
			break
		}
	}
	if knee == 0 {
		fmt.Printf("p95 stayed under %s up to %d calls/s\n", kneeLatency, rates[len(rates)-1])
	} else {
		fmt.Printf("knee: p95 passes %s (or requests fail) at %d calls/s\n", kneeLatency, knee)
	}
	if drain > 0 {
		reportDrain("http://127.0.0.1:"+metrics+"/metrics", acked, began, drain)
	}
	return nil
}

// reportDrain waits until the collector's completeness account says the
// ledger has written acked calls, and prints how long after the last step
// that was and the run's mean rate of acknowledged calls.
func reportDrain(metricsURL string, acked int, began time.Time, limit time.Duration) {
	stepsEnded := time.Now()
	for {
		a, err := ledgermetrics.Scrape(metricsURL)
		if err == nil && a.Written >= int64(acked) {
			fmt.Printf("ledger: all %d acknowledged calls written %s after the last step (the run acknowledged %.0f calls/s on average)\n",
				acked, time.Since(stepsEnded).Round(100*time.Millisecond), float64(acked)/time.Since(began).Seconds())
			return
		}
		if time.Since(stepsEnded) > limit {
			fmt.Printf("ledger: %d of %d acknowledged calls written %s after the last step (read error: %v)\n", a.Written, acked, limit, err)
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// stepAt sends rate calls per second for d and returns the latencies of
// the acknowledged requests, from when each was due.
func stepAt(client ptraceotlp.GRPCClient, seq *atomic.Int64, rate int, d time.Duration, batch int) (p50, p95 time.Duration, failed, sent int) {
	perSec := float64(rate) / float64(batch)
	n := int(d.Seconds() * perSec)
	interval := time.Duration(float64(time.Second) / perSec)
	lat := make([]time.Duration, n)
	bad := make([]bool, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		due := start.Add(time.Duration(i) * interval)
		time.Sleep(time.Until(due))
		td := calls(int(seq.Add(int64(batch)))-batch, batch)
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := client.Export(ctx, ptraceotlp.NewExportRequestFromTraces(td))
			lat[i], bad[i] = time.Since(due), err != nil
		})
	}
	wg.Wait()
	var ok []time.Duration
	for i := range n {
		if bad[i] {
			failed++
		} else {
			ok = append(ok, lat[i])
		}
	}
	slices.Sort(ok)
	if len(ok) > 0 {
		p50, p95 = ok[len(ok)/2], ok[min(len(ok)-1, len(ok)*95/100)]
	}
	return p50, p95, failed, n
}

// calls are batch LLM call spans from first on, each with a distinct
// prompt and answer for the content store.
func calls(first, batch int) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "knee")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	now := time.Now()
	for i := first; i < first+batch; i++ {
		s := spans.AppendEmpty()
		var tid [16]byte
		copy(tid[:], fmt.Sprintf("k%015x", i))
		s.SetTraceID(pcommon.TraceID(tid))
		s.SetSpanID(pcommon.SpanID{0xbb, byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i), 1, 2, 3})
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(now.Add(-time.Second)))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(now))
		s.SetName("chat gpt-4o-mini")
		a := s.Attributes()
		a.PutStr(conventions.OperationName, "chat")
		a.PutStr(conventions.ProviderName, "openai")
		a.PutStr(conventions.RequestModel, "gpt-4o-mini")
		a.PutInt(conventions.UsageInput, 120)
		a.PutInt(conventions.UsageOutput, 40)
		a.PutStr(conventions.InputMessages, fmt.Sprintf(`[{"role":"user","parts":[{"type":"text","content":"Where is my order %d? It was due last week."}]}]`, i))
		a.PutStr(conventions.OutputMessages, fmt.Sprintf(`[{"role":"assistant","parts":[{"type":"text","content":"Order %d ships tomorrow."}],"finish_reason":"stop"}]`, i))
	}
	return td
}

// loadAverage is the machine's one-minute load average, which says how
// far a step's wall times can be trusted on a shared machine.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Fields(string(b))[0]
}

func waitReady(client ptraceotlp.GRPCClient) error {
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := client.Export(ctx, ptraceotlp.NewExportRequestFromTraces(ptrace.NewTraces()))
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("collector not answering: %w", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func freePort() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer func() { _ = l.Close() }()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}
