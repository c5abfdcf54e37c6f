package ledgerexporter

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/docketlabs/docket/completeness"
	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/extract"
	"github.com/docketlabs/docket/ledger/ledgerexporter/internal/metadata"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/pricing"
	"github.com/docketlabs/docket/ledger/rowbinary"
	"github.com/docketlabs/docket/ledger/storageconfig"
)

type ledgerExporter struct {
	cfg    *Config
	logger *zap.Logger
	tel    *metadata.TelemetryBuilder
	// meter is the builder's: the completeness account registers its
	// callback on it.
	meter metric.Meter

	// ledger is the engine, the ledgerstorage extension's or (deprecated
	// inline storage) this exporter's own, which it then closes.
	ledger    *storageconfig.Reopening
	ownLedger bool
	store     *ledgerstore.Store
	extractor *extract.Extractor

	linker *requestLinker
	outage *outageLog
	guard  *queueGuard
	health health
	// account is where the exporter counts, per tenant, the calls it took
	// in, refused and wrote.
	account    *completeness.Account
	registered bool
}

func newLedgerExporter(cfg *Config, set exporter.Settings) (*ledgerExporter, error) {
	tel, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, fmt.Errorf("ledger: create metrics: %w", err)
	}
	e := &ledgerExporter{
		cfg:     cfg,
		logger:  set.Logger,
		tel:     tel,
		meter:   metadata.Meter(set.TelemetrySettings),
		outage:  &outageLog{logger: set.Logger, interval: 30 * time.Second},
		guard:   &queueGuard{logger: set.Logger, reserveChunks: cfg.Backpressure.DiskReserveMiB << 20 / reserveChunkSize, retryEvery: cfg.Backpressure.RetryAfter},
		account: completeness.Process,
	}
	e.guard.metaWriteFailures = func(ctx context.Context) { tel.ExporterLedgerQueueMetadataWriteFailures.Add(ctx, 1) }
	return e, nil
}

// newTracesExporter is the exporter of the traces pipeline, the only one
// that sees request spans to link to calls.
func newTracesExporter(cfg *Config, set exporter.Settings) (*ledgerExporter, error) {
	e, err := newLedgerExporter(cfg, set)
	if err != nil {
		return nil, err
	}
	e.linker = newRequestLinker(cfg.RequestSpans)
	return e, nil
}

func (e *ledgerExporter) start(ctx context.Context, host component.Host) error {
	prices, err := loadPrices(e.cfg.PriceTable)
	if err != nil {
		return err
	}
	e.extractor = &extract.Extractor{DefaultTenant: e.cfg.DefaultTenant, Prices: prices,
		MaxClockSkew: e.cfg.Validation.MaxClockSkew, MaxAge: e.cfg.Validation.MaxAge}
	// Without a queue a call is acknowledged only once written: nothing to lose.
	if e.cfg.QueueConfig.HasValue() && e.cfg.QueueConfig.Get().StorageID == nil {
		e.logger.Warn("ledger sending_queue has no storage: calls accepted but not yet written are lost if the process dies; set sending_queue.storage to a file_storage extension")
	}
	if registerErr := e.tel.RegisterExporterLedgerStorageAvailableCallback(e.health.observe); registerErr != nil {
		return fmt.Errorf("ledger: register metrics: %w", registerErr)
	}
	if err = e.account.Register(e.meter, e.tel.ExporterLedgerCompletenessSpans, e.tel.ExporterLedgerCompletenessRequestsRefused); err != nil {
		return err
	}
	e.registered = true
	e.health.start(host)
	if e.ledger, e.ownLedger, err = e.cfg.Storage.Ledger(ctx, host); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	if e.ownLedger {
		e.logger.Warn(storageconfig.Deprecation)
	}
	e.store = e.ledger.Store()
	_, err = e.openStore(ctx)
	e.health.set(err)
	if err != nil {
		// Storage that is down at start must not lose calls either: the
		// queue holds them and pushTraces retries opening.
		e.logger.Error("ledger storage unavailable at start; calls stay queued until it opens", zap.Error(err))
	}
	return nil
}

func loadPrices(path string) (*pricing.Table, error) {
	if path == "" {
		t, err := pricing.Default()
		if err != nil {
			return nil, fmt.Errorf("ledger: load shipped price table: %w", err)
		}
		return t, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ledger: open price table: %w", err)
	}
	defer func() { _ = f.Close() }()
	t, err := pricing.Load(f)
	if err != nil {
		return nil, fmt.Errorf("ledger: load price table %q: %w", path, err)
	}
	return t, nil
}

// openStore returns the store, opening it if it is not open yet (at most
// once per storageconfig.RetryInterval).
func (e *ledgerExporter) openStore(ctx context.Context) (*ledgerstore.Store, error) {
	if !e.ledger.Retry(ctx) {
		return nil, fmt.Errorf("ledger: storage unavailable: %w: %s", storageconfig.ErrUnavailable, e.ledger.State().Error)
	}
	return e.store, nil
}

