package contentrefprocessor

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/internal/conventions"
)

// watchedStore is the real store, looked at by the test each time the
// processor hands it a batch; the batch numbered failAt never completes,
// as if the collector died or the store went away while writing it.
type watchedStore struct {
	contentstore.Store
	t      *testing.T
	td     ptrace.Traces
	calls  atomic.Int64
	failAt int64
}

func (w *watchedStore) PutBatch(ctx context.Context, objs []contentstore.PutObject) []contentstore.PutOutcome {
	n := w.calls.Add(1)
	for _, s := range spansByName(w.td) {
		for k := range s.Attributes().All() {
			if strings.HasSuffix(k, conventions.RefSuffix) || k == AttrStatus {
				w.t.Errorf("batch %d: span %q already has %s before its content is stored", n, s.Name(), k)
				return nil
			}
		}
	}
	if n == w.failAt {
		out := make([]contentstore.PutOutcome, len(objs))
		for i := range out {
			out[i].Err = fmt.Errorf("%w: the batch never completed", contentstore.ErrUnavailable)
		}
		return out
	}
	return w.Store.PutBatch(ctx, objs)
}

type storeProvider struct {
	component.StartFunc
	component.ShutdownFunc
	st contentstore.Store
}

func (p storeProvider) ContentStore() contentstore.Store { return p.st }

// References reach the telemetry only once every batch of the request has
// returned, so a batch that never completes leaves no reference to an
// object that is not there: its spans go out without content, as
// store_unavailable, and every reference that did go out can be read.
func TestReferencesOnlyAfterTheStoreReturns(t *testing.T) {
	_, st := storeExt(t, dirStoreConfig(t, contentstore.Limits{}))
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	const spans = 200 // 400 items: two batches
	for i := range spans {
		s := genAISpan(ss, fmt.Sprintf("call %d", i))
		s.Attributes().PutStr(conventions.InputMessages, canary(2*i))
		s.Attributes().PutStr(conventions.OutputMessages, canary(2*i+1))
	}
	w := &watchedStore{Store: st, t: t, td: td, failAt: 2}
	cfg := defaultConfig()
	cfg.WriteConcurrency = 1
	hs := newHarness(t, cfg, host{defaultStoreID: storeProvider{st: w}})
	out := hs.consumeTraces(t, td)
	if w.calls.Load() != 2 {
		t.Fatalf("%d store batches, want 2", w.calls.Load())
	}
	raw := marshalTraces(t, out)
	stored, failed := 0, 0
	for _, s := range spansByName(out) {
		status, _ := s.Attributes().Get(AttrStatus)
		switch status.Str() {
		case StatusStored:
			stored++
			fetch(t, st, refs(s.Attributes()))
		case StatusStoreUnavailable:
			failed++
			if rs := refs(s.Attributes()); len(rs) != 0 {
				t.Fatalf("span %q of the failed batch has references %v", s.Name(), rs)
			}
		default:
			t.Fatalf("span %q: status %q", s.Name(), status.Str())
		}
	}
	if stored == 0 || failed == 0 {
		t.Fatalf("%d spans stored, %d failed: want both", stored, failed)
	}
	for i := range 2 * spans {
		if bytes.Contains(raw, []byte(canary(i))) {
			t.Fatalf("content %d left in the telemetry", i)
		}
	}
}
