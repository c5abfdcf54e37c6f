package extract

import (
	"testing"
	"time"

	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/rowbinary"
)

// BenchmarkCallRow is the per-span Go cost of the ledger: extraction with
// pricing, then encoding the row in RowBinary for insert, as the exporter
// does.
func BenchmarkCallRow(b *testing.B) {
	x := testExtractor(b)
	res, span := testSpan(map[string]any{
		conventions.OperationName: "chat", conventions.ProviderName: "openai",
		conventions.RequestModel: "gpt-4o-mini", conventions.ResponseModel: "gpt-4o-mini-2024-07-18",
		conventions.ResponseID: "chatcmpl-123", conventions.UsageInput: int64(120),
		conventions.UsageOutput: int64(30), conventions.RequestTemperature: 0.2,
		conventions.FinishReasons: []any{"stop"}, "server.address": "api.example.invalid",
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
