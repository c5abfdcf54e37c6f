package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/internal/shorttest"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/audit"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/ledgertest"
)

func TestExportAndVerify(t *testing.T) {
	shorttest.Needs(t, shorttest.ChDB)
	dir := t.TempDir()
	ctx := context.Background()
	store := openDataLedger(t, dir)
	now := time.Now().UTC()
	cost := "0.000250000000"
	var calls []ledger.Call
	for i, id := range []string{"0af7651916cd43dd8448eb211c80319c", "4bf92f3577b34da6a3ce929d0e0e4736"} {
		c := ledgertest.Call("default", id, "b7ad6b7169203331")
		c.StartTime, c.EndTime, c.IngestedAt = now.Add(time.Duration(i)*time.Second), now, now
		c.ResponseModel, c.ResponseID, c.CostStatus = "gpt-4o-mini-2024-07-18", "chatcmpl-"+id[:4], "unknown_model"
		if i == 1 {
			c.CostUSD, c.CostStatus = &cost, "ok"
		}
		calls = append(calls, c)
	}
	if err := store.InsertCalls(ctx, calls); err != nil {
		t.Fatal(err)
	}
	common := []string{"--data", dir, "--actor", "ines", "--tenant", "default", "--reason", "complaint SUP-1: cost dispute",
		"--from", now.Add(-time.Hour).Format(time.RFC3339Nano), "--to", now.Add(time.Hour).Format(time.RFC3339)}

	bundle := filepath.Join(dir, "bundle-jsonl")
	out, err := runCommand(ctx, exportCommand(), append(common, "--format", "jsonl", "--out", bundle)...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "cost USD 0.00025 +?") || !strings.Contains(out, "calls.jsonl") {
		t.Errorf("summary: %s", out)
	}
	f, err := os.Open(filepath.Join(bundle, "calls.jsonl"))
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

	// The export is on record, with the root the manifest states.
	m, err := audit.ReadManifest(bundle)
	if err != nil {
		t.Fatal(err)
	}
	log, err := store.AccessLog(ctx, ledgerstore.AccessFilter{Tenant: "default"})
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 1 || log[0].Actor != "ines" || log[0].Action != audit.ActionExport || log[0].Ref != m.Root || log[0].Role != "admin" {
		t.Fatalf("access log: %+v", log)
	}

	if out, err := runCommand(ctx, exportCommand(), "verify", "--root", m.Root, bundle); err != nil || !strings.Contains(out, "bundle ok") {
		t.Fatalf("verify: %v\n%s", err, out)
	}
	// One byte of one row changed: verify fails naming the file and rows.
	body, _ := os.ReadFile(filepath.Join(bundle, "calls.jsonl"))
	if err := os.WriteFile(filepath.Join(bundle, "calls.jsonl"), bytes.Replace(body, []byte("chatcmpl-4bf9"), []byte("chatcmpl-4bf8"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = runCommand(ctx, exportCommand(), "verify", bundle)
	if err == nil || !strings.Contains(err.Error(), "calls.jsonl rows 1–2") || !strings.Contains(out, "FAILED calls.jsonl") {
		t.Fatalf("tampered bundle: %v\n%s", err, out)
	}

	if _, err := runCommand(ctx, exportCommand(), append(common, "--format", "xml", "--out", filepath.Join(dir, "bad"))...); err == nil {
		t.Fatal("unknown format accepted")
	}
	if _, err := runCommand(ctx, exportCommand(), "--data", dir, "--out", filepath.Join(dir, "bad"), "--from", "yesterday", "--to", "2026-01-01", "--reason", "x"); err == nil {
		t.Fatal("bad time accepted")
	}

	parquet := filepath.Join(dir, "bundle-parquet")
	if _, err := runCommand(ctx, exportCommand(), append(common, "--format", "parquet", "--out", parquet)...); err != nil {
		t.Fatal(err)
	}
	// Verify reads Parquet with an engine of its own, which the embedded
	// engine allows once this process holds no other directory.
	store.Engine().Close()
	if out, err := runCommand(ctx, exportCommand(), "verify", parquet); err != nil || !strings.Contains(out, "ok calls.parquet: 2 rows") {
		t.Fatalf("verify parquet: %v\n%s", err, out)
	}
}
