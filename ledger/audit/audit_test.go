package audit

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/ledgertest"
	"github.com/docketlabs/docket/ledger/storage"
	"github.com/docketlabs/docket/ledger/storage/chdb"
	"github.com/docketlabs/docket/ledger/storage/storagetest"
	"github.com/docketlabs/docket/queries"
)

var (
	day0    = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	auditor = func(tenant string) access.Principal {
		return access.Principal{User: "ana", Role: access.RoleAuditor, Tenants: []string{tenant}}
	}
	admin = access.Principal{User: "root-admin", Role: access.RoleAdmin, Tenants: []string{access.AllTenants}}
)

func request(tenant string, f Format) Request {
	return Request{Tenant: tenant, From: day0, To: day0.Add(24 * time.Hour), Format: f, Reason: "ticket AUD-7: quarterly cost audit"}
}

// newCall is a call of tenant with every slice and map set, as the ledger
// exporter writes them.
func newCall(tenant string, i int) ledger.Call {
	start := day0.Add(time.Duration(i) * time.Second)
	c := ledgertest.Call(tenant, fmt.Sprintf("%032x", i+1), fmt.Sprintf("%016x", i+1))
	c.StartTime, c.EndTime, c.IngestedAt, c.DurationMS = start, start.Add(time.Second), start, 1000
	c.Provider, c.RequestModel, c.ResponseModel, c.ResponseID = "openai", "gpt-4o-mini", "gpt-4o-mini-2024-07-18", fmt.Sprintf("chatcmpl-%06d", i)
	c.UsageSource, c.FinishReasons, c.Status, c.ContentStatus = ledger.UsageReported, []string{"stop"}, ledger.StatusOK, ledger.ContentNone
	c.CostStatus, c.CostUSD, c.InputTokens, c.OutputTokens = "ok", new("0.000100000000"), new(int64(10)), new(int64(2))
	return c
}

func insert(t testing.TB, calls []ledger.Call) {
	t.Helper()
	if err := store.InsertCalls(context.Background(), calls); err != nil {
		t.Fatal(err)
	}
}

