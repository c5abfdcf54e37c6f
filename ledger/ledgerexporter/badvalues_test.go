package ledgerexporter

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/internal/shorttest"
	"github.com/docketlabs/docket/internal/spantest"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/storage/chdb"
	"github.com/docketlabs/docket/ledger/storageconfig"
	"github.com/docketlabs/docket/ledger/views"
)

// badValueCase is one tenant's spans and what the ledger must show of them.
type badValueCase struct {
	name  string
	spans func(ptrace.SpanSlice, time.Time)
	// rows is how many calls readers must see: one per span, none merged.
	rows  int
	check func(t *testing.T, c ledger.Call)
}

// chat adds a call span with valid IDs (n distinguishes them), started and
// ended around now.
func chat(spans ptrace.SpanSlice, now time.Time, n byte) ptrace.Span {
	s := spantest.Chat(spans, "openai", "gpt-4o-mini")
	s.SetTraceID(pcommon.TraceID{0xbd, n, 1})
	s.SetSpanID(pcommon.SpanID{0xbd, n, 2})
	s.SetStartTimestamp(pcommon.NewTimestampFromTime(now.Add(-time.Second)))
	s.SetEndTimestamp(pcommon.NewTimestampFromTime(now))
	s.Attributes().PutInt(conventions.UsageInput, 100)
	s.Attributes().PutInt(conventions.UsageOutput, 10)
	return s
}

func flagged(t *testing.T, c ledger.Call, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(c.AttributeIssues, w) {
			t.Errorf("span %s: attribute_issues %q lack %q", c.SpanID, c.AttributeIssues, w)
		}
	}
}

// sane checks what every stored row must be: timestamps of this century,
// end ≥ start, token counts in bounds, IDs of the right length.
func sane(t *testing.T, c ledger.Call, now time.Time) {
	t.Helper()
	for name, ts := range map[string]time.Time{"start": c.StartTime, "end": c.EndTime} {
		if ts.Before(now.Add(-conventions.DefaultMaxAge)) || ts.After(now.Add(conventions.DefaultMaxClockSkew)) {
			t.Errorf("span %s: %s_time %s stored as if reported", c.SpanID, name, ts)
		}
	}
	if c.EndTime.Before(c.StartTime) || c.DurationMS < 0 {
		t.Errorf("span %s: end %s before start %s, duration %v", c.SpanID, c.EndTime, c.StartTime, c.DurationMS)
	}
	for name, n := range map[string]*int64{"input": c.InputTokens, "output": c.OutputTokens, "cache_read": c.CacheReadTokens,
		"cache_write": c.CacheWriteTokens, "reasoning": c.ReasoningTokens, "max_tokens": c.MaxTokens} {
		if n != nil && (*n < 0 || *n > conventions.MaxTokenCount) {
			t.Errorf("span %s: %s tokens %d stored as if reported", c.SpanID, name, *n)
		}
	}
	if len(c.TraceID) != 32 || len(c.SpanID) != 16 || strings.Trim(c.TraceID, "0") == "" || strings.Trim(c.SpanID, "0") == "" {
		t.Errorf("row keyed by an invalid ID: trace %q span %q", c.TraceID, c.SpanID)
	}
	if len(c.AttributeIssues) > conventions.MaxIssues {
		t.Errorf("span %s: %d attribute_issues entries", c.SpanID, len(c.AttributeIssues))
	}
	for _, is := range c.AttributeIssues {
		if len(is) > 128 || !utf8.ValidString(is) || strings.IndexByte(is, 0) >= 0 {
			t.Errorf("span %s: attribute_issues entry of %d bytes: %q", c.SpanID, len(is), is[:min(len(is), 80)])
			break
		}
	}
}

