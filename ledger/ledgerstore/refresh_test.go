package ledgerstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketlabs/docket/internal/groupcommit"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/rowbinary"
	"github.com/docketlabs/docket/ledger/storage"
)

// gatedEngine holds the first rewrite of kept calls until gate closes, and
// fails every rewrite with fail.
type gatedEngine struct {
	storage.Engine
	rewrites atomic.Int32
	gate     chan struct{}
	fail     error
}

func (e *gatedEngine) Exec(ctx context.Context, q string) error {
	if strings.Contains(q, "INSERT INTO provider_call_rows") {
		if e.rewrites.Add(1) == 1 {
			<-e.gate
		}
		if e.fail != nil {
			return e.fail
		}
	}
	return e.Engine.Exec(ctx, q)
}

// Writers that arrive while a rewrite runs share the next one: one
// statement for all of them, each returning once its calls are kept, and
// every one failing when that statement fails.
func TestConcurrentRefreshesShareOneRewrite(t *testing.T) {
	for _, fail := range []error{nil, errors.New("disk full")} {
		t.Run(fmt.Sprint("fail=", fail), func(t *testing.T) {
			ctx := context.Background()
			eng := &gatedEngine{Engine: testStore.eng, gate: make(chan struct{}), fail: fail}
			store := New(eng)
			const writers = 5
			traces := make([]string, writers)
			errs := make([]error, writers)
			var wg sync.WaitGroup
			write := func(i int) {
				traces[i] = fmt.Sprintf("%032x", rand.Uint64())
				wg.Go(func() { errs[i] = store.InsertCalls(ctx, []ledger.Call{refreshCall(traces[i])}) })
			}
			write(0)
			waitFor(t, func() bool { return eng.rewrites.Load() == 1 })
			for i := 1; i < writers; i++ {
				write(i)
			}
			c, _ := refreshers.Load(eng)
			waitFor(t, func() bool { return c.(*groupcommit.Committer[*refreshJob]).Queued() == writers-1 })
			close(eng.gate)
			wg.Wait()
			if got := eng.rewrites.Load(); got != 2 {
				t.Fatalf("%d rewrites for %d writers arriving during the first, want 2", got, writers)
			}
			for i, err := range errs {
				if fail != nil {
					if !errors.Is(err, fail) {
						t.Fatalf("writer %d: %v, want its round's failure", i, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("writer %d: %v", i, err)
				}
				if got, err := store.CallsByTrace(ctx, traces[i]); err != nil || len(got) != 1 {
					t.Fatalf("writer %d's trace reads %+v, %v", i, got, err)
				}
			}
		})
	}
}

// A batch of calls and evidence is kept with one rewrite, which covers
// the evidence's content references too (an evidence row of the call's own
// span: its events' content).
func TestBatchIsOneRewrite(t *testing.T) {
	ctx := context.Background()
	eng := &gatedEngine{Engine: testStore.eng, gate: make(chan struct{})}
	close(eng.gate)
	store := New(eng)
	call := refreshCall(fmt.Sprintf("%032x", rand.Uint64()))
	chunk, err := rowbinary.EncodeCalls(nil, []ledger.Call{call})
	if err != nil {
		t.Fatal(err)
	}
	const ref = "docket://batch-test/doc-1"
	ev := ledger.EvidenceSpan{Tenant: refreshTenant, TraceID: call.TraceID, SpanID: call.SpanID,
		StartTime: call.StartTime, EndTime: call.EndTime, Documents: []ledger.Document{}, ContentRefs: []string{ref}, AttributeIssues: []string{}, IngestedAt: call.IngestedAt}
	traces := []string{call.TraceID}
	if err := store.InsertBatch(ctx, [][]byte{chunk}, 1, traces, []ledger.EvidenceSpan{ev}); err != nil {
		t.Fatal(err)
	}
	if got := eng.rewrites.Load(); got != 1 {
		t.Fatalf("%d rewrites for one batch, want 1", got)
	}
	got, err := store.CallsByTrace(ctx, call.TraceID)
	if err != nil || len(got) != 1 {
		t.Fatalf("the batch's trace reads %+v, %v", got, err)
	}
	if !slices.Equal(got[0].MemberRefs, []string{ref}) {
		t.Fatalf("the call's member refs are %v, want [%s]", got[0].MemberRefs, ref)
	}

	// Evidence alone, for a call written before, is a rewrite of its own.
	later := refreshCall(fmt.Sprintf("%032x", rand.Uint64()))
	if err := store.InsertCalls(ctx, []ledger.Call{later}); err != nil {
		t.Fatal(err)
	}
	ev.TraceID, ev.SpanID = later.TraceID, later.SpanID
	if err := store.InsertEvidence(ctx, []ledger.EvidenceSpan{ev}); err != nil {
		t.Fatal(err)
	}
	if got := eng.rewrites.Load(); got != 3 {
		t.Fatalf("%d rewrites after a batch, calls and evidence, want 3", got)
	}
	if got, err = store.CallsByTrace(ctx, later.TraceID); err != nil || len(got) != 1 || !slices.Equal(got[0].MemberRefs, []string{ref}) {
		t.Fatalf("after its evidence the later call reads %+v, %v", got, err)
	}
}

// refreshTenant holds the refresh tests' calls.
const refreshTenant = "refresh"

func refreshCall(trace string) ledger.Call {
	now := time.Now().UTC()
	return ledger.Call{Tenant: refreshTenant, TraceID: trace, SpanID: fmt.Sprintf("%016x", rand.Uint64()), StartTime: now, EndTime: now,
		Operation: "chat", FinishReasons: []string{}, StopSequences: []string{}, RequestParams: map[string]string{}, AttributeIssues: []string{}, IngestedAt: now}
}

// waitFor polls cond until it holds (a state the test sets up, not a
// timing it asserts).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in a minute")
		}
	}
}
