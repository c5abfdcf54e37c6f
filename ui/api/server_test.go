package api

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger/ledgertest"
	"github.com/docketlabs/docket/ledger/lifecycle"
	"github.com/docketlabs/docket/ledger/storage"
	"github.com/docketlabs/docket/queries"
)

// listenFixture serves a fixture through Listen, as the UI runs.
func listenFixture(t *testing.T, l Listener, clock func() time.Time) *fixture {
	t.Helper()
	return newFixtureOn(t, clock, func(h http.Handler) string {
		l.Addr = "127.0.0.1:0"
		srv, err := Listen(l, h, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Shutdown(t.Context()) })
		return "http://" + srv.Addr()
	})
}

// TestSlowBodyIsCutOff: a request whose body trickles in is cut off by
// the read timeout instead of holding its connection for as long as the
// client likes.
func TestSlowBodyIsCutOff(t *testing.T) {
	f := listenFixture(t, Listener{Timeouts: Timeouts{ReadHeader: time.Second, Read: 2 * time.Second}}, nil)
	conn, err := net.Dial("tcp", strings.TrimPrefix(f.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/v1/session HTTP/1.1\r\nHost: ui\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n{")
	began := time.Now()
	for time.Since(began) < 30*time.Second {
		time.Sleep(200 * time.Millisecond)
		if _, err := conn.Write([]byte(" ")); err != nil {
			t.Logf("cut off after %v: %v", time.Since(began).Round(time.Millisecond), err)
			return
		}
	}
	t.Fatal("a body trickling in for 30 s kept its connection")
}

// holdConnections opens n connections that send half a request line and
// then nothing.
func holdConnections(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := c.Write([]byte("GET /healthz HTTP/1.1\r\nHost:")); err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	return conns
}

// TestConnectionCap: with every slot held by clients that send nothing,
// a further client waits (its connection is not accepted, so it costs the
// process no descriptor) until the read-header timeout frees a slot.
func TestConnectionCap(t *testing.T) {
	f := listenFixture(t, Listener{MaxConnections: 4, Timeouts: Timeouts{ReadHeader: 3 * time.Second}}, nil)
	holdConnections(t, strings.TrimPrefix(f.url, "http://"), 4)
	quick := &http.Client{Timeout: 500 * time.Millisecond}
	if resp, err := quick.Get(f.url + "/healthz"); err == nil {
		resp.Body.Close()
		t.Fatal("a fifth connection was served while four held every slot")
	}
	patient := &http.Client{Timeout: 30 * time.Second}
	resp, err := patient.Get(f.url + "/healthz")
	if err != nil {
		t.Fatalf("no slot was freed by the read-header timeout: %v", err)
	}
	resp.Body.Close()
}

// pace is how a client reads a download: step bytes, then a pause; once
// past stallAt (if set) it stops reading for stall.
type pace struct {
	step    int
	pause   time.Duration
	stallAt int64
	stall   time.Duration
}

// TestDownloadOutlastsWriteTimeout: a download that takes far longer than
// the write timeout completes while the client keeps reading; a client
// that stops reading for longer than the timeout is cut off.
func TestDownloadOutlastsWriteTimeout(t *testing.T) {
	f := listenFixture(t, Listener{Timeouts: Timeouts{Write: time.Second}}, nil)
	aude := f.client(t)
	aude.signIn("aude")
	code, body := aude.do("POST", "/api/v1/exports", map[string]any{"tenant": "acme", "from": time.Now().Add(-time.Hour).UTC(),
		"to": time.Now().Add(time.Hour).UTC(), "format": "jsonl", "reason": "quarterly audit"})
	if code != http.StatusCreated {
		t.Fatalf("export: %d %s", code, body)
	}
	res := decodeJSON[struct {
		ID       string `json:"id"`
		Download string `json:"download"`
	}](t, body)
	// Incompressible, and larger than the socket buffers can hold.
	big := make([]byte, 64<<20)
	_, _ = rand.Read(big)
	if err := os.WriteFile(filepath.Join(f.exportDir, res.ID, "filler.bin"), big, 0o600); err != nil {
		t.Fatal(err)
	}
	download := func(p pace) (int64, time.Duration, error) {
		resp, err := aude.http.Get(f.url + res.Download)
		if err != nil {
			return 0, 0, err
		}
		defer resp.Body.Close()
		began := time.Now()
		buf := make([]byte, p.step)
		var n int64
		for {
			k, err := io.ReadFull(resp.Body, buf)
			n += int64(k)
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				// A cut-off connection ends the body early: zip's end
				// record is missing then, which the caller sees.
				return n, time.Since(began), nil
			}
			if err != nil {
				return n, time.Since(began), err
			}
			if p.stallAt > 0 && n >= p.stallAt {
				time.Sleep(p.stall)
				p.stallAt = 0
			}
			time.Sleep(p.pause)
		}
	}
	// 64 MiB at 1 MiB per 80 ms: about 5 s, five write timeouts.
	n, took, err := download(pace{step: 1 << 20, pause: 80 * time.Millisecond})
	if err != nil || n < int64(len(big)) {
		t.Fatalf("slow download: %d bytes in %v, %v", n, took, err)
	}
	t.Logf("downloaded %d bytes in %v with a 1 s write timeout", n, took.Round(time.Millisecond))
	if took < 2*time.Second {
		t.Fatalf("the download took %v: too fast to show anything about a 1 s write timeout", took)
	}
	n, took, err = download(pace{step: 1 << 20, pause: time.Millisecond, stallAt: 4 << 20, stall: 4 * time.Second})
	if err == nil && n >= int64(len(big)) {
		t.Fatalf("a client that stopped reading for 4 s was not cut off (%d bytes in %v)", n, took)
	}
	t.Logf("a stalled client was cut off after %d bytes: %v", n, err)
}

// TestExportExpires: a bundle is downloadable until the expires_at its
// creation answered with, and not after, whether or not another export
// was made in between.
func TestExportExpires(t *testing.T) {
	var offset atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	f := listenFixture(t, Listener{}, clock)
	aude := f.client(t)
	aude.signIn("aude")
	code, body := aude.do("POST", "/api/v1/exports", map[string]any{"tenant": "acme", "from": time.Now().Add(-time.Hour).UTC(),
		"to": time.Now().Add(time.Hour).UTC(), "format": "csv", "reason": "quarterly audit"})
	if code != http.StatusCreated {
		t.Fatalf("export: %d %s", code, body)
	}
	res := decodeJSON[struct {
		ID        string    `json:"id"`
		Download  string    `json:"download"`
		ExpiresAt time.Time `json:"expires_at"`
	}](t, body)
	if d := time.Until(res.ExpiresAt); d < exportKeep-time.Minute || d > exportKeep {
		t.Fatalf("expires_at %v is not a day ahead", res.ExpiresAt)
	}
	offset.Store(int64(time.Until(res.ExpiresAt) - time.Second))
	if code, _ := aude.do("GET", res.Download, nil); code != http.StatusOK {
		t.Fatalf("a second before expiry: %d", code)
	}
	offset.Store(int64(time.Until(res.ExpiresAt) + time.Second))
	if code, body := aude.do("GET", res.Download, nil); code != http.StatusGone {
		t.Fatalf("a second after expiry: %d %s", code, body)
	}
	if _, err := os.Stat(filepath.Join(f.exportDir, res.ID)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the expired bundle is still on disk: %v", err)
	}
}

// TestHoldOutlastsWriteTimeout: creating a hold waits for the batches of
// deletions of its tenant under way, and then holds every covered object;
// that may take longer than the write timeout, and the answer still
// arrives.
func TestHoldOutlastsWriteTimeout(t *testing.T) {
	f := listenFixture(t, Listener{Timeouts: Timeouts{Write: 500 * time.Millisecond}}, nil)
	// A batch of deletions of the tenant is under way for 2 s, recorded as
	// the lifecycle manager records one.
	batch := "disp_" + ledgertest.SpanID(t)
	mark := func(state string) error {
		q, err := storage.Bind(queries.MustGet("lifecycle_insert_disposal"), map[string]any{"tenant": "acme", "disposal_id": batch, "state": state})
		if err != nil {
			return err
		}
		return store.Engine().Exec(context.Background(), q)
	}
	if err := mark(lifecycle.DisposalBegun); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	time.AfterFunc(2*time.Second, func() { ended <- mark(lifecycle.DisposalEnded) })
	admin := f.client(t)
	admin.signIn("admin")
	began := time.Now()
	code, body := admin.do("POST", "/api/v1/holds", map[string]any{"scope": lifecycle.Scope{Tenant: "acme", TraceID: f.trace}, "reason": "case 12"})
	if err := <-ended; err != nil {
		t.Fatal(err)
	}
	if code != http.StatusCreated {
		t.Fatalf("hold: %d %s", code, body)
	}
	if took := time.Since(began); took < 2*time.Second {
		t.Fatalf("the hold answered after %s, before the batch under way ended", took)
	}
}
