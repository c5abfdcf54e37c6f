package collector_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/internal/s3test"
	"github.com/docketlabs/docket/internal/spantest"
	"github.com/docketlabs/docket/ledger/ledgertest"
	"github.com/docketlabs/docket/ledger/storage/chdb"

	"github.com/docketlabs/docket/internal/proctest"
)

// contentCanaries are 100 distinct strings that must never leave the
// collector: emails, phone numbers, card numbers (Luhn-valid), API keys,
// Korean resident registration numbers and names.
func contentCanaries() []string {
	out := make([]string, 0, 100)
	for i := range 100 {
		var c string
		switch i % 6 {
		case 0:
			c = fmt.Sprintf("min%02d.canary@example.test", i)
		case 1:
			c = fmt.Sprintf("+82-10-7%03d-%04d", i, 9000+i)
		case 2:
			c = luhnCard(fmt.Sprintf("491673%09d", 104729*i+12345))
		case 3:
			h := sha256.Sum256(fmt.Appendf(nil, "api key %d", i))
			c = "sk-canary-" + hex.EncodeToString(h[:16])
		case 4:
			c = fmt.Sprintf("%02d%02d%02d-%d%06d", 70+i%30, 1+i%12, 1+i%28, 1+i%2, 400000+i)
		case 5:
			if i%2 == 0 {
				c = fmt.Sprintf("홍길동%02d 고객님", i)
			} else {
				c = fmt.Sprintf("Jane Canary-%02d Doe", i)
			}
		}
		out = append(out, c)
	}
	return out
}

// luhnCard appends the Luhn check digit to 15 digits and groups by four.
func luhnCard(digits string) string {
	sum := 0
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if (len(digits)-i)%2 == 1 {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	full := digits + fmt.Sprint((10-sum%10)%10)
	return full[0:4] + " " + full[4:8] + " " + full[8:12] + " " + full[12:16]
}

func messagesJSON(role, text string) string {
	b, _ := json.Marshal([]map[string]any{{"role": role, "parts": []map[string]any{{"type": "text", "content": text}}}})
	return string(b)
}

// placeCanary puts c into span content in one of seven forms.
func placeCanary(s ptrace.Span, form int, c string) {
	a := s.Attributes()
	switch form {
	case 0:
		a.PutStr(conventions.InputMessages, messagesJSON("user", "Please update my contact: "+c))
		out := a.PutEmptySlice(conventions.OutputMessages).AppendEmpty().SetEmptyMap()
		out.PutStr("role", "assistant")
		out.PutStr("finish_reason", "stop")
		p := out.PutEmptySlice("parts").AppendEmpty().SetEmptyMap()
		p.PutStr("type", "text")
		p.PutStr("content", "Done.")
	case 1:
		a.PutStr(conventions.SystemInstructions, `[{"type":"text","content":"The customer is `+c+`."}]`)
		a.PutStr(conventions.ToolDefinitions, `[{"type":"function","name":"lookup_customer"}]`)
	case 2:
		a.PutStr(conventions.Prompt, "Who is "+c+"?")
		a.PutStr(conventions.Completion, "I cannot say.")
	case 3:
		a.PutStr("gen_ai.prompt.0.role", "user")
		a.PutStr("gen_ai.prompt.0.content", "My details: "+c)
		a.PutStr("gen_ai.completion.0.role", "assistant")
		a.PutStr("gen_ai.completion.0.content", "Noted.")
	case 4:
		ev := s.Events().AppendEmpty()
		ev.SetName("gen_ai.content.prompt")
		ev.Attributes().PutStr(conventions.Prompt, messagesJSON("user", c))
		ev = s.Events().AppendEmpty()
		ev.SetName("gen_ai.content.completion")
		ev.Attributes().PutStr(conventions.Completion, "Thanks.")
	case 5:
		ev := s.Events().AppendEmpty()
		ev.SetName("gen_ai.client.inference.operation.details")
		ev.Attributes().PutStr(conventions.OutputMessages, messagesJSON("assistant", "Your record: "+c))
	case 6:
		a.PutStr("gen_ai.tool.call.arguments", `{"query":"`+c+`"}`)
		a.PutStr("gen_ai.tool.call.result", `{"found":true}`)
	}
}

// placeLogCanary makes lr a GenAI event log record carrying c.
func placeLogCanary(lr plog.LogRecord, form int, c string) {
	switch form {
	case 0:
		lr.SetEventName("gen_ai.user.message")
		lr.Body().SetEmptyMap().PutStr("content", "Hi, I am "+c)
	case 1:
		lr.SetEventName("gen_ai.system.message")
		lr.Body().SetStr("Customer on file: " + c)
	case 2:
		lr.SetEventName("gen_ai.assistant.message")
		lr.Body().SetEmptyMap().PutEmptySlice("tool_calls").AppendEmpty().SetEmptyMap().PutStr("arguments", `{"who":"`+c+`"}`)
	case 3:
		lr.SetEventName("gen_ai.tool.message")
		lr.Body().SetEmptyMap().PutStr("content", c)
	case 4:
		lr.SetEventName("gen_ai.choice")
		m := lr.Body().SetEmptyMap()
		m.PutInt("index", 0)
		m.PutEmptyMap("message").PutStr("content", "Confirmed "+c)
	case 5:
		lr.Attributes().PutStr(conventions.EventNameAttribute, "gen_ai.client.inference.operation.details")
		lr.Attributes().PutStr(conventions.InputMessages, messagesJSON("user", c))
	}
}

func spanIDOf(i int) pcommon.SpanID {
	return pcommon.SpanID{0xc0, 0, 0, 0, byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i)}
}

