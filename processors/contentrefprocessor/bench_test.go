package contentrefprocessor

import (
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/internal/conventions"
)

// BenchmarkProcessTraces: batches of 100 chat spans with an input and an
// output message each (2 KiB), all new content, into the directory store.
func BenchmarkProcessTraces(b *testing.B) {
	for _, fsync := range []bool{false, true} {
		b.Run(fmt.Sprintf("fsync=%v", fsync), func(b *testing.B) {
			c := dirStoreConfig(b, contentstore.Limits{})
			c.Directory.Get().Fsync = fsync
			h, _ := storeExt(b, c)
			hs := newHarness(b, defaultConfig(), h)
			filler := strings.Repeat("lorem ipsum ", 80)
			n := 0
			b.ReportAllocs()
			for b.Loop() {
				td := ptrace.NewTraces()
				spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
				for range 100 {
					a := spans.AppendEmpty().Attributes()
					a.PutStr(conventions.OperationName, "chat")
					a.PutStr(conventions.InputMessages, fmt.Sprintf(`[{"role":"user","parts":[{"type":"text","content":"%d %s"}]}]`, n, filler))
					a.PutStr(conventions.OutputMessages, fmt.Sprintf(`[{"role":"assistant","parts":[{"type":"text","content":"%d %s"}]}]`, n, filler))
					n++
				}
				if err := hs.traces.ConsumeTraces(ctx, td); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "spans/s")
		})
	}
}

// BenchmarkSpanKinds: batches of 100 spans into the directory store
// (fsync off). genai: a chat span as an instrumentation sends it, with
// metadata, two 1 KiB messages and two attributes no contract lists;
// plain: an HTTP server span of eight attributes, no GenAI.
func BenchmarkSpanKinds(b *testing.B) {
	filler := strings.Repeat("lorem ipsum ", 80)
	kinds := map[string]func(a pcommon.Map, n int){
		"genai": func(a pcommon.Map, n int) {
			a.PutStr(conventions.OperationName, "chat")
			a.PutStr(conventions.ProviderName, "openai")
			a.PutStr(conventions.RequestModel, "gpt-4o")
			a.PutDouble(conventions.RequestTemperature, 0.2)
			a.PutInt(conventions.UsageInput, 120)
			a.PutInt(conventions.UsageOutput, 80)
			a.PutStr(conventions.ResponseID, fmt.Sprintf("chatcmpl-%d", n))
			a.PutStr("server.address", "api.openai.com")
			a.PutStr(conventions.InputMessages, fmt.Sprintf(`[{"role":"user","parts":[{"type":"text","content":"%d %s"}]}]`, n, filler))
			a.PutStr(conventions.OutputMessages, fmt.Sprintf(`[{"role":"assistant","parts":[{"type":"text","content":"%d %s"}]}]`, n, filler))
			a.PutStr("app.session_note", fmt.Sprintf("note %d", n))
			a.PutInt("app.turn", int64(n))
		},
		"plain": func(a pcommon.Map, n int) {
			a.PutStr(conventions.HTTPRequestMethod, "GET")
			a.PutStr(conventions.HTTPRoute, "/orders/{id}")
			a.PutInt(conventions.HTTPResponseStatusCode, 200)
			a.PutStr("url.path", fmt.Sprintf("/orders/%d", n))
			a.PutStr("server.address", "shop.internal")
			a.PutInt("server.port", 8080)
			a.PutStr("network.protocol.version", "1.1")
			a.PutStr("user_agent.original", "curl/8.0")
		},
	}
	for _, kind := range []string{"genai", "plain"} {
		b.Run("kind="+kind, func(b *testing.B) {
			h, _ := storeExt(b, dirStoreConfig(b, contentstore.Limits{}))
			hs := newHarness(b, defaultConfig(), h)
			n := 0
			b.ReportAllocs()
			for b.Loop() {
				td := ptrace.NewTraces()
				spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
				for range 100 {
					kinds[kind](spans.AppendEmpty().Attributes(), n)
					n++
				}
				if err := hs.traces.ConsumeTraces(ctx, td); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "spans/s")
		})
	}
}
