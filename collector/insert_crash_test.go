//go:build linux

package collector_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"golang.org/x/sys/unix"

	"github.com/docketlabs/docket/internal/conventions"
)

// The steps of one insert into the embedded ledger, told apart by the
// engine's files in the table directories: a new part is written in a
// tmp_insert_* directory, checksums.txt is its last file, a rename commits
// it, and the materialized view commits the row_versions part.
const (
	stepBeforeWrite     = "before the engine writes"
	stepWriting         = "part being written (tmp_insert_*)"
	stepWritten         = "part written, not committed (tmp_insert_*/checksums.txt)"
	stepCallsCommitted  = "llm_calls part committed, row_versions part not"
	stepVersionsFirst   = "row_versions part committed, llm_calls part not"
	stepBothCommitted   = "both parts committed"
	insertCrashBatch    = 2000
	insertCrashMaxKills = 60
)

// The collector is SIGKILLed at each step of an insert, found by watching
// the engine's files, until every step was hit (5 times; once with -short):
// every call the receiver acknowledged is in the ledger exactly once, and
// no redelivery shows as a conflict. There is no deduplication-log step any
// more: no insert writes a record of "already inserted" (checked below).
func TestLedgerKeepsEveryCallAcrossKillsAtEachInsertStep(t *testing.T) {
	want := 5
	if testing.Short() {
		want = 1
	}
	p := newCollectorProc(t, docketBinary(t), "ledger-e2e.yaml")
	p.start()
	sent := 0
	batch := func() ptrace.Traces {
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr(conventions.ServiceName, "e2e")
		spans := rs.ScopeSpans().AppendEmpty().Spans()
		for range insertCrashBatch {
			appendCall(spans, sent)
			sent++
		}
		return td
	}
	send(t, p.otlpURL, batch())
	p.waitCalls(uint64(sent), time.Minute)
	ledgerDir := filepath.Join(p.dir, "ledger")
	calls, versions := tableDir(t, ledgerDir, "llm_calls"), tableDir(t, ledgerDir, "row_versions")

	hits := map[string]int{}
	targets := []string{stepBeforeWrite, stepWriting, stepWritten, stepCallsCommitted, stepBothCommitted}
	done := func() bool {
		for _, s := range targets {
			if hits[s] < want {
				return false
			}
		}
		return true
	}
	for kill := 0; kill < insertCrashMaxKills && !done(); kill++ {
		target := targets[0]
		for _, s := range targets {
			if hits[s] < hits[target] {
				target = s
			}
		}
		// Aim from idle: the batch redelivered after the last restart is
		// written, and its trace refresh done, before this one is sent.
		p.waitIdle(uint64(sent), 2*time.Minute)
		b0, v0, tmp0 := maxBlock(t, calls), maxBlock(t, versions), tmpInserts(t, calls)
		w := watchInsert(t, calls, versions, target)
		pid := p.cmd.Process.Pid
		td := batch()
		accepted := make(chan struct{})
		go func() { send(t, p.otlpURL, td); close(accepted) }()
		if target == stepBeforeWrite {
			<-accepted
			_ = syscall.Kill(pid, syscall.SIGKILL)
		} else if !w.killOnStep(pid, 30*time.Second) {
			t.Logf("kill %d: %q not seen", kill, target)
		}
		p.signal(syscall.SIGKILL)
		w.close()
		step := classify(t, calls, versions, b0, v0, tmp0)
		hits[step]++
		t.Logf("kill %d: aimed at %q, hit %q", kill, target, step)
		p.start()
		<-accepted
	}
	if _, err := os.Stat(filepath.Join(calls, "deduplication_logs")); err == nil {
		t.Error("llm_calls has an insert deduplication log")
	}
	p.waitCalls(uint64(sent), 3*time.Minute)
	for _, s := range append(targets, stepVersionsFirst) {
		t.Logf("kills %-60s %d", s, hits[s])
	}
	for _, s := range targets {
		if hits[s] < want {
			t.Errorf("step %q hit %d times, want %d", s, hits[s], want)
		}
	}
}

var tableUUID = regexp.MustCompile(`UUID '([0-9a-f-]{36})'`)

// tableDir is a table's data directory: store/<uuid[:3]>/<uuid>, the UUID
// from its metadata.
func tableDir(t *testing.T, ledgerDir, table string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ledgerDir, "metadata", "default", table+".sql"))
	if err != nil {
		t.Fatal(err)
	}
	m := tableUUID.FindSubmatch(b)
	if m == nil {
		t.Fatalf("no UUID in the metadata of %s", table)
	}
	return filepath.Join(ledgerDir, "store", string(m[1][:3]), string(m[1]))
}

