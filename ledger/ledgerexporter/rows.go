package ledgerexporter

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
	"go.opentelemetry.io/collector/pdata/ptrace"
	pdatareq "go.opentelemetry.io/collector/pdata/xpdata/request"

	"github.com/docketlabs/docket/ledger"
)

// rows is one queued batch: the ledger rows of the spans that arrived,
// extracted on arrival. The persistent queue holds these encoded rows, a
// fraction of the spans they come from, so queueing costs little more than
// writing them down; the insert sends the call rows as they are.
type rows struct {
	calls    []byte   // RowBinary call rows, back to back
	callEnds []int    // end offset of each call row in calls
	callKeys []string // ledger.CallKey of each call row
	evidence []ledger.EvidenceSpan
}

var _ xexporterhelper.Request = (*rows)(nil)

func (r *rows) ItemsCount() int { return len(r.callKeys) + len(r.evidence) }

// evidenceRowBytes estimates an evidence row for the bytes sizer.
const evidenceRowBytes = 512

func (r *rows) BytesSize() int { return len(r.calls) + len(r.evidence)*evidenceRowBytes }

// MergeSplit appends other's rows to r and cuts the result into requests
// of at most maxSize items (or bytes), the last one the smallest.
func (r *rows) MergeSplit(_ context.Context, maxSize int, szt exporterhelper.RequestSizerType, other xexporterhelper.Request) ([]xexporterhelper.Request, error) {
	var size func(call bool, n int) int
	switch szt {
	case exporterhelper.RequestSizerTypeItems:
		size = func(bool, int) int { return 1 }
	case exporterhelper.RequestSizerTypeBytes:
		size = func(call bool, n int) int {
			if call {
				return n
			}
			return evidenceRowBytes
		}
	default:
		return nil, fmt.Errorf("ledger: queue sizer %v is not supported; use items or bytes", szt)
	}
	if other != nil {
		o, ok := other.(*rows)
		if !ok {
			return nil, errors.New("ledger: cannot merge a foreign request")
		}
		base := len(r.calls)
		r.calls = append(r.calls, o.calls...)
		for _, end := range o.callEnds {
			r.callEnds = append(r.callEnds, base+end)
		}
		r.callKeys = append(r.callKeys, o.callKeys...)
		r.evidence = append(r.evidence, o.evidence...)
	}
	if maxSize <= 0 || r.size(size) <= maxSize {
		// Batching merges request after request into one; copying it all
		// again at every merge would be quadratic.
		return []xexporterhelper.Request{r}, nil
	}
	var out []xexporterhelper.Request
	cur, used := &rows{}, 0
	flush := func() {
		out = append(out, cur)
		cur, used = &rows{}, 0
	}
	start := 0
	for i, end := range r.callEnds {
		n := size(true, end-start)
		if n > maxSize {
			return nil, fmt.Errorf("ledger: one call row (%d bytes) is larger than the batch limit %d", end-start, maxSize)
		}
		if used+n > maxSize {
			flush()
		}
		base := len(cur.calls)
		cur.calls = append(cur.calls, r.calls[start:end]...)
		cur.callEnds = append(cur.callEnds, base+end-start)
		cur.callKeys = append(cur.callKeys, r.callKeys[i])
		used += n
		start = end
	}
	for _, e := range r.evidence {
		n := size(false, 0)
		if used+n > maxSize {
			flush()
		}
		cur.evidence = append(cur.evidence, e)
		used += n
	}
	if cur.ItemsCount() > 0 || len(out) == 0 {
		out = append(out, cur)
	}
	return out, nil
}

// size is the batch's size under the sizer's measure of one row.
func (r *rows) size(of func(call bool, n int) int) int {
	total, start := 0, 0
	for _, end := range r.callEnds {
		total += of(true, end-start)
		start = end
	}
	return total + len(r.evidence)*of(false, 0)
}

// rowsEncoding is how the persistent queue stores a batch. Version 1:
// uvarint fields; call rows and keys as length-prefixed bytes; evidence
// rows as JSON.
type rowsEncoding struct {
	// legacy converts spans that an earlier version queued (OTLP protobuf,
	// with or without the request envelope) into rows, so an upgrade with
	// a full queue loses nothing.
	legacy func(context.Context, ptrace.Traces) (xexporterhelper.Request, error)
}

const rowsEncodingVersion = 1

func (rowsEncoding) Marshal(_ context.Context, req xexporterhelper.Request) ([]byte, error) {
	r, ok := req.(*rows)
	if !ok {
		return nil, errors.New("ledger: queue: not a ledger batch")
	}
	ev, err := json.Marshal(r.evidence)
	if err != nil {
		return nil, fmt.Errorf("ledger: queue: encode evidence: %w", err)
	}
	b := make([]byte, 0, 16+len(r.calls)+len(r.callKeys)*80+len(ev))
	b = append(b, rowsEncodingVersion)
	b = binary.AppendUvarint(b, uint64(len(r.callKeys)))
	start := 0
	for i, end := range r.callEnds {
		b = binary.AppendUvarint(b, uint64(end-start))
		b = append(b, r.calls[start:end]...)
		b = binary.AppendUvarint(b, uint64(len(r.callKeys[i])))
		b = append(b, r.callKeys[i]...)
		start = end
	}
	b = binary.AppendUvarint(b, uint64(len(ev)))
	return append(b, ev...), nil
}

var errCorrupt = errors.New("ledger: queue: corrupt batch")

func (enc rowsEncoding) Unmarshal(b []byte) (context.Context, xexporterhelper.Request, error) {
	ctx := context.Background()
	if len(b) == 0 {
		return ctx, nil, errCorrupt
	}
	// Protobuf never starts with field 0, so a first byte of 1 is ours.
	if b[0] != rowsEncodingVersion {
		return enc.unmarshalSpans(b)
	}
	b = b[1:]
	next := func() ([]byte, bool) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return nil, false
		}
		field := b[k : k+int(n)]
		b = b[k+int(n):]
		return field, true
	}
	count, k := binary.Uvarint(b)
	if k <= 0 || count > uint64(len(b)) {
		return ctx, nil, errCorrupt
	}
	b = b[k:]
	r := &rows{callEnds: make([]int, 0, count), callKeys: make([]string, 0, count)}
	for range count {
		row, ok := next()
		if !ok {
			return ctx, nil, errCorrupt
		}
		key, ok := next()
		if !ok {
			return ctx, nil, errCorrupt
		}
		r.calls = append(r.calls, row...)
		r.callEnds = append(r.callEnds, len(r.calls))
		r.callKeys = append(r.callKeys, string(key))
	}
	ev, ok := next()
	if !ok || len(b) != 0 {
		return ctx, nil, errCorrupt
	}
	if err := json.Unmarshal(ev, &r.evidence); err != nil {
		return ctx, nil, fmt.Errorf("%w: evidence: %v", errCorrupt, err)
	}
	return ctx, r, nil
}

func (enc rowsEncoding) unmarshalSpans(b []byte) (context.Context, xexporterhelper.Request, error) {
	if enc.legacy == nil {
		return context.Background(), nil, fmt.Errorf("%w: unknown version", errCorrupt)
	}
	ctx, td, err := pdatareq.UnmarshalTraces(b)
	if errors.Is(err, pdatareq.ErrInvalidFormat) {
		td, err = (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(b)
	}
	if err != nil {
		return ctx, nil, fmt.Errorf("%w: neither rows nor spans: %v", errCorrupt, err)
	}
	r, err := enc.legacy(ctx, td)
	return ctx, r, err
}