// trickyCalls are three calls whose values are hard to carry through every
// format, and two that the request must leave out.
func trickyCalls(tenant string) []ledger.Call {
	a := newCall(tenant, 1)
	a.SpanName = "chat \"gpt\", v2\nline two\r\nthree\ttab"
	a.ServiceName = "svc/é😀中"
	a.EndUserRef = "u\u2028x\x01\x1f"
	a.ResponseID = `resp,"1"`
	a.RequestParams = map[string]string{"k,\n": `v"`, "": ""}
	a.FinishReasons = []string{"stop", "", "a,b"}
	a.StopSequences = []string{"\n\n", `"`, `\`}
	a.CostUSD, a.InputTokens, a.OutputTokens = new("0.000250000000"), new(int64(100)), new(int64(20))
	a.TTFTMS, a.Temperature, a.TopP, a.Seed, a.HTTPStatus, a.MaxTokens = new(0.1), new(0.7), new(1e-7), new(int64(-9223372036854775808)), new(int64(200)), new(int64(4096))

	b := newCall(tenant, 2)
	b.SpanName = "invalid utf-8 \xff\xfe"
	b.CostUSD, b.CostStatus, b.InputTokens, b.OutputTokens, b.UsageSource = nil, "unknown_model", nil, nil, ledger.UsageMissing
	b.FinishReasons = []string{}

	c := newCall(tenant, 3)
	c.CostUSD, c.InputTokens, c.OutputTokens = new("12.345600000000"), new(int64(5)), nil

	before := newCall(tenant, 0)
	before.StartTime = day0.Add(-time.Nanosecond)
	other := newCall(tenant+"-other", 4)
	return []ledger.Call{a, b, c, before, other}
}

func engineOnly(eng storage.Engine) VerifyOptions {
	return VerifyOptions{Engine: func() (storage.Engine, error) { return eng, nil }}
}

func TestExportRoundTripEveryFormat(t *testing.T) {
	ctx := context.Background()
	const tenant = "tricky"
	insert(t, trickyCalls(tenant))
	q, err := storage.Bind(queries.MustGet("audit_calls"), map[string]any{"tenant": tenant, "from": day0, "to": day0.Add(24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	want := engineRows(t, q)
	if len(want) != 3 {
		t.Fatalf("%d rows in range, want 3", len(want))
	}
	wantTotals := Totals{Calls: 3,
		InputTokens:  Sum{Total: "105 +?", KnownRows: 2, UnknownRows: 1},
		OutputTokens: Sum{Total: "20 +?", KnownRows: 1, UnknownRows: 2},
		CostUSD:      Sum{Total: "12.34585 +?", KnownRows: 2, UnknownRows: 1},
		CostStatus:   map[string]uint64{"ok": 2, "unknown_model": 1}}

	var heads []string
	for _, f := range []Format{FormatJSONL, FormatCSV, FormatParquet} {
		dir := filepath.Join(t.TempDir(), "bundle")
		m, err := Export(ctx, store, auditor(tenant), request(tenant, f), dir)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(m.Files) != 2 || m.Files[0].Name != "calls."+string(f) || m.Files[0].Rows != 3 || len(m.Files[0].Columns) != 48 || // the columns of llm_calls, evidence_span_ids and member_refs
			m.Files[1].Name != "conflicts."+string(f) || m.Files[1].Rows != 0 {
			t.Fatalf("%s: files %+v", f, m.Files)
		}
		if d := totalsDiff(wantTotals, m.Totals); d != nil {
			t.Errorf("%s: totals %v", f, d)
		}
		stored, err := ReadManifest(dir)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := mustJSON(t, stored), mustJSON(t, m); a != b {
			t.Errorf("%s: manifest.json differs from the returned manifest", f)
		}
		report, err := Verify(ctx, dir, engineOnly(store.Engine()))
		if err != nil || len(report.Files) != 2 || !report.Files[0].OK || !report.Files[1].OK {
			t.Fatalf("%s: verify: %v %+v", f, err, report)
		}
		heads = append(heads, m.Files[0].ChainHead)
		entries, err := os.ReadDir(dir)
		if err != nil || len(entries) != 3 {
			t.Fatalf("%s: bundle holds %v (%v)", f, entries, err)
		}
		for _, e := range entries {
			if info, err := e.Info(); err != nil || info.Mode().Perm() != 0o600 {
				t.Errorf("%s: %s has mode %v", f, e.Name(), info.Mode())
			}
		}

		body, err := os.ReadFile(filepath.Join(dir, m.Files[0].Name))
		if err != nil {
			t.Fatal(err)
		}
		switch f {
		case FormatJSONL:
			if string(body) != string(bytes.Join(want, []byte("\n")))+"\n" {
				t.Errorf("jsonl: the file is not the canonical rows:\n%s", body)
			}
			var got ledger.Call
			if err := json.Unmarshal(want[0], &got); err != nil || got.SpanName != "chat \"gpt\", v2\nline two\r\nthree\ttab" || *got.CostUSD != "0.00025" || got.RequestParams["k,\n"] != `v"` {
				t.Errorf("jsonl row 1 does not carry the values: %+v %v", got, err)
			}
		case FormatCSV:
			// Other tools read it as ordinary CSV.
			records, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
			if err != nil || len(records) != 4 || records[0][0] != "tenant" || records[1][14] != `resp,"1"` || records[2][41] != "" || records[1][41] != "0.00025" {
				t.Errorf("csv: %v %q", err, records)
			}
		case FormatParquet:
			if !bytes.HasPrefix(body, []byte("PAR1")) || !bytes.HasSuffix(body, []byte("PAR1")) {
				t.Errorf("parquet: not a Parquet file")
			}
		}
	}
	// The chain is over canonical rows, so the chain heads do not depend
	// on the format (the root does: it covers the format too).
	if heads[0] != heads[1] || heads[1] != heads[2] {
		t.Errorf("chain heads differ between formats: %q", heads)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTotalsUnknownIsNotZero(t *testing.T) {
	ctx := context.Background()
	known := newCall("known", 1)
	known.CostUSD = new("1.500000000000")
	unknown := newCall("unknown", 1)
	unknown.CostUSD, unknown.CostStatus, unknown.InputTokens = nil, "unknown_model", nil
	insert(t, []ledger.Call{known, unknown})
	for _, tc := range []struct {
		tenant      string
		cost, input string
	}{
		{"known", "1.5", "10"},
		{"unknown", "0 " + conventions.UnknownMarker, "0 " + conventions.UnknownMarker},
		{"empty", "0", "0"},
	} {
		for _, f := range []Format{FormatJSONL, FormatCSV, FormatParquet} {
			dir := filepath.Join(t.TempDir(), "b")
			m, err := Export(ctx, store, auditor(tc.tenant), request(tc.tenant, f), dir)
			if err != nil {
				t.Fatalf("%s %s: %v", tc.tenant, f, err)
			}
			if m.Totals.CostUSD.Total != tc.cost || m.Totals.InputTokens.Total != tc.input {
				t.Errorf("%s %s: cost %q input %q, want %q %q", tc.tenant, f, m.Totals.CostUSD.Total, m.Totals.InputTokens.Total, tc.cost, tc.input)
			}
			if _, err := Verify(ctx, dir, engineOnly(store.Engine())); err != nil {
				t.Errorf("%s %s: verify: %v", tc.tenant, f, err)
			}
		}
	}
}

// bundleOf exports tenant's calls in format f to a fresh directory.
func bundleOf(t *testing.T, tenant string, f Format) (string, Manifest) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bundle")
	m, err := Export(context.Background(), store, auditor(tenant), request(tenant, f), dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, m
}

// editFile rewrites one file of a bundle.
func editFile(t *testing.T, path string, edit func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := edit(bytes.Clone(b))
	if bytes.Equal(out, b) {
		t.Fatal("the edit changed nothing")
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
}

// editManifest rewrites the manifest as an attacker who covers tracks would.
func editManifest(t *testing.T, dir string, edit func(*Manifest)) {
	t.Helper()
	m, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	edit(&m)
	b, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, ManifestName), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// fixHash makes the manifest state the file's current SHA-256 and size.
func fixHash(t *testing.T, dir string) {
	editManifest(t, dir, func(m *Manifest) {
		sum, n, err := hashFile(filepath.Join(dir, m.Files[0].Name))
		if err != nil {
			t.Fatal(err)
		}
		m.Files[0].SHA256, m.Files[0].Bytes = sum, n
	})
}

// swapLines swaps lines i and j (0-based) of a file without line breaks
// inside its records.
func swapLines(i, j int) func([]byte) []byte {
	return func(b []byte) []byte {
		lines := bytes.SplitAfter(b, []byte("\n"))
		lines[i], lines[j] = lines[j], lines[i]
		return bytes.Join(lines, nil)
	}
}

func dropLine(i int) func([]byte) []byte {
	return func(b []byte) []byte {
		lines := bytes.SplitAfter(b, []byte("\n"))
		return bytes.Join(append(lines[:i], lines[i+1:]...), nil)
	}
}

func TestVerifyNamesTampering(t *testing.T) {
	const tenant = "plain"
	var calls []ledger.Call
	for i := range 3 {
		calls = append(calls, newCall(tenant, i))
	}
	insert(t, calls)
	ctx := context.Background()
	// Rows 0, 1, 2; the CSV has a header line first.
	oneByte := func(b []byte) []byte {
		return bytes.Replace(b, []byte("chatcmpl-000001"), []byte("chatcmpl-000009"), 1)
	}
	cases := []struct {
		name    string
		formats []Format
		tamper  func(t *testing.T, dir string, m Manifest)
		// want are substrings of the first problem.
		want []string
	}{
		{"one byte of one row", []Format{FormatJSONL, FormatCSV}, func(t *testing.T, dir string, m Manifest) {
			editFile(t, filepath.Join(dir, m.Files[0].Name), oneByte)
		}, []string{"rows 1–3", "do not hash to the manifest's chain"}},
		{"one row edited and the file hash fixed", []Format{FormatJSONL, FormatCSV}, func(t *testing.T, dir string, m Manifest) {
			editFile(t, filepath.Join(dir, m.Files[0].Name), oneByte)
			fixHash(t, dir)
		}, []string{"rows 1–3", "do not hash"}},
		{"row deleted", []Format{FormatJSONL}, func(t *testing.T, dir string, m Manifest) {
			editFile(t, filepath.Join(dir, m.Files[0].Name), dropLine(1))
		}, []string{"calls.jsonl: 2 rows, the manifest says 3"}},
		{"row deleted", []Format{FormatCSV}, func(t *testing.T, dir string, m Manifest) {
			editFile(t, filepath.Join(dir, m.Files[0].Name), dropLine(2))
		}, []string{"calls.csv: 2 rows, the manifest says 3"}},
		{"two rows swapped", []Format{FormatJSONL}, func(t *testing.T, dir string, m Manifest) {
			editFile(t, filepath.Join(dir, m.Files[0].Name), swapLines(0, 1))
		}, []string{"calls.jsonl rows 1–3", "moved"}},
		{"two rows swapped", []Format{FormatCSV}, func(t *testing.T, dir string, m Manifest) {
			editFile(t, filepath.Join(dir, m.Files[0].Name), swapLines(1, 2))
		}, []string{"calls.csv rows 1–3", "moved"}},
		{"manifest totals edited", []Format{FormatJSONL, FormatCSV, FormatParquet}, func(t *testing.T, dir string, m Manifest) {
			editManifest(t, dir, func(m *Manifest) { m.Totals.CostUSD.Total = "0.0001" })
		}, []string{"totals.cost_usd", `"0.0001"`, `"0.0003"`}},
		{"chain head edited", []Format{FormatJSONL}, func(t *testing.T, dir string, m Manifest) {
			editManifest(t, dir, func(m *Manifest) { m.Files[0].ChainHead = strings.Repeat("0", 64) })
		}, []string{"calls.jsonl rows 1–3"}},
		{"row count edited", []Format{FormatCSV}, func(t *testing.T, dir string, m Manifest) {
			editManifest(t, dir, func(m *Manifest) { m.Files[0].Rows = 2 })
		}, []string{"calls.csv: 3 rows, the manifest says 2"}},
		{"CSV quoting broken", []Format{FormatCSV}, func(t *testing.T, dir string, m Manifest) {
			editFile(t, filepath.Join(dir, m.Files[0].Name), func(b []byte) []byte {
				return bytes.Replace(b, []byte(`"chatcmpl-000001"`), []byte(`"chatcmpl"-000001"`), 1)
			})
		}, []string{"calls.csv row 2", "not a CSV record"}},
		{"byte flipped", []Format{FormatParquet}, func(t *testing.T, dir string, m Manifest) {
			editFile(t, filepath.Join(dir, m.Files[0].Name), func(b []byte) []byte { b[len(b)/2] ^= 0xff; return b })
		}, []string{"calls.parquet"}},
		{"row rewritten by the engine and the file hash fixed", []Format{FormatParquet}, func(t *testing.T, dir string, m Manifest) {
			path := filepath.Join(dir, m.Files[0].Name)
			forged := path + ".forged"
			local, ok := store.Engine().(*chdb.Engine)
			if !ok {
				t.Skip("the forger rewrites the file with a local engine; this process's is behind the server adapter")
			}
			err := local.Exec(ctx, "SELECT * REPLACE (if(response_id = 'chatcmpl-000001', 'chatcmpl-000009', response_id) AS response_id) FROM file("+
				storage.Quote(path)+", 'Parquet') INTO OUTFILE "+storage.Quote(forged)+" FORMAT Parquet")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(forged, path); err != nil {
				t.Fatal(err)
			}
			fixHash(t, dir)
		}, []string{"calls.parquet rows 1–3", "do not hash"}},
	}
	for _, tc := range cases {
		for _, f := range tc.formats {
			t.Run(tc.name+"/"+string(f), func(t *testing.T) {
				dir, m := bundleOf(t, tenant, f)
				if _, err := Verify(ctx, dir, engineOnly(store.Engine())); err != nil {
					t.Fatalf("before tampering: %v", err)
				}
				tc.tamper(t, dir, m)
				report, err := Verify(ctx, dir, engineOnly(store.Engine()))
				if !errors.Is(err, ErrMismatch) {
					t.Fatalf("verify passed a tampered bundle: %v", err)
				}
				t.Log(report.Problems)
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q (problems %v)", err, w, report.Problems)
					}
				}
			})
		}
	}
}

