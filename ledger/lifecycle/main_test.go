package lifecycle

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/contentstore/contentstoretest"
	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/internal/s3test"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/ledgertest"
)

// One chDB session per process: every test shares this ledger and isolates
// itself by using tenants of its own.
var ledgerStore *ledgerstore.Store

func TestMain(m *testing.M) { ledgertest.Main(m, &ledgerStore) }

var (
	ctx   = context.Background()
	admin = access.Principal{User: "ana", Role: access.RoleAdmin, Tenants: []string{access.AllTenants}}
)

const testSecret = "lifecycle-test-secret-0123456789abcdef"

func newTenant(t testing.TB) string { return "t-" + ledgertest.SpanID(t) }

func dirStore(t testing.TB) contentstore.Store {
	t.Helper()
	cfg := contentstoretest.DirConfig(t.TempDir())
	cfg.Secret = testSecret
	return contentstoretest.Open(t, cfg)
}

func s3Store(t testing.TB, srv *s3test.Server, bucket string, objectLock bool) contentstore.Store {
	t.Helper()
	cfg := contentstore.NewDefaultConfig()
	cfg.Directory = configoptional.None[contentstore.DirConfig]()
	cfg.S3 = configoptional.Some(contentstore.S3Config{Endpoint: srv.Endpoint, Bucket: bucket, AccessKey: srv.AccessKey,
		SecretKey: configopaque.String(srv.SecretKey), Insecure: true, CreateBucket: true, ObjectLock: objectLock, Timeout: 10 * time.Second})
	cfg.Secret = testSecret
	return contentstoretest.Open(t, cfg)
}

// fixture is one tenant's calls on a content store.
type fixture struct {
	t      testing.TB
	m      *Manager
	store  contentstore.Store
	tenant string
}

func newFixture(t testing.TB, store contentstore.Store, opts Options) *fixture {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	m, err := New(ledgerStore, store, opts)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, m: m, store: store, tenant: newTenant(t)}
}

// span stores content for a span of trace that is not a call (a tool
// call's arguments) and writes its evidence row, as the contentref
// processor and the ledger exporter do; it returns the reference.
func (f *fixture) span(trace string, start time.Time, content string) string {
	f.t.Helper()
	res, err := f.store.Put(ctx, f.tenant, "tool.call.arguments", []byte(content))
	if err != nil {
		f.t.Fatal(err)
	}
	e := ledgertest.Evidence(f.tenant, trace, ledgertest.SpanID(f.t), conventions.CategoryGenAI)
	e.SpanName, e.StartTime, e.EndTime = "execute_tool lookup", start, start.Add(time.Second)
	e.ContentRefs = []string{res.Ref.String()}
	if err := ledgerStore.InsertEvidence(ctx, []ledger.EvidenceSpan{e}); err != nil {
		f.t.Fatal(err)
	}
	return res.Ref.String()
}

// states reads a trace's calls as the evidence page does and returns
// their lifecycle states.
func (f *fixture) states(p access.Principal, traceID string) ([]CallState, error) {
	f.t.Helper()
	calls, err := ledgerStore.CallsByTrace(ctx, traceID)
	if err != nil {
		f.t.Fatal(err)
	}
	return f.m.CallStates(ctx, p, f.tenant, calls)
}

// callSpec describes one LLM call; empty content means no reference.
type callSpec struct {
	trace, endUser        string
	parent                string // the span of a call this one's span is a child of
	start                 time.Time
	input, output, prompt string
}

// call stores the call's content and writes its ledger row, as the
// contentref processor and the ledger exporter do.
func (f *fixture) call(s callSpec) ledger.Call {
	f.t.Helper()
	if s.trace == "" {
		s.trace = ledgertest.TraceID(f.t)
	}
	c := ledgertest.Call(f.tenant, s.trace, ledgertest.SpanID(f.t))
	c.ParentSpanID, c.EndUserRef, c.ContentStatus = s.parent, s.endUser, "stored"
	c.StartTime, c.EndTime = s.start, s.start.Add(time.Second)
	for _, part := range []struct {
		kind, content string
		dst           *string
	}{{"input.messages", s.input, &c.InputRef}, {"output.messages", s.output, &c.OutputRef}, {"system_instructions", s.prompt, &c.SystemInstructionsRef}} {
		if part.content == "" {
			continue
		}
		res, err := f.store.Put(ctx, f.tenant, part.kind, []byte(part.content))
		if err != nil {
			f.t.Fatal(err)
		}
		*part.dst = res.Ref.String()
	}
	if err := ledgerStore.InsertCalls(ctx, []ledger.Call{c}); err != nil {
		f.t.Fatal(err)
	}
	return c
}

func (f *fixture) evidence(trace string, start time.Time) {
	f.t.Helper()
	e := ledgertest.Evidence(f.tenant, trace, ledgertest.SpanID(f.t), conventions.CategoryDB)
	e.Kind, e.StartTime, e.EndTime, e.Status, e.DBQueryStatus = "client", start, start, ledger.StatusOK, ledger.QueryAbsent
	if err := ledgerStore.InsertEvidence(ctx, []ledger.EvidenceSpan{e}); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) exists(ref string) bool {
	f.t.Helper()
	r, err := contentstore.ParseRef(ref)
	if err != nil {
		f.t.Fatal(err)
	}
	_, err = f.store.Get(ctx, r)
	switch {
	case err == nil:
		return true
	case errors.Is(err, contentstore.ErrNotFound):
		return false
	}
	f.t.Fatalf("get %s: %v", ref, err)
	return false
}

func (f *fixture) storeHeld(ref string) bool {
	f.t.Helper()
	r, err := contentstore.ParseRef(ref)
	if err != nil {
		f.t.Fatal(err)
	}
	held, err := f.store.LegalHold(ctx, r)
	if err != nil {
		f.t.Fatalf("legal hold of %s: %v", ref, err)
	}
	return held
}

// calls returns the ledger rows of a trace.
func (f *fixture) calls(trace string) []ledger.Call {
	f.t.Helper()
	cs, err := ledgerStore.CallsByTrace(ctx, trace)
	if err != nil {
		f.t.Fatal(err)
	}
	return cs
}

func (f *fixture) events(filter EventFilter) []ContentEvent {
	f.t.Helper()
	filter.Tenant = f.tenant
	evs, err := f.m.ContentEvents(ctx, admin, filter)
	if err != nil {
		f.t.Fatal(err)
	}
	return evs
}

// eventCounts counts events by kind.
func eventCounts(evs []ContentEvent) map[string]int {
	out := map[string]int{}
	for _, e := range evs {
		out[e.Event]++
	}
	return out
}

// accessEntries returns the access-log rows of the fixture's tenant for an
// action, oldest first.
func (f *fixture) accessEntries(action string) []ledgerstore.AccessEntry {
	f.t.Helper()
	log, err := ledgerStore.AccessLog(ctx, ledgerstore.AccessFilter{Tenant: f.tenant})
	if err != nil {
		f.t.Fatal(err)
	}
	var out []ledgerstore.AccessEntry
	for _, e := range log {
		if e.Action == action {
			out = append(out, e)
		}
	}
	slices.Reverse(out)
	return out
}

func statuses(jobs []DeletionJob) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.Status
	}
	return out
}

const day = 24 * time.Hour