func indexOf(id pcommon.SpanID) int {
	return int(id[4])<<24 | int(id[5])<<16 | int(id[6])<<8 | int(id[7])
}

// contentBatch makes calls first..first+n-1: one LLM call span and one GenAI
// log record each, call i carrying canary i%100.
func contentBatch(first, n int, canaries []string) (ptrace.Traces, plog.Logs) {
	tenant := []string{"acme", "globex"}[first/n%2]
	td, ld := ptrace.NewTraces(), plog.NewLogs()
	rs, rl := td.ResourceSpans().AppendEmpty(), ld.ResourceLogs().AppendEmpty()
	for _, res := range []pcommon.Resource{rs.Resource(), rl.Resource()} {
		res.Attributes().PutStr(conventions.ServiceName, "support-bot")
		res.Attributes().PutStr(conventions.TenantAttribute, tenant)
	}
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	records := rl.ScopeLogs().AppendEmpty().LogRecords()
	now := time.Now()
	for i := first; i < first+n; i++ {
		c := canaries[i%len(canaries)]
		s := spantest.Chat(spans, "openai", "gpt-4o-mini")
		spantest.At(s, pcommon.TraceID{0xc0, byte(i >> 8), byte(i)}, spanIDOf(i), now)
		spantest.Response(s, "", fmt.Sprintf("chatcmpl-e2e-%d", i))
		placeCanary(s, (i+i/100)%7, c)
		lr := records.AppendEmpty()
		lr.SetTraceID(s.TraceID())
		lr.SetSpanID(s.SpanID())
		placeLogCanary(lr, i%6, c)
	}
	return td, ld
}

// refsOn returns the content references on a map.
func refsOn(attrs pcommon.Map) []string {
	var out []string
	for k, v := range attrs.All() {
		if strings.HasSuffix(k, "_ref") && strings.HasPrefix(v.Str(), contentstore.Scheme+"://") {
			out = append(out, v.Str())
		}
	}
	return out
}

// contentKeyLeft reports a content attribute still on a map.
func contentKeyLeft(attrs pcommon.Map) string {
	for k := range attrs.All() {
		for _, ck := range []string{conventions.InputMessages, conventions.OutputMessages, conventions.SystemInstructions,
			conventions.ToolDefinitions, "gen_ai.tool.call.arguments", "gen_ai.tool.call.result", conventions.Prompt, conventions.Completion} {
			if k == ck || strings.HasPrefix(k, ck+".") {
				return k
			}
		}
	}
	return ""
}