func TestVerifyNamesTheCheckpointWindow(t *testing.T) {
	const tenant = "many"
	calls := make([]ledger.Call, 2500)
	for i := range calls {
		calls[i] = newCall(tenant, i)
	}
	insert(t, calls)
	for _, tc := range []struct {
		row         int
		first, last uint64
	}{{1500, 1001, 2000}, {2300, 2001, 2500}, {1, 1, 1000}} {
		dir, m := bundleOf(t, tenant, FormatJSONL)
		if len(m.Files[0].Checkpoints) != 2 {
			t.Fatalf("%d checkpoints for 2500 rows", len(m.Files[0].Checkpoints))
		}
		editFile(t, filepath.Join(dir, "calls.jsonl"), func(b []byte) []byte {
			id := fmt.Sprintf("chatcmpl-%06d", tc.row-1)
			return bytes.Replace(b, []byte(id), []byte("chatcmpl-XXXXXX"), 1)
		})
		report, err := Verify(context.Background(), dir, VerifyOptions{})
		if !errors.Is(err, ErrMismatch) || report.Problems[0].FirstRow != tc.first || report.Problems[0].LastRow != tc.last {
			t.Errorf("row %d tampered: %v %+v", tc.row, err, report.Problems)
		}
	}
}

func TestVerifyChecksTheExpectedRoot(t *testing.T) {
	insert(t, []ledger.Call{newCall("rooted", 1)})
	dir, m := bundleOf(t, "rooted", FormatCSV)
	if _, err := Verify(context.Background(), dir, VerifyOptions{Root: m.Root}); err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(context.Background(), dir, VerifyOptions{Root: strings.Repeat("ab", 32)}); !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "expected root") {
		t.Fatalf("wrong root: %v", err)
	}
	// A Parquet bundle without an engine to read it fails, it does not pass.
	pdir, _ := bundleOf(t, "rooted", FormatParquet)
	if _, err := Verify(context.Background(), pdir, VerifyOptions{}); !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "needs an engine") {
		t.Fatalf("parquet without engine: %v", err)
	}
}

