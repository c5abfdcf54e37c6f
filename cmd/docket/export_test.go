package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/backend"
)

func TestExportJSONL(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	// The test holds the engine open; the command shares it, as the
	// embedded engine allows one directory per process.
	store, err := backend.Open(ctx, backend.Config{Embedded: &backend.EmbeddedConfig{Path: filepath.Join(dir, "ledger")}})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Engine().Close()
	now := time.Now().UTC()
	cost := "0.000250000000"
	var calls []ledger.Call
	for i, id := range []string{"0af7651916cd43dd8448eb211c80319c", "4bf92f3577b34da6a3ce929d0e0e4736"} {
		c := ledger.Call{Tenant: "default", TraceID: id, SpanID: "b7ad6b7169203331", StartTime: now.Add(time.Duration(i) * time.Second), EndTime: now,
			ResponseModel: "gpt-4o-mini-2024-07-18", ResponseID: "chatcmpl-" + id[:4], CostStatus: "unknown_model",
			FinishReasons: []string{}, StopSequences: []string{}, RequestParams: map[string]string{}, AttributeIssues: []string{}, IngestedAt: now}
		if i == 1 {
			c.CostUSD, c.CostStatus = &cost, "ok"
		}
		calls = append(calls, c)
	}
	if err := store.InsertCalls(ctx, calls); err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(dir, "ledger.jsonl")
	cmd := exportCommand()
	cmd.SetArgs([]string{"--data", dir, "--format", "jsonl", "--out", out})
	if err := cmd.ExecuteContext(ctx); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r map[string]any
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		rows = append(rows, r)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2", len(rows))
	}
	for _, key := range []string{"trace_id", "span_id", "response_model", "response_id", "cost_usd", "cost_status"} {
		if _, ok := rows[0][key]; !ok {
			t.Errorf("row lacks %q: %v", key, rows[0])
		}
	}
	if rows[0]["cost_usd"] != nil || rows[1]["cost_usd"] != "0.00025" {
		t.Fatalf("unknown cost must export as null and known cost exactly: %v / %v", rows[0]["cost_usd"], rows[1]["cost_usd"])
	}

	bad := exportCommand()
	bad.SetArgs([]string{"--data", dir, "--format", "xml"})
	if err := bad.ExecuteContext(ctx); err == nil {
		t.Fatal("unknown format accepted")
	}
}
