package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/ledgertest"
)

var store *ledger.Store

func TestMain(m *testing.M) { ledgertest.Main(m, &store) }

func get(t *testing.T, srv *httptest.Server, path string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

func TestEvidenceEndpoint(t *testing.T) {
	ctx := context.Background()
	trace := "4bf92f3577b34da6a3ce929d0e0e4736"
	now := time.Now().UTC().Truncate(time.Millisecond)
	in, cost := int64(12), "0.000001"
	call := ledger.Call{Tenant: "default", TraceID: trace, SpanID: "00f067aa0ba902b7", StartTime: now, EndTime: now,
		Operation: "chat", ResponseModel: "gpt-4o-mini-2024-07-18", ResponseID: "chatcmpl-1", InputTokens: &in,
		CostUSD: &cost, CostStatus: "ok", UsageSource: ledger.UsagePartial, FinishReasons: []string{}, StopSequences: []string{},
		RequestParams: map[string]string{}, AttributeIssues: []string{}, IngestedAt: now}
	q := "SELECT * FROM t WHERE a = ?"
	span := ledger.EvidenceSpan{Tenant: "default", TraceID: trace, SpanID: "00f067aa0ba902b8", Category: "db", StartTime: now, EndTime: now,
		DBQueryText: &q, DBQueryStatus: ledger.QuerySanitized, Documents: []ledger.Document{}, AttributeIssues: []string{}, IngestedAt: now}
	if err := store.InsertCalls(ctx, []ledger.Call{call}); err != nil {
		t.Fatal(err)
	}
	if err := store.InsertEvidence(ctx, []ledger.EvidenceSpan{span}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(store, slog.New(slog.DiscardHandler)))
	defer srv.Close()

	code, body := get(t, srv, "/api/v1/evidence/"+trace)
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	var ev Evidence
	if err := json.Unmarshal(body, &ev); err != nil {
		t.Fatal(err)
	}
	if len(ev.Calls) != 1 || ev.Calls[0].ResponseID != "chatcmpl-1" || ev.Calls[0].OutputTokens != nil || *ev.Calls[0].CostUSD != "0.000001" {
		t.Fatalf("calls: %s", body)
	}
	if len(ev.EvidenceSpans) != 1 || *ev.EvidenceSpans[0].DBQueryText != q {
		t.Fatalf("spans: %s", body)
	}
	var raw map[string][]map[string]any
	json.Unmarshal(body, &raw)
	if v, ok := raw["calls"][0]["output_tokens"]; !ok || v != nil {
		t.Fatalf("unreported output_tokens must be null in the API, got %v (present %v)", v, ok)
	}

	for path, want := range map[string]int{
		"/api/v1/evidence/ffffffffffffffffffffffffffffffff": http.StatusNotFound,
		"/api/v1/evidence/4BF92F3577B34DA6A3CE929D0E0E4736": http.StatusBadRequest,
		"/api/v1/evidence/x'%20OR%201=1--":                  http.StatusBadRequest,
		"/api/v1/evidence/00000000000000000000000000000000": http.StatusBadRequest,
	} {
		if code, body := get(t, srv, path); code != want {
			t.Errorf("%s: status %d, want %d (%s)", path, code, want, body)
		}
	}
	code, body = get(t, srv, "/api/v1/ledger/stats")
	var counts ledger.Counts
	if code != http.StatusOK || json.Unmarshal(body, &counts) != nil || counts.Calls != 1 {
		t.Fatalf("stats: %d %s", code, body)
	}
}

func TestListenRefusesNonLoopback(t *testing.T) {
	if _, err := Listen("0.0.0.0:0", store, slog.New(slog.DiscardHandler)); err == nil {
		t.Fatal("listening on all interfaces without authentication must be refused")
	}
	s, err := Listen("127.0.0.1:0", store, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	s.Shutdown(context.Background())
}
