package contentrefprocessor

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/docketlabs/docket/contentstore"
)

// BenchmarkProcessTraces: batches of 100 chat spans with an input and an
// output message each (2 KiB), all new content, into the directory store.
func BenchmarkProcessTraces(b *testing.B) {
	for _, fsync := range []bool{false, true} {
		b.Run(fmt.Sprintf("fsync=%v", fsync), func(b *testing.B) {
			c := contentstore.NewDefaultConfig()
			c.Directory = configoptional.Some(contentstore.DirConfig{Path: filepath.Join(b.TempDir(), "content"), Fsync: fsync})
			c.Secret = testSecret
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
					a.PutStr("gen_ai.operation.name", "chat")
					a.PutStr("gen_ai.input.messages", fmt.Sprintf(`[{"role":"user","parts":[{"type":"text","content":"%d %s"}]}]`, n, filler))
					a.PutStr("gen_ai.output.messages", fmt.Sprintf(`[{"role":"assistant","parts":[{"type":"text","content":"%d %s"}]}]`, n, filler))
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
