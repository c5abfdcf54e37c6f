package ledgerexporter

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/klauspost/compress/s2"
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
	// segs keeps call rows in the pieces they arrived in: merging batches
	// appends pieces, and the insert passes them to the engine as chunks,
	// so batching never copies a row.
	segs     []segment
	evidence []ledger.EvidenceSpan
}

// segment is call rows encoded together.
type segment struct {
	calls []byte   // RowBinary call rows, back to back
	ends  []int    // end offset of each row in calls
	keys  []string // ledger.CallKey of each row
}

// piece is rows [from, to) of s.
func (s segment) piece(from, to int) segment {
	lo := 0
	if from > 0 {
		lo = s.ends[from-1]
	}
	ends := s.ends[from:to]
	if lo > 0 {
		ends = make([]int, to-from)
		for i, end := range s.ends[from:to] {
			ends[i] = end - lo
		}
	}
	return segment{calls: s.calls[lo:s.ends[to-1]], ends: ends, keys: s.keys[from:to]}
}

var _ xexporterhelper.Request = (*rows)(nil)

func (r *rows) calls() int {
	n := 0
	for _, s := range r.segs {
		n += len(s.keys)
	}
	return n
}

func (r *rows) ItemsCount() int { return r.calls() + len(r.evidence) }

// evidenceRowBytes estimates an evidence row for the bytes sizer.
const evidenceRowBytes = 512

func (r *rows) BytesSize() int {
	n := len(r.evidence) * evidenceRowBytes
	for _, s := range r.segs {
		n += len(s.calls)
	}
	return n
}

// chunks are the call rows as the engine takes them, and their number.
func (r *rows) chunks() ([][]byte, int) {
	chunks := make([][]byte, 0, len(r.segs))
	for _, s := range r.segs {
		chunks = append(chunks, s.calls)
	}
	return chunks, r.calls()
}

// traces lists the trace ID of each call row, for the store to rewrite
// those traces' calls.
func (r *rows) traces() []string {
	var out []string
	for _, s := range r.segs {
		for _, k := range s.keys {
			_, trace, _ := ledger.SplitCallKey(k)
			out = append(out, trace)
		}
	}
	return out
}

// MergeSplit appends other's rows to r and cuts the result into requests
// of at most maxSize items (or bytes), the last one the smallest.
func (r *rows) MergeSplit(_ context.Context, maxSize int, szt exporterhelper.RequestSizerType, other xexporterhelper.Request) ([]xexporterhelper.Request, error) {
	var callSize func(n int) int
	var evidenceSize int
	var total func() int // the batch's size, measured after the merge
	switch szt {
	case exporterhelper.RequestSizerTypeItems:
		callSize, evidenceSize, total = func(int) int { return 1 }, 1, r.ItemsCount
	case exporterhelper.RequestSizerTypeBytes:
		callSize, evidenceSize, total = func(n int) int { return n }, evidenceRowBytes, r.BytesSize
	default:
		return nil, fmt.Errorf("ledger: queue sizer %v is not supported; use items or bytes", szt)
	}
	if other != nil {
		o, ok := other.(*rows)
		if !ok {
			return nil, errors.New("ledger: cannot merge a foreign request")
		}
		r.segs = append(r.segs, o.segs...)
		r.evidence = append(r.evidence, o.evidence...)
	}
	if maxSize <= 0 || total() <= maxSize {
		return []xexporterhelper.Request{r}, nil
	}
	var out []xexporterhelper.Request
	cur, used := &rows{}, 0
	flush := func() {
		out = append(out, cur)
		cur, used = &rows{}, 0
	}
	for _, s := range r.segs {
		from, start := 0, 0
		for i, end := range s.ends {
			n := callSize(end - start)
			if n > maxSize {
				return nil, fmt.Errorf("ledger: one call row (%d bytes) is larger than the batch limit %d", end-start, maxSize)
			}
			if used+n > maxSize {
				if i > from {
					cur.segs = append(cur.segs, s.piece(from, i))
				}
				flush()
				from = i
			}
			used += n
			start = end
		}
		if len(s.ends) > from {
			cur.segs = append(cur.segs, s.piece(from, len(s.ends)))
		}
	}
	for _, e := range r.evidence {
		if used+evidenceSize > maxSize {
			flush()
		}
		cur.evidence = append(cur.evidence, e)
		used += evidenceSize
	}
	if cur.ItemsCount() > 0 || len(out) == 0 {
		out = append(out, cur)
	}
	return out, nil
}

