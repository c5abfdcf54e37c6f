package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// askServer answers like llmapp's /ask: a trace ID in the body and in the
// traceresponse header. Every 10th request fails with 502, and the driver
// is told about one request without and one with a disagreeing trace ID.
func askServer(t *testing.T) (*httptest.Server, *sync.Map) {
	var n atomic.Int64
	var users sync.Map
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ask askRequest
		if r.URL.Path != "/ask" || r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&ask) != nil || ask.Question == "" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		users.Store(ask.User, true)
		i := n.Add(1)
		traceID := fmt.Sprintf("%032x", i)
		header := traceID
		switch i {
		case 3:
			traceID = ""
		case 5:
			header = fmt.Sprintf("%032x", 999999)
		}
		w.Header().Set("traceresponse", "00-"+header+"-00f067aa0ba902b7-01")
		status := http.StatusOK
		if i%10 == 0 {
			status = http.StatusBadGateway
		}
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"trace_id": traceID})
	}))
	t.Cleanup(srv.Close)
	return srv, &users
}

func TestRunCountsAnswersAndTraceIDs(t *testing.T) {
	srv, users := askServer(t)
	idsFile := filepath.Join(t.TempDir(), "ids.txt")
	var out strings.Builder
	err := run([]string{"-url", srv.URL + "/ask", "-n", "100", "-c", "4", "-users", "7", "-trace-ids", idsFile}, &out)
	if err != nil {
		t.Fatal(err)
	}
	report := out.String()
	for _, want := range []string{
		"sent 100  ok 90  failed 10  http_502=10\n",
		"trace ids 98 distinct  missing 1  header/body mismatch 1\n",
		"req/s",
		"p95",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	ids, err := os.ReadFile(idsFile)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Fields(string(ids)); len(lines) != 98 || lines[0] != fmt.Sprintf("%032x", 1) {
		t.Errorf("trace id file has %d lines, first %q", len(lines), lines[0])
	}
	count := 0
	users.Range(func(k, _ any) bool {
		count++
		if !strings.HasSuffix(k.(string), "@example.com") {
			t.Errorf("user %q", k)
		}
		return true
	})
	if count < 2 || count > 7 {
		t.Errorf("%d distinct users, want 2..7", count)
	}
}

func TestDurationBoundsTheRun(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(50 * time.Millisecond):
		case <-r.Context().Done():
		}
		w.Header().Set("traceresponse", "00-"+strings.Repeat("a", 32)+"-00f067aa0ba902b7-01")
		_ = json.NewEncoder(w).Encode(map[string]string{"trace_id": strings.Repeat("a", 32)})
	}))
	t.Cleanup(slow.Close)
	opts, err := parseOptions([]string{"-url", slow.URL, "-n", "1000000", "-c", "2", "-duration", "300ms"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), opts.duration)
	defer cancel()
	start := time.Now()
	res := drive(ctx, slow.Client(), opts)
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("run took %s with a 300ms limit", elapsed)
	}
	if !res.stoppedEarly || res.sent == 0 || res.sent >= 1000 {
		t.Errorf("sent %d, stoppedEarly %v", res.sent, res.stoppedEarly)
	}
}

func TestCheckTarget(t *testing.T) {
	for _, tc := range []struct {
		url         string
		allowRemote bool
		ok          bool
	}{
		{"http://127.0.0.1:8080/ask", false, true},
		{"http://127.9.9.9/ask", false, true},
		{"http://[::1]:8080/ask", false, true},
		{"http://localhost:8080/ask", false, true},
		{"http://10.0.0.5:8080/ask", false, false},
		{"http://example.com/ask", false, false},
		{"http://localhost.example.com/ask", false, false},
		{"http://example.com/ask", true, true},
		{"ftp://127.0.0.1/ask", false, false},
		{"127.0.0.1:8080", false, false},
	} {
		_, err := checkTarget(tc.url, tc.allowRemote)
		if (err == nil) != tc.ok {
			t.Errorf("checkTarget(%q, %v) = %v", tc.url, tc.allowRemote, err)
		}
	}
}

func TestOptionsRejectNonsense(t *testing.T) {
	for _, args := range [][]string{{"-n", "0"}, {"-c", "0"}, {"-users", "0"}, {"-duration", "0s"}, {"-url", "http://192.0.2.1/ask"}} {
		if _, err := parseOptions(args); err == nil {
			t.Errorf("parseOptions(%q) accepted it", args)
		}
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	for p, want := range map[int]time.Duration{50: 50 * time.Millisecond, 95: 95 * time.Millisecond, 99: 99 * time.Millisecond, 100: 100 * time.Millisecond} {
		if got := percentile(d, p); got != want {
			t.Errorf("p%d = %s, want %s", p, got, want)
		}
	}
	if got := percentile(d[:1], 99); got != time.Millisecond {
		t.Errorf("p99 of one = %s", got)
	}
}

func TestTraceIDFromTraceresponse(t *testing.T) {
	id := strings.Repeat("ab", 16)
	for h, want := range map[string]string{
		"00-" + id + "-00f067aa0ba902b7-01": id,
		"":                                  "",
		"00-abc-00f067aa0ba902b7-01":        "",
		"garbage":                           "",
	} {
		if got := traceIDFromTraceresponse(h); got != want {
			t.Errorf("%q → %q, want %q", h, got, want)
		}
	}
}