func (e *ledgerExporter) shutdown(context.Context) error {
	e.tel.Shutdown()
	if e.registered {
		e.registered = false
		if err := e.account.Unregister(); err != nil {
			e.logger.Warn("ledger: completeness metric", zap.Error(err))
		}
	}
	if e.ownLedger {
		return e.ledger.Close()
	}
	return nil
}

// convert extracts the ledger rows of arriving spans, before they are
// queued: the queue then holds encoded rows, and a row's ingestion time is
// when it arrived, the same in every retry.
func (e *ledgerExporter) convert(ctx context.Context, td ptrace.Traces) (xexporterhelper.Request, error) {
	now := time.Now().UTC()
	r := &rows{}
	var seg segment
	var call ledger.Call
	t := tallyFrom(ctx)
	var callTraces []traceKey
	var requests []ledger.EvidenceSpan
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j)
			spans := ss.Spans()
			for k := 0; k < spans.Len(); k++ {
				var ev ledger.EvidenceSpan
				var kind extract.Kind
				call, ev, kind = e.extractor.Extract(rs.Resource(), ss.Scope().Name(), spans.At(k), now)
				switch {
				case kind == extract.KindEvidence && conventions.IsRequestCategory(ev.Category) && len(ev.ContentRefs) == 0:
					// Kept only if its trace holds a call; one carrying
					// content references is kept like any such span, so
					// deletion and holds reach that content.
					requests = append(requests, ev)
				case kind == extract.KindEvidence || len(ev.ContentRefs) > 0:
					r.evidence = append(r.evidence, ev)
					e.countRekeyed(ctx, ev.AttributeIssues)
				}
				if kind != extract.KindCall {
					continue
				}
				callTraces = append(callTraces, traceKey{call.Tenant, call.TraceID})
				var err error
				if seg.calls, err = rowbinary.EncodeCalls(seg.calls, []ledger.Call{call}); err != nil {
					// Only an impossible cost value gets here; refusing
					// the batch makes the sender see it, loudly.
					e.fail(ctx, err)
					t.add(call.Tenant, completeness.RefusedInvalid)
					return nil, consumererror.NewPermanent(fmt.Errorf("ledger: encode call %s: %w", call.SpanID, err))
				}
				t.add(call.Tenant, completeness.Received)
				if len(call.AttributeIssues) > 0 {
					t.add(call.Tenant, completeness.Flagged)
				}
				seg.ends = append(seg.ends, len(seg.calls))
				seg.keys = append(seg.keys, ledger.CallKey(&call))
				e.countRekeyed(ctx, call.AttributeIssues)
				if call.CostUSD == nil {
					e.tel.ExporterLedgerCallsCostUnknown.Add(ctx, 1, metric.WithAttributes(costStatusAttr(call.CostStatus)))
				}
			}
		}
	}
	if len(seg.keys) > 0 {
		r.segs = []segment{seg}
	}
	if len(callTraces) > 0 || len(requests) > 0 {
		kept, dropped := e.linker.link(now, callTraces, requests)
		r.evidence = append(r.evidence, kept...)
		if dropped > 0 {
			e.tel.ExporterLedgerRequestSpansDropped.Add(ctx, int64(dropped))
		}
	}
	return r, nil
}

// countRekeyed counts a row whose span came without a trace or span ID.
func (e *ledgerExporter) countRekeyed(ctx context.Context, issues []string) {
	for _, is := range issues {
		if id, ok := strings.CutPrefix(is, conventions.IssueInvalidID+":"); ok {
			e.tel.ExporterLedgerSpansRekeyed.Add(ctx, 1, metric.WithAttributes(attribute.String("reason", "empty_"+id)))
		}
	}
}

// convertQueued converts spans an earlier version left in the persistent
// queue.
func (e *ledgerExporter) convertQueued(ctx context.Context, td ptrace.Traces) (xexporterhelper.Request, error) {
	e.logger.Info("ledger: spans queued by an earlier version converted to rows", zap.Int("spans", td.SpanCount()))
	return e.convert(ctx, td)
}

// push writes a queued batch. Any error returns the whole batch to the
// retry/queue machinery; the inserts are idempotent, so a partially
// written batch is safe to write again.
func (e *ledgerExporter) push(ctx context.Context, req xexporterhelper.Request) error {
	r, ok := req.(*rows)
	if !ok {
		return consumererror.NewPermanent(errors.New("ledger: not a ledger batch"))
	}
	store, err := e.openStore(ctx)
	if err != nil {
		e.health.set(err)
		e.fail(ctx, err)
		return err
	}
	chunks, n := r.chunks()
	if err := store.InsertBatch(ctx, chunks, n, r.traces(), r.evidence); err != nil {
		e.health.set(err)
		e.fail(ctx, err)
		return err
	}
	e.outage.success()
	e.health.set(nil)
	e.tel.ExporterLedgerCallsWritten.Add(ctx, int64(n))
	e.tel.ExporterLedgerEvidenceSpansWritten.Add(ctx, int64(len(r.evidence)))
	e.account.AddAll(r.tenants(), completeness.Written)
	return nil
}

func (e *ledgerExporter) fail(ctx context.Context, err error) {
	e.tel.ExporterLedgerWriteFailures.Add(ctx, 1)
	e.outage.failure(err)
}
