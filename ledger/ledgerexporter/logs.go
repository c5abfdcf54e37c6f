package ledgerexporter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/docketlabs/docket/ledger"
)

// logLinks is one queued batch of the logs pipeline: the links of the
// content references on arriving log records to their spans, extracted on
// arrival like the call rows (the records themselves are not kept).
type logLinks struct {
	links []ledger.LogContentRef
}

var _ xexporterhelper.Request = (*logLinks)(nil)

func (l *logLinks) ItemsCount() int { return len(l.links) }

// linkRowBytes estimates a link row for the bytes sizer.
const linkRowBytes = 256

func (l *logLinks) BytesSize() int { return len(l.links) * linkRowBytes }

// MergeSplit appends other's links and cuts the result into requests of at
// most maxSize items (or bytes).
func (l *logLinks) MergeSplit(_ context.Context, maxSize int, szt exporterhelper.RequestSizerType, other xexporterhelper.Request) ([]xexporterhelper.Request, error) {
	size := 1
	switch szt {
	case exporterhelper.RequestSizerTypeItems:
	case exporterhelper.RequestSizerTypeBytes:
		size = linkRowBytes
	default:
		return nil, fmt.Errorf("ledger: queue sizer %v is not supported; use items or bytes", szt)
	}
	if other != nil {
		o, ok := other.(*logLinks)
		if !ok {
			return nil, errors.New("ledger: cannot merge a foreign request")
		}
		l.links = append(l.links, o.links...)
	}
	per := len(l.links)
	if maxSize > 0 {
		per = max(maxSize/size, 1)
	}
	if len(l.links) <= per {
		return []xexporterhelper.Request{l}, nil
	}
	var out []xexporterhelper.Request
	for from := 0; from < len(l.links); from += per {
		out = append(out, &logLinks{links: l.links[from:min(from+per, len(l.links))]})
	}
	return out, nil
}

// logLinksEncoding stores a batch in the persistent queue: a version byte
// and the links as a JSON array.
type logLinksEncoding struct{}

const logLinksJSON = 1

func (logLinksEncoding) Marshal(_ context.Context, req xexporterhelper.Request) ([]byte, error) {
	l, ok := req.(*logLinks)
	if !ok {
		return nil, errors.New("ledger: queue: not a batch of log links")
	}
	b, err := json.Marshal(l.links)
	if err != nil {
		return nil, fmt.Errorf("ledger: queue: encode log links: %w", err)
	}
	return append([]byte{logLinksJSON}, b...), nil
}

func (logLinksEncoding) Unmarshal(b []byte) (context.Context, xexporterhelper.Request, error) {
	if len(b) == 0 || b[0] != logLinksJSON {
		return context.Background(), nil, fmt.Errorf("%w: unknown version", errCorrupt)
	}
	l := &logLinks{}
	if err := json.Unmarshal(b[1:], &l.links); err != nil {
		return context.Background(), nil, fmt.Errorf("%w: log links: %w", errCorrupt, err)
	}
	return context.Background(), l, nil
}

// convertLogs links the content references on arriving log records to the
// spans whose context they carry. A record without one links nothing: its
// objects are counted here and reported by the lifecycle as unreferenced.
func (e *ledgerExporter) convertLogs(ctx context.Context, ld plog.Logs) (xexporterhelper.Request, error) {
	now := time.Now().UTC()
	l := &logLinks{}
	unlinked := int64(0)
	for _, rl := range ld.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				rows, ok := e.extractor.LogRefs(rl.Resource(), lr, now)
				if !ok {
					unlinked++
				}
				l.links = append(l.links, rows...)
			}
		}
	}
	if unlinked > 0 {
		e.tel.ExporterLedgerLogRecordsUnlinked.Add(ctx, unlinked)
	}
	return l, nil
}

// pushLogs writes a queued batch of links; as with calls, any error returns
// the batch to the retry machinery, and writing it again is harmless.
func (e *ledgerExporter) pushLogs(ctx context.Context, req xexporterhelper.Request) error {
	l, ok := req.(*logLinks)
	if !ok {
		return consumererror.NewPermanent(errors.New("ledger: not a batch of log links"))
	}
	store, err := e.openStore(ctx)
	if err == nil {
		err = store.InsertLogRefs(ctx, l.links)
	}
	e.health.set(err)
	if err != nil {
		e.fail(ctx, err)
		return err
	}
	e.outage.success()
	e.tel.ExporterLedgerLogRefsWritten.Add(ctx, int64(len(l.links)))
	return nil
}