// accessEntries returns the access-log entries of actor, newest first.
func accessEntries(t *testing.T, tenant, actor string) []ledgerstore.AccessEntry {
	t.Helper()
	all, err := store.AccessLog(context.Background(), ledgerstore.AccessFilter{Tenant: tenant})
	if err != nil {
		t.Fatal(err)
	}
	var out []ledgerstore.AccessEntry
	for _, e := range all {
		if e.Actor == actor {
			out = append(out, e)
		}
	}
	return out
}

func TestEveryAttemptIsRecorded(t *testing.T) {
	ctx := context.Background()
	const tenant = "guarded"
	insert(t, []ledger.Call{newCall(tenant, 1)})
	ok := request(tenant, FormatJSONL)
	withLog := ok
	withLog.IncludeAccessLog = true
	noReason := ok
	noReason.Reason = "  "
	badFormat := ok
	badFormat.Format = "xml"
	badRange := ok
	badRange.To = badRange.From
	allTenants := ok
	allTenants.Tenant = ""
	cases := []struct {
		name   string
		p      access.Principal
		req    Request
		detail string
	}{
		{"viewer", access.Principal{User: "vic", Role: access.RoleViewer, Tenants: []string{tenant}}, ok, DetailRole},
		{"other tenant", access.Principal{User: "oto", Role: access.RoleAuditor, Tenants: []string{"globex"}}, ok, access.DetailTenant},
		{"all tenants without the grant", access.Principal{User: "alt", Role: access.RoleAdmin, Tenants: []string{tenant}}, allTenants, access.DetailTenant},
		{"auditor asks for the access log", access.Principal{User: "aud", Role: access.RoleAuditor, Tenants: []string{tenant}}, withLog, DetailAccessLog},
		{"no reason", access.Principal{User: "nor", Role: access.RoleAuditor, Tenants: []string{tenant}}, noReason, access.DetailReason},
		{"bad format", access.Principal{User: "baf", Role: access.RoleAuditor, Tenants: []string{tenant}}, badFormat, access.DetailInvalidInput},
		{"empty range", access.Principal{User: "bar", Role: access.RoleAuditor, Tenants: []string{tenant}}, badRange, access.DetailInvalidInput},
	}
	for _, tc := range cases {
		dir := filepath.Join(t.TempDir(), "bundle")
		_, err := Export(ctx, store, tc.p, tc.req, dir)
		if !errors.Is(err, access.ErrDenied) {
			t.Errorf("%s: got %v, want denial", tc.name, err)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: a bundle directory was created", tc.name)
		}
		logTenant := tc.req.Tenant
		if logTenant == "" {
			logTenant = access.AllTenants
		}
		entries := accessEntries(t, logTenant, tc.p.User)
		if len(entries) != 1 || entries[0].Action != ActionExport || entries[0].Outcome != access.OutcomeDenied || entries[0].Detail != tc.detail || entries[0].Role != string(tc.p.Role) {
			t.Errorf("%s: recorded %+v, want one denied export with detail %s", tc.name, entries, tc.detail)
		}
	}

	// An export that fails is recorded as failed; what was in the
	// directory stays.
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "keep"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := access.Principal{User: "fay", Role: access.RoleAuditor, Tenants: []string{tenant}}
	if _, err := Export(ctx, store, p, ok, full); err == nil || errors.Is(err, access.ErrDenied) {
		t.Fatalf("non-empty directory: %v", err)
	}
	if e := accessEntries(t, tenant, "fay"); len(e) != 1 || e[0].Outcome != access.OutcomeFailed || e[0].Detail != DetailFailed {
		t.Errorf("failed export recorded as %+v", e)
	}
	if entries, _ := os.ReadDir(full); len(entries) != 1 {
		t.Errorf("the failed export left %d entries", len(entries))
	}

	// An allowed export is recorded with its root and row counts.
	dir := filepath.Join(t.TempDir(), "bundle")
	p.User = "alma"
	m, err := Export(ctx, store, p, ok, dir)
	if err != nil {
		t.Fatal(err)
	}
	e := accessEntries(t, tenant, "alma")
	wantDetail := fmt.Sprintf("format=jsonl from=%s to=%s include_access_log=false include_state=false generated_at=%s calls=1 conflicts=0",
		ok.From.UTC().Format(time.RFC3339Nano), ok.To.UTC().Format(time.RFC3339Nano), m.GeneratedAt.Format(time.RFC3339Nano))
	if len(e) != 1 || e[0].Outcome != access.OutcomeAllowed || e[0].Ref != m.Root || e[0].EventID != m.AccessEventID ||
		e[0].Detail != wantDetail || e[0].Reason != ok.Reason || !e[0].At.Equal(m.GeneratedAt) {
		t.Errorf("allowed export recorded as %+v (root %s, detail want %q)", e, m.Root, wantDetail)
	}
}

