package collector_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/internal/spantest"
)

// The attack's size relative to the collector's descriptor limit is what
// matters: more held connections than the process may open files. The
// default keeps that ratio at a size that runs in seconds on a small
// machine; DOCKET_SLOWCONN_ATTACK=24000 DOCKET_SLOWCONN_NOFILE=20000 runs
// the size first reported (this machine's default descriptor limit is
// 20,000).
func slowConnSizes() (attack, nofile int) {
	attack, nofile = 6000, 4096
	if n, err := strconv.Atoi(os.Getenv("DOCKET_SLOWCONN_ATTACK")); err == nil && n > 0 {
		attack = n
	}
	if n, err := strconv.Atoi(os.Getenv("DOCKET_SLOWCONN_NOFILE")); err == nil && n > 0 {
		nofile = n
	}
	return attack, nofile
}

// TestSlowUIConnectionsLeaveIngestAnswering: thousands of connections to
// the UI port that send a request's headers and then trickle its body do
// not stop OTLP ingest in the same process. Before the UI had a
// connection cap and read deadlines, such connections took every file
// descriptor of the collector and OTLP requests went unanswered.
func TestSlowUIConnectionsLeaveIngestAnswering(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the collector")
	}
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("needs prlimit (util-linux) to give the collector its descriptor limit")
	}
	attack, nofile := slowConnSizes()

	p := newCollectorProc(t, docketBinary(t), "ui-slowconn.yaml")
	cfg, _ := filepath.Abs(filepath.Join("testdata", p.config))
	p.cmd = exec.Command(prlimit, fmt.Sprintf("--nofile=%d:%d", nofile, nofile), "--", p.bin, "collector", "--config", "file:"+cfg)
	p.cmd.Env = p.env
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.signal(syscall.SIGKILL) })
	uiAddr := p.apiURL[len("http://"):]
	waitAccepting(t, p.otlpURL)

	before := measureIngest(t, p.otlpURL, 50)
	t.Logf("before the attack: %s", before)

	opened := attackFromHelpers(t, uiAddr, attack)
	t.Logf("attack: %d connections to the UI port opened and trickling, %d could not connect (collector limited to %d descriptors)",
		opened, attack-opened, nofile)

	during := measureIngest(t, p.otlpURL, 200)
	logText, _ := os.ReadFile(filepath.Join(p.dir, "collector.log"))
	t.Logf("during the attack: %s; the collector logged %d \"too many open files\"", during,
		strings.Count(string(logText), "too many open files"))
	if during.failed > 0 {
		t.Fatalf("%d of %d OTLP requests failed during the attack (first error: %v); see %s",
			during.failed, during.n, during.firstErr, filepath.Join(p.dir, "collector.log"))
	}
	// Generous: the point is that ingest answers, not how fast a loaded
	// machine is.
	if during.p95 > 5*time.Second {
		t.Fatalf("OTLP p95 %v during the attack", during.p95)
	}
}

// attackPerProcess is the most connections one helper process holds, below
// common descriptor limits (a hard limit often cannot be raised).
const attackPerProcess = 12000

// attackFromHelpers runs the slow attack on addr with n connections from
// helper processes (this test binary running TestSlowConnHelper), which
// hold them until the test ends, and returns how many connected.
func attackFromHelpers(t *testing.T, addr string, n int) int {
	t.Helper()
	opened := 0
	for n > 0 {
		share := min(n, attackPerProcess)
		n -= share
		cmd := exec.Command(os.Args[0], "-test.run=^TestSlowConnHelper$", "-test.v")
		cmd.Env = append(os.Environ(), "DOCKET_SLOWCONN_HELPER="+addr+","+strconv.Itoa(share))
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			stdin.Close()
			_ = cmd.Wait()
		})
		sc := bufio.NewScanner(stdout)
		got := -1
		for got < 0 && sc.Scan() {
			_, _ = fmt.Sscanf(sc.Text(), "open %d", &got)
		}
		if got < 0 {
			t.Fatal("an attack helper reported no connections")
		}
		opened += got
		go func() { _, _ = io.Copy(io.Discard, stdout) }()
	}
	return opened
}

// TestSlowConnHelper is the attack helper process; it runs only when
// started by attackFromHelpers.
func TestSlowConnHelper(t *testing.T) {
	spec := os.Getenv("DOCKET_SLOWCONN_HELPER")
	if spec == "" {
		t.Skip("runs as a helper process of TestSlowUIConnectionsLeaveIngestAnswering")
	}
	addr, count, _ := strings.Cut(spec, ",")
	n, err := strconv.Atoi(count)
	if err != nil {
		t.Fatal(err)
	}
	raiseNoFile(t, n+100)
	a := startSlowAttack(addr, n)
	fmt.Printf("open %d\n", a.open())
	_, _ = io.Copy(io.Discard, os.Stdin) // until the test closes it
	a.stop()
}