// rowsEncoding is how the persistent queue stores a batch: a version byte,
// then the body. The body is uvarint fields: the call count, each call row
// and its key as length-prefixed bytes, then the evidence rows as one
// length-prefixed JSON array. Version 1 stores the body as it is; version 2
// compresses it with S2, because the queue's cost grows with the bytes it
// writes and rows of one service repeat most of their bytes.
type rowsEncoding struct {
	// legacy converts spans that an earlier version queued (OTLP protobuf,
	// with or without the request envelope) into rows, so an upgrade with
	// a full queue loses nothing.
	legacy func(context.Context, ptrace.Traces) (xexporterhelper.Request, error)
}

// Protobuf never starts with field 0, so a first byte of 1 or 2 is ours.
const (
	rowsPlain = 1
	rowsS2    = 2
)

// maxBatchBytes bounds a decompressed batch, so a damaged length in a queue
// file cannot make the collector allocate without limit.
const maxBatchBytes = 1 << 30

// bodyBuffers keeps the uncompressed bodies between batches.
var bodyBuffers = sync.Pool{New: func() any { return new([]byte) }}

func (rowsEncoding) Marshal(_ context.Context, req xexporterhelper.Request) ([]byte, error) {
	r, ok := req.(*rows)
	if !ok {
		return nil, errors.New("ledger: queue: not a ledger batch")
	}
	buf := bodyBuffers.Get().(*[]byte)
	defer bodyBuffers.Put(buf)
	body, err := appendBody((*buf)[:0], r)
	if err != nil {
		return nil, err
	}
	*buf = body
	scratch := bodyBuffers.Get().(*[]byte)
	defer bodyBuffers.Put(scratch)
	if need := s2.MaxEncodedLen(len(body)); cap(*scratch) < need {
		*scratch = make([]byte, need)
	}
	packed := s2.Encode((*scratch)[:cap(*scratch)], body)
	return append(append(make([]byte, 0, 1+len(packed)), rowsS2), packed...), nil
}

// appendBody appends the version-1 body of r to b.
func appendBody(b []byte, r *rows) ([]byte, error) {
	ev, err := json.Marshal(r.evidence)
	if err != nil {
		return nil, fmt.Errorf("ledger: queue: encode evidence: %w", err)
	}
	b = binary.AppendUvarint(b, uint64(r.calls()))
	for _, s := range r.segs {
		start := 0
		for i, end := range s.ends {
			b = binary.AppendUvarint(b, uint64(end-start))
			b = append(b, s.calls[start:end]...)
			b = binary.AppendUvarint(b, uint64(len(s.keys[i])))
			b = append(b, s.keys[i]...)
			start = end
		}
	}
	b = binary.AppendUvarint(b, uint64(len(ev)))
	return append(b, ev...), nil
}

var errCorrupt = errors.New("ledger: queue: corrupt batch")

func (enc rowsEncoding) Unmarshal(b []byte) (context.Context, xexporterhelper.Request, error) {
	if len(b) == 0 {
		return context.Background(), nil, errCorrupt
	}
	switch b[0] {
	case rowsPlain:
		r, err := decodeBody(b[1:])
		return context.Background(), r, err
	case rowsS2:
		n, err := s2.DecodedLen(b[1:])
		if err != nil || n > maxBatchBytes {
			return context.Background(), nil, errCorrupt
		}
		buf := bodyBuffers.Get().(*[]byte)
		defer bodyBuffers.Put(buf)
		if cap(*buf) < n {
			*buf = make([]byte, n)
		}
		body, err := s2.Decode((*buf)[:cap(*buf)], b[1:])
		if err != nil {
			return context.Background(), nil, fmt.Errorf("%w: %w", errCorrupt, err)
		}
		r, err := decodeBody(body)
		return context.Background(), r, err
	default:
		return enc.unmarshalSpans(b)
	}
}

// decodeBody decodes a version-1 body; the rows do not share its memory.
func decodeBody(b []byte) (*rows, error) {
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
		return nil, errCorrupt
	}
	b = b[k:]
	// The rows take less room than the batch they come in.
	seg := segment{calls: make([]byte, 0, len(b)), ends: make([]int, 0, count), keys: make([]string, 0, count)}
	for range count {
		row, ok := next()
		if !ok {
			return nil, errCorrupt
		}
		key, ok := next()
		if !ok {
			return nil, errCorrupt
		}
		seg.calls = append(seg.calls, row...)
		seg.ends = append(seg.ends, len(seg.calls))
		seg.keys = append(seg.keys, string(key))
	}
	r := &rows{}
	if count > 0 {
		r.segs = []segment{seg}
	}
	ev, ok := next()
	if !ok || len(b) != 0 {
		return nil, errCorrupt
	}
	if err := json.Unmarshal(ev, &r.evidence); err != nil {
		return nil, fmt.Errorf("%w: evidence: %w", errCorrupt, err)
	}
	return r, nil
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
		return ctx, nil, fmt.Errorf("%w: neither rows nor spans: %w", errCorrupt, err)
	}
	r, err := enc.legacy(ctx, td)
	return ctx, r, err
}