// maxBlock is the highest block number of a table's parts: it grows with
// every committed insert, and merges keep it.
func maxBlock(t *testing.T, dir string) int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	top := 0
	for _, e := range entries {
		f := strings.Split(e.Name(), "_")
		if !e.IsDir() || strings.HasPrefix(e.Name(), "tmp") || len(f) < 4 {
			continue
		}
		if n, err := strconv.Atoi(f[2]); err == nil && n > top {
			top = n
		}
	}
	return top
}

func tmpInserts(t *testing.T, dir string) map[string]bool {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "tmp_insert_") {
			out[e.Name()] = true
		}
	}
	return out
}

// classify tells, from the files a killed engine left, how far the insert
// had come.
func classify(t *testing.T, calls, versions string, b0, v0 int, tmp0 map[string]bool) string {
	cb, vb := maxBlock(t, calls) > b0, maxBlock(t, versions) > v0
	switch {
	case cb && vb:
		return stepBothCommitted
	case cb:
		return stepCallsCommitted
	case vb:
		return stepVersionsFirst
	}
	for name := range tmpInserts(t, calls) {
		if tmp0[name] {
			continue
		}
		if _, err := os.Stat(filepath.Join(calls, name, "checksums.txt")); err == nil {
			return stepWritten
		}
		return stepWriting
	}
	return stepBeforeWrite
}

// insertWatch watches the table directories with inotify for one step.
type insertWatch struct {
	t                 *testing.T
	fd                int
	callsDir          string
	calls, versions   int
	target            string
	callsCommitted    bool
	versionsCommitted bool
}

func watchInsert(t *testing.T, calls, versions, target string) *insertWatch {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	w := &insertWatch{t: t, fd: fd, callsDir: calls, target: target}
	if w.calls, err = unix.InotifyAddWatch(fd, calls, unix.IN_CREATE|unix.IN_MOVED_TO); err != nil {
		t.Fatal(err)
	}
	if w.versions, err = unix.InotifyAddWatch(fd, versions, unix.IN_CREATE|unix.IN_MOVED_TO); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *insertWatch) close() { unix.Close(w.fd) }

// killOnStep SIGKILLs pid as soon as the target step is seen; it reports
// whether it was.
func (w *insertWatch) killOnStep(pid int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	buf := make([]byte, 64<<10)
	tmpWatches := map[int]string{}
	for time.Now().Before(deadline) {
		fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, 50); err != nil && err != unix.EINTR {
			w.t.Fatal(err)
		}
		n, err := unix.Read(w.fd, buf)
		if err == unix.EAGAIN {
			continue
		}
		if err != nil {
			w.t.Fatal(err)
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)]), "\x00")
			off += unix.SizeofInotifyEvent + int(ev.Len)
			if w.seen(int(ev.Wd), ev.Mask, name, tmpWatches) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				return true
			}
		}
	}
	return false
}

// seen handles one event and says whether the target step is reached.
func (w *insertWatch) seen(wd int, mask uint32, name string, tmpWatches map[int]string) bool {
	tmp := strings.HasPrefix(name, "tmp_insert_")
	switch {
	case wd == w.calls && tmp && mask&unix.IN_CREATE != 0:
		if w.target == stepWriting {
			return true
		}
		if w.target == stepWritten {
			dir := filepath.Join(w.callsDir, name)
			twd, err := unix.InotifyAddWatch(w.fd, dir, unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_CLOSE_WRITE)
			if err != nil {
				return false // already renamed: too late for this one
			}
			tmpWatches[twd] = dir
			if _, err := os.Stat(filepath.Join(dir, "checksums.txt")); err == nil {
				return true
			}
		}
	case tmpWatches[wd] != "" && name == "checksums.txt" && mask&unix.IN_CLOSE_WRITE != 0:
		return w.target == stepWritten
	case wd == w.calls && !tmp && mask&unix.IN_MOVED_TO != 0:
		w.callsCommitted = true
	case wd == w.versions && !tmp && mask&unix.IN_MOVED_TO != 0:
		w.versionsCommitted = true
	}
	switch w.target {
	case stepCallsCommitted:
		return w.callsCommitted
	case stepBothCommitted:
		return w.callsCommitted && w.versionsCommitted
	}
	return false
}
