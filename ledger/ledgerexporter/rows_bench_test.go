package ledgerexporter

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
)

// BenchmarkBatching merges arriving 1,000-row requests into batches of up to
// 50,000 rows the way the queue's batcher does, so the cost per row of
// batching shows.
func BenchmarkBatching(b *testing.B) {
	enc := rowsEncoding{}
	in := testRows(b, 1000, 0, "a")
	data, err := enc.Marshal(context.Background(), in)
	if err != nil {
		b.Fatal(err)
	}
	const maxSize, minSize = 50000, 40000
	b.SetBytes(int64(in.BytesSize()))
	b.ReportAllocs()
	var cur xexporterhelper.Request
	for b.Loop() {
		_, req, err := enc.Unmarshal(data)
		if err != nil {
			b.Fatal(err)
		}
		var out []xexporterhelper.Request
		if cur == nil {
			out, err = req.MergeSplit(context.Background(), maxSize, exporterhelper.RequestSizerTypeItems, nil)
		} else {
			out, err = cur.MergeSplit(context.Background(), maxSize, exporterhelper.RequestSizerTypeItems, req)
		}
		if err != nil {
			b.Fatal(err)
		}
		cur = out[len(out)-1]
		if cur.ItemsCount() >= minSize {
			cur = nil
		}
	}
}