// raiseNoFile lets this process hold n descriptors (root may raise the
// hard limit too).
func raiseNoFile(t *testing.T, n int) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur >= uint64(n) {
		return
	}
	want := syscall.Rlimit{Cur: uint64(n), Max: max(lim.Max, uint64(n))}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err != nil {
		t.Skipf("cannot raise the descriptor limit to %d (hard %d): %v", n, lim.Max, err)
	}
}

func waitAccepting(t *testing.T, url string) {
	t.Helper()
	body := oneSpanRequest(t)
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if postOTLP(url, body, time.Second) == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("the collector did not start accepting OTLP")
}

func oneSpanRequest(t *testing.T) []byte {
	t.Helper()
	td, spans := spantest.Traces(map[string]any{conventions.ServiceName: "slowconn"})
	s := spantest.Chat(spans, "openai", "gpt-4o-mini")
	spantest.At(s, pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, 8}, time.Now())
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// postOTLP sends one export on a new connection, as a sender whose
// connection was closed would: each request needs the collector to accept
// (and so open a descriptor).
func postOTLP(url string, body []byte, timeout time.Duration) error {
	c := &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Post(url, "application/x-protobuf", bytes.NewReader(body))
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("OTLP answered %s", resp.Status)
	}
	return nil
}

type ingestStats struct {
	n, failed     int
	p50, p95, max time.Duration
	firstErr      error
}

func (s ingestStats) String() string {
	return fmt.Sprintf("%d OTLP/HTTP requests, %d failed, p50 %s, p95 %s, max %s", s.n, s.failed,
		latency(s.p50), latency(s.p95), latency(s.max))
}

func latency(d time.Duration) string {
	if d == math.MaxInt64 {
		return "failed"
	}
	return d.Round(time.Microsecond).String()
}

// measureIngest times n sequential one-span exports; a failed one counts
// as infinitely slow.
func measureIngest(t *testing.T, url string, n int) ingestStats {
	t.Helper()
	body := oneSpanRequest(t)
	st := ingestStats{n: n}
	lat := make([]time.Duration, 0, n)
	for range n {
		began := time.Now()
		err := postOTLP(url, body, 10*time.Second)
		d := time.Since(began)
		if err != nil {
			st.failed++
			if st.firstErr == nil {
				st.firstErr = err
			}
			d = math.MaxInt64
		}
		lat = append(lat, d)
	}
	slices.Sort(lat)
	st.p50, st.p95, st.max = lat[n/2], lat[(n*95+99)/100-1], lat[n-1]
	return st
}

// slowAttack holds connections to addr that sent a sign-in request's
// headers announcing a 1 MB body, and sends one byte of it per connection
// every two seconds.
type slowAttack struct {
	mu    sync.Mutex
	conns []net.Conn
	done  chan struct{}
}

func startSlowAttack(addr string, n int) *slowAttack {
	a := &slowAttack{done: make(chan struct{})}
	head := []byte("POST /api/v1/session HTTP/1.1\r\nHost: ui\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{")
	jobs := make(chan struct{}, n)
	for range n {
		jobs <- struct{}{}
	}
	close(jobs)
	// A refused or timed-out dial is tried again, as an attacker would,
	// until the attack has had dialRetryFor to open its connections.
	const dialRetryFor = 20 * time.Second
	giveUp := time.Now().Add(dialRetryFor)
	var wg sync.WaitGroup
	for w := range 500 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Loopback sources other than 127.0.0.1, so that 24,000
			// connections do not run out of one address's ephemeral ports.
			d := net.Dialer{Timeout: time.Second, LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 1, byte(1+w%50))}}
			for range jobs {
				for time.Now().Before(giveUp) {
					c, err := d.Dial("tcp", addr)
					if err != nil {
						continue
					}
					_ = c.SetWriteDeadline(time.Now().Add(time.Second))
					if _, err := c.Write(head); err != nil {
						c.Close()
						continue
					}
					a.mu.Lock()
					a.conns = append(a.conns, c)
					a.mu.Unlock()
					break
				}
			}
		}()
	}
	wg.Wait()
	go a.trickle()
	return a
}

func (a *slowAttack) trickle() {
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-a.done:
			return
		case <-tick.C:
		}
		a.mu.Lock()
		kept := a.conns[:0]
		for _, c := range a.conns {
			_ = c.SetWriteDeadline(time.Now().Add(10 * time.Millisecond))
			if _, err := c.Write([]byte(" ")); err != nil {
				c.Close()
				continue
			}
			kept = append(kept, c)
		}
		a.conns = kept
		a.mu.Unlock()
	}
}

func (a *slowAttack) open() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.conns)
}

func (a *slowAttack) stop() {
	close(a.done)
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range a.conns {
		c.Close()
	}
	a.conns = nil
}
