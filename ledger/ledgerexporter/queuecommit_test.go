package ledgerexporter

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/docketlabs/docket/internal/proctest"
)

// stored reads key from what the file storage has committed, past the
// guard's deferred writes: what a restart after a crash would find.
func stored(t *testing.T, c storage.Client, key string) string {
	t.Helper()
	v, err := c.(*guardedClient).Client.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return string(v)
}

// dispatch and finish are the upstream queue's batches that start and end
// the export of item i.
func dispatch(c storage.Client, i int) (string, error) {
	get := storage.GetOperation(fmt.Sprint(i))
	err := c.Batch(context.Background(), storage.SetOperation("qmv0", fmt.Appendf(nil, "dispatched %d", i)), get)
	return string(get.Value), err
}

func finish(c storage.Client, i int) error {
	return c.Batch(context.Background(), storage.SetOperation("qmv0", fmt.Appendf(nil, "finished %d", i)), storage.DeleteOperation(fmt.Sprint(i)))
}

func TestFinishedItemIsDeletedWithTheNextEnqueue(t *testing.T) {
	_, c := guardedQueueStorage(t, 4<<20)
	if err := enqueue(c, 0, []byte("call 0")); err != nil {
		t.Fatal(err)
	}
	if v, err := dispatch(c, 0); err != nil || v != "call 0" {
		t.Fatalf("dispatched %q, %v", v, err)
	}
	if err := finish(c, 0); err != nil {
		t.Fatal(err)
	}
	// A crash now finds the item and the metadata of its enqueue: the
	// item is delivered again, not lost.
	if v, m := stored(t, c, "0"), stored(t, c, "qmv0"); v != "call 0" || m != "0" {
		t.Fatalf("after the export, before the next write: item %q, metadata %q; want the item and the enqueue's metadata", v, m)
	}
	if err := enqueue(c, 1, []byte("call 1")); err != nil {
		t.Fatal(err)
	}
	if v, m, v1 := stored(t, c, "0"), stored(t, c, "qmv0"), stored(t, c, "1"); v != "" || m != "1" || v1 != "call 1" {
		t.Fatalf("after the next enqueue: item 0 %q, metadata %q, item 1 %q; want item 0 deleted with it", v, m, v1)
	}
}

func TestDeferredQueueWritesLandWithoutAnotherEnqueue(t *testing.T) {
	_, c := guardedQueueStorage(t, 4<<20)
	if err := enqueue(c, 0, []byte("call 0")); err != nil {
		t.Fatal(err)
	}
	if _, err := dispatch(c, 0); err != nil {
		t.Fatal(err)
	}
	if err := finish(c, 0); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * flushDelay)
	for stored(t, c, "0") != "" {
		if time.Now().After(deadline) {
			t.Fatalf("item still stored %s after its export", 10*flushDelay)
		}
		time.Sleep(flushDelay / 4)
	}
	if m := stored(t, c, "qmv0"); m != "finished 0" {
		t.Fatalf("metadata %q, want the finish's", m)
	}
}

func TestDispatchReadsStorageWhenTheItemIsNotHeld(t *testing.T) {
	_, c := guardedQueueStorage(t, 4<<20)
	// An item enqueued before a restart is in storage only.
	if err := c.(*guardedClient).Client.Batch(context.Background(), storage.SetOperation("qmv0", []byte("0")), storage.SetOperation("0", []byte("call 0"))); err != nil {
		t.Fatal(err)
	}
	if v, err := dispatch(c, 0); err != nil || v != "call 0" {
		t.Fatalf("dispatched %q, %v", v, err)
	}
	// A value not held is never invented.
	if v, err := dispatch(c, 7); err != nil || v != "" {
		t.Fatalf("dispatched a missing item: %q, %v", v, err)
	}
}

// BenchmarkQueueStorage is the storage cost of one request through the
// persistent queue (enqueue, dispatch, finish) on a syncing file storage:
// direct is the storage as the queue used it before the guard deferred its
// writes.
func BenchmarkQueueStorage(b *testing.B) {
	item := make([]byte, 4<<10)
	for _, name := range []string{"direct", "guarded"} {
		b.Run(name, func(b *testing.B) {
			_, c := guardedQueueStorage(b, 1<<30)
			if name == "direct" {
				c = c.(*guardedClient).Client
			}
			cpu0 := proctest.SelfCPU()
			i := 0
			for b.Loop() {
				if err := enqueue(c, i, item); err != nil {
					b.Fatal(err)
				}
				if _, err := dispatch(c, i); err != nil {
					b.Fatal(err)
				}
				if err := finish(c, i); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64((proctest.SelfCPU()-cpu0).Microseconds())/float64(i), "cpu-µs/op")
		})
	}
}