func badValueCases() []badValueCase {
	ts := func(tm time.Time) pcommon.Timestamp { return pcommon.NewTimestampFromTime(tm) }
	noCost := func(t *testing.T, c ledger.Call) {
		if c.CostUSD != nil {
			t.Errorf("span %s: priced at %s from tokens never reported", c.SpanID, *c.CostUSD)
		}
	}
	return []badValueCase{
		{name: "negative tokens", rows: 1, spans: func(s ptrace.SpanSlice, now time.Time) {
			chat(s, now, 1).Attributes().PutInt(conventions.UsageInput, -5)
		}, check: func(t *testing.T, c ledger.Call) {
			flagged(t, c, "out_of_range:input_tokens")
			if c.InputTokens != nil {
				t.Errorf("input_tokens %d, want NULL", *c.InputTokens)
			}
			noCost(t, c)
		}},
		{name: "max int64 tokens", rows: 1, spans: func(s ptrace.SpanSlice, now time.Time) {
			a := chat(s, now, 1).Attributes()
			// A family that excludes cache reads from input: before, the
			// sum wrapped to -9223372036849764234.
			a.PutStr(conventions.ProviderName, "anthropic")
			a.PutInt(conventions.UsageInput, math.MaxInt64)
			a.PutInt(conventions.UsageCacheRead, 5011575)
			a.PutInt(conventions.UsageOutput, math.MaxInt64)
		}, check: func(t *testing.T, c ledger.Call) {
			flagged(t, c, "out_of_range:input_tokens", "out_of_range:output_tokens")
			if c.InputTokens != nil || c.OutputTokens != nil {
				t.Error("tokens out of range stored, want NULL")
			}
			noCost(t, c)
		}},
		{name: "year 2300 start", rows: 1, spans: func(s ptrace.SpanSlice, now time.Time) {
			sp := chat(s, now, 1)
			sp.SetStartTimestamp(ts(time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)))
			sp.SetEndTimestamp(ts(time.Date(2300, 1, 1, 0, 0, 1, 0, time.UTC)))
		}, check: func(t *testing.T, c ledger.Call) {
			flagged(t, c, "out_of_window:start_time", "out_of_window:end_time")
		}},
		{name: "max uint64 timestamps", rows: 1, spans: func(s ptrace.SpanSlice, now time.Time) {
			sp := chat(s, now, 1)
			sp.SetStartTimestamp(math.MaxUint64)
			sp.SetEndTimestamp(math.MaxUint64)
		}, check: func(t *testing.T, c ledger.Call) {
			flagged(t, c, "out_of_window:start_time", "out_of_window:end_time")
		}},
		{name: "end before start", rows: 1, spans: func(s ptrace.SpanSlice, now time.Time) {
			sp := chat(s, now, 1)
			sp.SetStartTimestamp(ts(now))
			sp.SetEndTimestamp(ts(now.Add(-time.Minute)))
		}, check: func(t *testing.T, c ledger.Call) {
			flagged(t, c, "end_before_start:end_time")
		}},
		{name: "all-zero span IDs", rows: 3, spans: func(s ptrace.SpanSlice, now time.Time) {
			for i := range 3 {
				sp := chat(s, now, 1) // one trace
				sp.SetSpanID(pcommon.SpanID{})
				sp.Attributes().PutInt(conventions.UsageInput, int64(100+i))
			}
		}, check: func(t *testing.T, c ledger.Call) {
			flagged(t, c, "invalid_id:span_id")
		}},
		{name: "empty trace and span IDs", rows: 3, spans: func(s ptrace.SpanSlice, now time.Time) {
			for i := range 3 {
				sp := chat(s, now, byte(i))
				sp.SetTraceID(pcommon.TraceID{})
				sp.SetSpanID(pcommon.SpanID{})
				// Same response ID: provider_calls would merge them were
				// they one trace.
				sp.Attributes().PutStr(conventions.ResponseID, "resp-1")
				sp.Attributes().PutInt(conventions.UsageInput, int64(100+i))
			}
		}, check: func(t *testing.T, c ledger.Call) {
			flagged(t, c, "invalid_id:trace_id", "invalid_id:span_id")
		}},
		{name: "hostile attribute keys", rows: 1, spans: func(s ptrace.SpanSlice, now time.Time) {
			a := chat(s, now, 1).Attributes()
			// Before, each invalid value quoted its raw key: megabytes of
			// keys with NUL bytes and invalid UTF-8 in one row.
			for i := range 200 {
				a.PutStr(fmt.Sprintf("%s\x00\xff%s%d", conventions.RequestPrefix, strings.Repeat("k", 32<<10), i), "\xff\x00")
			}
		}, check: func(t *testing.T, c ledger.Call) {
			flagged(t, c, "over_limit:attribute_issues")
		}},
		{name: "too many events and attributes", rows: 1, spans: func(s ptrace.SpanSlice, now time.Time) {
			sp := chat(s, now, 1)
			for i := range conventions.MaxAttributesPerRecord + 1 {
				sp.Attributes().PutInt(fmt.Sprintf("app.attr.%d", i), int64(i))
			}
			for range conventions.MaxEventsPerRecord + 1 {
				sp.Events().AppendEmpty().SetName("log")
			}
		}, check: func(t *testing.T, c ledger.Call) {
			flagged(t, c, "over_limit:attributes", "over_limit:events")
		}},
	}
}

// TestBadValuesAreFlaggedNotStored sends each case through the real
// exporter into the embedded engine and reads the rows back as the UI and
// API do (one row per provider call).
func TestBadValuesAreFlaggedNotStored(t *testing.T) {
	shorttest.Needs(t, shorttest.ChDB)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger")
	cfg := createDefaultConfig().(*Config)
	cfg.Storage.Embedded = &storageconfig.EmbeddedConfig{Path: path}
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]() // written before ConsumeTraces returns
	set := exporter.Settings{ID: component.NewID(componentType), TelemetrySettings: componenttest.NewNopTelemetrySettings(), BuildInfo: component.NewDefaultBuildInfo()}
	exp, err := NewFactory().CreateTraces(ctx, set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.Start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	cases := badValueCases()
	td := ptrace.NewTraces()
	for _, tc := range cases {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr(conventions.TenantAttribute, tenantOf(tc.name))
		tc.spans(rs.ScopeSpans().AppendEmpty().Spans(), now)
	}
	if err := exp.ConsumeTraces(ctx, td); err != nil {
		t.Fatal(err)
	}
	if err := exp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	eng, err := chdb.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	store := ledgerstore.New(eng)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			list, _, err := views.ListCalls(ctx, store, views.Filter{Tenants: []string{views.AllTenants}, Tenant: tenantOf(tc.name)}, views.MaxLimit, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != tc.rows {
				t.Fatalf("%d spans became %d calls", tc.rows, len(list))
			}
			for _, sum := range list {
				calls, err := store.CallsByTrace(ctx, sum.TraceID)
				if err != nil {
					t.Fatal(err)
				}
				i := slices.IndexFunc(calls, func(c ledger.Call) bool { return c.SpanID == sum.SpanID && c.Tenant == sum.Tenant })
				if i < 0 {
					t.Fatalf("call %s/%s not found by its trace", sum.TraceID, sum.SpanID)
				}
				sane(t, calls[i], now)
				tc.check(t, calls[i])
			}
		})
	}
}

func tenantOf(name string) string { return "bad-" + strings.ReplaceAll(name, " ", "-") }