// TestContentNeverLeavesTheCollector sends 1,000 LLM call spans and 1,000
// GenAI log records carrying 100 canaries through `docket collector` with
// the content store on a real S3 server, which is stopped for a fifth of
// the run. No canary may appear in what the collector sends on, logs,
// exposes as metrics or writes to the ledger; every canary must come back
// from the store by reference.
func TestContentNeverLeavesTheCollector(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the collector")
	}
	const calls, perBatch = 1000, 50
	const outageFrom, outageTo = 400, 600 // calls sent while S3 is down
	canaries := contentCanaries()
	for i, a := range canaries {
		for j, b := range canaries {
			if i != j && strings.Contains(a, b) {
				t.Fatalf("canary %q contains canary %q", a, b)
			}
		}
	}
	s3 := s3test.Start(t)
	be := &backend{}
	sink := httptest.NewServer(be)
	defer sink.Close()
	const secret = "e2e-content-secret-0123456789abcdef"
	metricsPort := proctest.FreePort(t)
	p := newCollectorProc(t, docketBinary(t), "content-e2e.yaml",
		"E2E_BACKEND="+sink.URL, "E2E_METRICS_PORT="+metricsPort, "E2E_CONTENT_SECRET="+secret,
		"E2E_S3_ENDPOINT="+s3.Endpoint, "E2E_S3_ACCESS_KEY="+s3.AccessKey, "E2E_S3_SECRET_KEY="+s3.SecretKey)
	p.start()
	logsURL := strings.Replace(p.otlpURL, "/v1/traces", "/v1/logs", 1)

	start := time.Now()
	for first := 0; first < calls; first += perBatch {
		switch first {
		case outageFrom:
			s3.Stop()
		case outageTo:
			s3.Restart()
			// Longer than the store's longest backoff: the next write
			// probes the server and finds it back.
			time.Sleep(6 * time.Second)
		}
		td, ld := contentBatch(first, perBatch, canaries)
		send(t, p.otlpURL, td)
		body, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
		if err != nil {
			t.Fatal(err)
		}
		sendBody(t, logsURL, body)
	}
	t.Logf("sent %d calls and %d log records in %v (6 s of it waiting after the S3 restart)", calls, calls, time.Since(start))
	// One call with a 10 MB input: stored whole (limit 16 MiB), never on the span.
	big := calls
	td, _ := contentBatch(big, 1, canaries)
	bigSpan := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	bigSpan.Attributes().PutStr(conventions.InputMessages, messagesJSON("user", strings.Repeat("lorem ipsum ", 10<<20/12)+canaries[0]))
	send(t, p.otlpURL, td)

	p.waitCalls(calls+1, 2*time.Minute)
	waitFor(t, "every span and log record at the backend", time.Minute, func() bool {
		be.mu.Lock()
		defer be.mu.Unlock()
		spans, logs := 0, 0
		for _, td := range be.traces {
			spans += td.SpanCount()
		}
		for _, ld := range be.logs {
			logs += ld.LogRecordCount()
		}
		return spans == calls+1 && logs == calls
	})
	metricsText := scrape(t, "http://127.0.0.1:"+metricsPort+"/metrics")
	p.signal(syscall.SIGTERM)
	collectorLog, err := os.ReadFile(filepath.Join(p.dir, "collector.log"))
	if err != nil {
		t.Fatal(err)
	}
	ledgerRows := dumpLedger(t, filepath.Join(p.dir, "ledger"))

	// 1. Nothing leaves: backend bytes, collector log, metrics, ledger rows,
	// and every file the collector wrote (ledger engine, queue).
	be.mu.Lock()
	defer be.mu.Unlock()
	places := map[string][]byte{"OTLP backend": be.raw.Bytes(), "collector log": collectorLog, "metrics endpoint": metricsText}
	for _, c := range canaries {
		for where, b := range places {
			if bytes.Contains(b, []byte(c)) {
				t.Errorf("canary %q found in the %s", c, where)
			}
		}
		for _, row := range ledgerRows {
			if row.mentions(c) {
				t.Errorf("canary %q found in ledger table %s", c, row.table)
			}
		}
	}
	if err := filepath.WalkDir(p.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || d.Name() == "collector.log" {
			return err // the engine links tables into place: read the files once
		}
		b, err := os.ReadFile(path)
		for _, c := range canaries {
			if bytes.Contains(b, []byte(c)) {
				t.Errorf("canary %q in file %s", c, path)
			}
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// The checks above would see content: the debug exporter prints every
	// attribute into the log, and the backend got every span.
	if !bytes.Contains(collectorLog, []byte("docket-content://acme/")) || !bytes.Contains(be.raw.Bytes(), []byte("docket-content://globex/")) {
		t.Fatal("references not visible in the collector log or the backend: the leak checks would not see content either")
	}
	if !bytes.Contains(metricsText, []byte("otelcol_processor_contentref_items")) {
		t.Fatal("contentref metrics missing from the metrics endpoint")
	}

	// 2. Every span and log record left without content, with a status:
	// stored outside the outage, store_unavailable during it.
	store, err := contentstore.Open(context.Background(), contentStoreConfig(s3, secret), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	retrieved := map[string]bool{}
	fetchAll := func(refs []string) string {
		var b strings.Builder
		for _, s := range refs {
			ref, err := contentstore.ParseRef(s)
			if err != nil {
				t.Fatalf("reference %q: %v", s, err)
			}
			content, err := store.Get(context.Background(), ref)
			if err != nil {
				t.Fatalf("get %s: %v", s, err)
			}
			b.Write(content)
		}
		return b.String()
	}
	wantStatus := func(i int) string {
		if i >= outageFrom && i < outageTo {
			return "store_unavailable"
		}
		return "stored"
	}
	counts := map[string]int{}
	spansByID := map[string]ptrace.Span{}
	for _, td := range be.traces {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					i := indexOf(s.SpanID())
					spansByID[s.SpanID().String()] = s
					status, _ := s.Attributes().Get(conventions.ContentStatus)
					counts[status.Str()]++
					if status.Str() != wantStatus(i) {
						t.Errorf("call %d: status %q, want %q", i, status.Str(), wantStatus(i))
					}
					refs := refsOn(s.Attributes())
					if k := contentKeyLeft(s.Attributes()); k != "" {
						t.Errorf("call %d: content attribute %s left the collector", i, k)
					}
					for _, ev := range s.Events().All() {
						refs = append(refs, refsOn(ev.Attributes())...)
						if k := contentKeyLeft(ev.Attributes()); k != "" {
							t.Errorf("call %d: event content %s left the collector", i, k)
						}
					}
					if status.Str() == "store_unavailable" {
						if len(refs) != 0 {
							t.Errorf("call %d: references without stored content", i)
						}
						continue
					}
					got := fetchAll(refs)
					c := canaries[i%len(canaries)]
					if !strings.Contains(got, c) {
						t.Errorf("call %d: canary not retrievable through %v", i, refs)
					}
					retrieved[c] = true
					if i == big && len(got) < 10<<20 {
						t.Errorf("10 MB call: %d bytes retrievable", len(got))
					}
				}
			}
		}
	}
	if counts["stored"]+counts["store_unavailable"] != calls+1 || counts["store_unavailable"] != outageTo-outageFrom {
		t.Errorf("span statuses %v: want %d stored and %d store_unavailable", counts, calls+1-(outageTo-outageFrom), outageTo-outageFrom)
	}
	logCounts := map[string]int{}
	for _, ld := range be.logs {
		for _, rl := range ld.ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				for _, lr := range sl.LogRecords().All() {
					i := indexOf(lr.SpanID())
					status, _ := lr.Attributes().Get(conventions.ContentStatus)
					logCounts[status.Str()]++
					if status.Str() != wantStatus(i) || lr.Body().Type() != pcommon.ValueTypeEmpty || contentKeyLeft(lr.Attributes()) != "" {
						t.Errorf("log of call %d: status %q, body %v, attributes %v", i, status.Str(), lr.Body().Type(), lr.Attributes().AsRaw())
						continue
					}
					if status.Str() == "stored" {
						c := canaries[i%len(canaries)]
						if !strings.Contains(fetchAll(refsOn(lr.Attributes())), c) {
							t.Errorf("log of call %d: canary not retrievable", i)
						}
						retrieved[c] = true
					}
				}
			}
		}
	}
	if len(retrieved) != len(canaries) {
		t.Errorf("%d of %d canaries retrievable from the store", len(retrieved), len(canaries))
	}

	// 3. The ledger row of each call carries the span's references and
	// status.
	ledgerCounts := map[string]int{}
	for _, row := range ledgerRows {
		if row.table != "llm_calls" {
			continue
		}
		var call struct {
			SpanID                string `json:"span_id"`
			InputRef              string `json:"input_ref"`
			OutputRef             string `json:"output_ref"`
			SystemInstructionsRef string `json:"system_instructions_ref"`
			ToolDefinitionsRef    string `json:"tool_definitions_ref"`
			ContentStatus         string `json:"content_status"`
			ContentBytes          *int64 `json:"content_bytes"`
		}
		if err := json.Unmarshal(row.raw, &call); err != nil {
			t.Fatal(err)
		}
		span, ok := spansByID[call.SpanID]
		if !ok {
			t.Errorf("ledger row for unknown span %s", call.SpanID)
			continue
		}
		ledgerCounts[call.ContentStatus]++
		attrs := span.Attributes()
		str := func(k string) string { v, _ := attrs.Get(k); return v.Str() }
		// ref is the reference the collector left for one part of the
		// content, under any of its names: on the span, else on one of its
		// events (the older forms).
		ref := func(keys ...string) string {
			maps := []pcommon.Map{attrs}
			for _, ev := range span.Events().All() {
				maps = append(maps, ev.Attributes())
			}
			for _, m := range maps {
				for _, k := range keys {
					if v, ok := m.Get(k); ok {
						return v.Str()
					}
				}
			}
			return ""
		}
		bytesAttr, _ := attrs.Get(conventions.ContentBytes)
		if call.ContentStatus != str(conventions.ContentStatus) || call.InputRef != ref(conventions.InputRef, "gen_ai.prompt_ref") ||
			call.OutputRef != ref(conventions.OutputRef, "gen_ai.completion_ref") ||
			call.SystemInstructionsRef != ref(conventions.SystemInstructionsRef) ||
			call.ToolDefinitionsRef != ref(conventions.ToolDefinitionsRef) || call.ContentBytes == nil || *call.ContentBytes != bytesAttr.Int() {
			t.Errorf("ledger row of span %s differs from the span: %s", call.SpanID, row.raw)
		}
	}
	t.Logf("spans by content status %v; log records %v; ledger rows %v; %d canaries retrieved from S3", counts, logCounts, ledgerCounts, len(retrieved))
}

