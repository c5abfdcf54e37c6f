package contentrefprocessor

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/ledgerexporter"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/ledgertest"
	"github.com/docketlabs/docket/ledger/storageconfig"
)

// TestCanaryThroughTheLedgerAndTheAuditedReveal sends everyContentKey's
// telemetry through the processor into the ledger exporter (traces and
// logs) on the embedded engine, then: no canary is in what the processor
// passed on, in the processor's or the exporter's log and metric labels,
// or in any row of any ledger table; every canary comes back through the
// audited read path (access.Reader, behind the API's reveal) from the
// references of the call it belongs to, and every reveal is on record.
func TestCanaryThroughTheLedgerAndTheAuditedReveal(t *testing.T) {
	eng := ledgertest.Engine(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	p := &planter{rng: rand.New(rand.NewPCG(seed, 3))}
	h, st := storeExt(t, dirStoreConfig(t, contentstore.Limits{}))
	o := newObserved(t, defaultConfig(), h)
	td, ld, calls := everyContentKey(p)
	// Log records first: they usually arrive before their span ends.
	outL := o.consumeLogs(t, ld)
	outT := o.consumeTraces(t, td)
	raw := exported(t, outT, outL)

	// The exporter's log and metrics are the collector's too.
	core, expLogs := observer.New(zapcore.DebugLevel)
	exp := observed{&harness{reader: sdkmetric.NewManualReader()}, expLogs}
	cfg := ledgerexporter.NewFactory().CreateDefaultConfig().(*ledgerexporter.Config)
	cfg.Storage.Embedded = &storageconfig.EmbeddedConfig{Path: eng.Dir()}
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]() // written before Consume returns
	set := exportertest.NewNopSettings(ledgerexporter.NewFactory().Type())
	set.Logger = zap.New(core)
	set.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp.reader))
	traces, err := ledgerexporter.NewFactory().CreateTraces(ctx, set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	logs, err := ledgerexporter.NewFactory().CreateLogs(ctx, set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []component.Component{traces, logs} {
		if err := c.Start(ctx, componenttest.NewNopHost()); err != nil {
			t.Fatal(err)
		}
	}
	if err := logs.ConsumeLogs(ctx, outL); err != nil {
		t.Fatal(err)
	}
	if err := traces.ConsumeTraces(ctx, outT); err != nil {
		t.Fatal(err)
	}
	if err := traces.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := logs.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	written := time.Now()
	store := ledgerstore.New(eng)
	reader := &access.Reader{Content: st, Ledger: store}
	auditor := access.Principal{User: "canary-auditor", Role: access.RoleAuditor, Tenants: []string{"acme"}}
	const reason = "canary suite: every canary through its call"
	type reveal struct{ trace, ref string }
	var revealed []reveal
	var all []string
	for _, pc := range calls {
		all = append(all, pc.canaries...)
		trace := pc.trace.String()
		rows, err := store.CallsByTrace(ctx, trace)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 {
			t.Errorf("trace %s: %d calls in the ledger, want 1", trace, len(rows))
			continue
		}
		var content strings.Builder
		for _, ref := range rows[0].Refs() {
			b, err := reader.Reveal(ctx, auditor, access.RevealRequest{Tenant: "acme", TraceID: trace, Ref: ref, Reason: reason})
			if err != nil {
				t.Errorf("trace %s: reveal %s: %v", trace, ref, err)
				continue
			}
			content.Write(b)
			revealed = append(revealed, reveal{trace, ref})
		}
		for _, c := range pc.canaries {
			if !strings.Contains(content.String(), c) {
				t.Errorf("call %s (%s): canary %q not revealed through its call's %d references", trace, rows[0].SpanName, c, len(rows[0].Refs()))
			}
		}
	}

	log, err := store.AccessLog(ctx, ledgerstore.AccessFilter{Tenant: "acme", Actor: auditor.User, Action: "reveal", Limit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	onRecord := map[reveal]int{}
	for _, e := range log {
		if e.Outcome == access.OutcomeAllowed && e.Role == string(access.RoleAuditor) && e.Reason == reason {
			onRecord[reveal{e.TraceID, e.Ref}]++
		}
	}
	for _, r := range revealed {
		if onRecord[r] != 1 {
			t.Errorf("reveal of %s in trace %s is on record %d times, want 1", r.ref, r.trace, onRecord[r])
		}
	}

	revealTime := time.Since(written)
	var dump bytes.Buffer
	tables := map[string]int{}
	if err := ledgertest.EveryRow(ctx, eng, func(table string, row []byte) error {
		tables[table]++
		dump.WriteString(table + "\t")
		dump.Write(row)
		dump.WriteByte('\n')
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"llm_calls", "log_content_refs", "access_log"} {
		if tables[table] == 0 {
			t.Errorf("the ledger dump has no %s rows: %v", table, tables)
		}
	}
	leaked := 0
	for _, c := range all {
		if bytes.Contains(raw, []byte(c)) {
			leaked++
			t.Errorf("canary %q left the processor", c)
		}
		if bytes.Contains(dump.Bytes(), []byte(c)) {
			leaked++
			t.Errorf("canary %q is in the ledger", c)
		}
	}
	if l := o.leaks(t, all); len(l) > 0 {
		t.Errorf("canaries in the processor's log or metric labels: %v", l)
	}
	if l := exp.leaks(t, all); len(l) > 0 {
		t.Errorf("canaries in the ledger exporter's log or metric labels: %v", l)
	}
	t.Logf("%d content keys, %d content events, %d calls, %d canaries, %d reveals on record (%v), ledger rows %v, %d canaries leaked",
		len(conventions.ContentKeys), len(conventions.ContentEvents), len(calls), len(all), len(revealed), revealTime.Round(time.Second), tables, leaked)
}
