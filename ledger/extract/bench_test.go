package extract

import (
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/rowbinary"
)

// BenchmarkCallRow is the per-span Go cost of the ledger: extraction with
// pricing, then encoding the row in RowBinary for insert, as the exporter
// does.
func BenchmarkCallRow(b *testing.B) {
	x := testExtractor(b)
	res, span := testSpan(map[string]any{
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
		"gen_ai.request.model": "gpt-4o-mini", "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
		"gen_ai.response.id": "chatcmpl-123", "gen_ai.usage.input_tokens": int64(120),
		"gen_ai.usage.output_tokens": int64(30), "gen_ai.request.temperature": 0.2,
		"gen_ai.response.finish_reasons": []any{"stop"}, "server.address": "api.example.invalid",
	})
	now := time.Now()
	b.Run("extract", func(b *testing.B) {
		for b.Loop() {
			_ = x.Call(res, span, now)
		}
	})
	calls := []ledger.Call{x.Call(res, span, now)}
	var buf []byte
	b.Run("encode", func(b *testing.B) {
		for b.Loop() {
			var err error
			if buf, err = rowbinary.EncodeCalls(buf[:0], calls); err != nil {
				b.Fatal(err)
			}
		}
	})
}