func contentStoreConfig(s3 *s3test.Server, secret string) contentstore.Config {
	c := contentstore.NewDefaultConfig()
	c.S3 = configoptional.Some(contentstore.S3Config{
		Endpoint: s3.Endpoint, Bucket: "docket-content", AccessKey: s3.AccessKey, SecretKey: configopaque.String(s3.SecretKey),
		Insecure: true, Timeout: 10 * time.Second,
	})
	c.Secret = configopaque.String(secret)
	return c
}

func scrape(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ledgerRow is one row of a ledger table, as JSON.
type ledgerRow struct {
	table string
	raw   []byte
}

// mentions reports whether any string in the row contains s, after JSON
// unescaping.
func (r ledgerRow) mentions(s string) bool {
	var v any
	if json.Unmarshal(r.raw, &v) != nil {
		return bytes.Contains(r.raw, []byte(s))
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case string:
			return strings.Contains(x, s)
		case []any:
			for _, e := range x {
				if walk(e) {
					return true
				}
			}
		case map[string]any:
			for k, e := range x {
				if strings.Contains(k, s) || walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

// dumpLedger reads every row of every table of a stopped collector's
// embedded ledger. chDB allows one data directory per process, so a child
// process (this test binary, running TestHelperDumpLedger) does it.
func dumpLedger(t *testing.T, dir string) []ledgerRow {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperDumpLedger$")
	cmd.Env = append(os.Environ(), "E2E_LEDGER_DUMP="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("dump ledger: %v\n%s%s", err, out, stderr.Bytes())
	}
	var rows []ledgerRow
	tables := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		table, raw, ok := strings.Cut(sc.Text(), "\t")
		if !ok || !strings.HasPrefix(table, "ledger-row:") {
			continue
		}
		table = strings.TrimPrefix(table, "ledger-row:")
		tables[table]++
		rows = append(rows, ledgerRow{table: table, raw: []byte(raw)})
	}
	if tables["llm_calls"] == 0 {
		t.Fatalf("ledger dump has no llm_calls rows:\n%s", out)
	}
	t.Logf("ledger tables checked: %v", tables)
	return rows
}

// TestHelperDumpLedger is the child process of dumpLedger.
func TestHelperDumpLedger(t *testing.T) {
	dir := os.Getenv("E2E_LEDGER_DUMP")
	if dir == "" {
		t.Skip("runs only as the ledger dump process of TestContentNeverLeavesTheCollector")
	}
	eng, err := chdb.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	w := bufio.NewWriter(os.Stdout)
	defer func() { _ = w.Flush() }()
	err = ledgertest.EveryRow(context.Background(), eng, func(table string, row []byte) error {
		_, err := fmt.Fprintf(w, "ledger-row:%s\t%s\n", table, row)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