func TestExportWithAccessLogAndState(t *testing.T) {
	ctx := context.Background()
	const tenant = "stateful"
	insert(t, []ledger.Call{newCall(tenant, 1)})
	// A denied attempt the exported access log must contain.
	_, _ = Export(ctx, store, access.Principal{User: "vic", Role: access.RoleViewer, Tenants: []string{tenant}}, request(tenant, FormatCSV), t.TempDir())
	hold := fmt.Sprintf(`INSERT INTO legal_holds (hold_id, tenant, reason, created_by, created_at, status, at, from_time, to_time)
		VALUES ('hold_1', %s, 'litigation "A", 2026', 'lee', now64(9), 'active', %s, '1900-01-01 00:00:00', '2261-01-01 00:00:00')`,
		storage.Quote(tenant), "toDateTime64('2026-03-01 08:00:00', 9, 'UTC')")
	if err := store.Engine().Exec(ctx, hold); err != nil {
		t.Fatal(err)
	}
	req := request(tenant, FormatCSV)
	req.IncludeAccessLog, req.IncludeState = true, true
	req.To = time.Now().Add(time.Hour)
	for _, f := range []Format{FormatCSV, FormatParquet} {
		req.Format = f
		dir := filepath.Join(t.TempDir(), "bundle")
		m, err := Export(ctx, store, admin, req, dir)
		if err != nil {
			t.Fatal(err)
		}
		rows := map[string]uint64{}
		for _, file := range m.Files {
			rows[file.Table] = file.Rows
		}
		if len(m.Files) != 7 || rows["calls"] != 1 || rows["legal_holds"] != 1 || rows["access_log"] < 1 || rows["deletion_jobs"] != 0 {
			t.Errorf("%s: files %v", f, rows)
		}
		if _, err := Verify(ctx, dir, engineOnly(store.Engine())); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestManifestMetadataIsCoveredByTheRoot: changing what a manifest says
// about the export itself — period, tenant, flags, format, author, time,
// reason — fails verify, although every file still matches.
func TestManifestMetadataIsCoveredByTheRoot(t *testing.T) {
	insert(t, []ledger.Call{newCall("meta", 1), newCall("meta", 2)})
	for _, tc := range []struct {
		name string
		edit func(*Manifest)
	}{
		{"period start", func(m *Manifest) { m.Query.From = m.Query.From.Add(-24 * time.Hour) }},
		{"period end", func(m *Manifest) { m.Query.To = m.Query.To.Add(time.Hour) }},
		{"tenant", func(m *Manifest) { m.Query.Tenant = "other" }},
		{"tenant to all", func(m *Manifest) { m.Query.Tenant = "" }},
		{"include_access_log", func(m *Manifest) { m.Query.IncludeAccessLog = true }},
		{"include_state", func(m *Manifest) { m.Query.IncludeState = true }},
		{"reason", func(m *Manifest) { m.Query.Reason = "routine" }},
		{"author", func(m *Manifest) { m.GeneratedBy = "someone-else" }},
		{"time", func(m *Manifest) { m.GeneratedAt = m.GeneratedAt.Add(time.Second) }},
		{"access event", func(m *Manifest) { m.AccessEventID = strings.Repeat("0", 32) }},
		{"engine", func(m *Manifest) { m.Engine = "1.0" }},
	} {
		for _, f := range []Format{FormatJSONL, FormatCSV} {
			dir, _ := bundleOf(t, "meta", f)
			if _, err := Verify(context.Background(), dir, VerifyOptions{}); err != nil {
				t.Fatalf("untouched bundle: %v", err)
			}
			editManifest(t, dir, tc.edit)
			_, err := Verify(context.Background(), dir, VerifyOptions{})
			if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "root does not match") {
				t.Errorf("%s changed in a %s manifest: verify says %v", tc.name, f, err)
			}
		}
	}
}

// TestParquetExportThroughAServer: a server writes no files for a client,
// so over the server adapter the export asks for the Parquet file over the
// connection and has the server read it back as external data. The bundle
// verifies offline, and its rows are those of the embedded export.
func TestParquetExportThroughAServer(t *testing.T) {
	ctx := context.Background()
	local, ok := store.Engine().(*chdb.Engine)
	if !ok {
		t.Skip("the store is behind the server adapter already: every export test of this run goes through it")
	}
	const tenant = "via-server"
	insert(t, trickyCalls(tenant))
	adapter, front, err := storagetest.OverChDB(ctx, local)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = adapter.Close(); front.Close() }()
	server := ledgerstore.New(adapter)

	embedded, err := Export(ctx, store, auditor(tenant), request(tenant, FormatParquet), filepath.Join(t.TempDir(), "embedded"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "server")
	viaServer, err := Export(ctx, server, auditor(tenant), request(tenant, FormatParquet), dir)
	if err != nil {
		t.Fatalf("Parquet export through the server adapter: %v", err)
	}
	if len(viaServer.Files) != len(embedded.Files) {
		t.Fatalf("%d files through the server, %d embedded", len(viaServer.Files), len(embedded.Files))
	}
	for i, f := range viaServer.Files {
		e := embedded.Files[i]
		if f.Name != e.Name || f.Rows != e.Rows || f.ChainHead != e.ChainHead {
			t.Errorf("%s: %d rows, chain %s through the server; %s: %d rows, chain %s embedded", f.Name, f.Rows, f.ChainHead, e.Name, e.Rows, e.ChainHead)
		}
	}
	if _, err = Verify(ctx, dir, engineOnly(store.Engine())); err != nil {
		t.Fatalf("the bundle written through the server does not verify: %v", err)
	}
	var readBack int
	for _, r := range front.Requests() {
		if strings.Contains(r.SQL, "INTO OUTFILE") {
			t.Errorf("the adapter asked the server to write a file: %.200s", r.SQL)
		}
		if strings.Contains(r.SQL, "FROM "+exportedTable) && r.BodyBytes > 0 {
			readBack++
		}
	}
	if readBack == 0 {
		t.Fatal("no file was sent back to the server to be read")
	}
}
