package ledgerexporter

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"
)

// guardedQueueStorage is the guarded client of a real file storage whose
// database may not grow past maxSize.
func guardedQueueStorage(t testing.TB, maxSize int64) (*queueGuard, storage.Client) {
	t.Helper()
	f := filestorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*filestorage.Config)
	cfg.Directory = t.TempDir()
	cfg.MaxSize = maxSize
	cfg.FSync = true // as the shipped configurations
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := ext.Start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ext.Shutdown(ctx) })
	g := &queueGuard{logger: zap.NewNop(), reserveChunks: 16, retryEvery: 0}
	c, err := (&guardedStorage{Extension: ext.(storage.Extension), guard: g}).GetClient(ctx, component.KindExporter, component.MustNewID("ledger"), "traces")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(ctx) })
	return g, c
}

// enqueue is the upstream queue's put: the metadata and the item at once.
func enqueue(c storage.Client, i int, item []byte) error {
	return c.Batch(context.Background(), storage.SetOperation("qmv0", []byte(fmt.Sprint(i))), storage.SetOperation(fmt.Sprint(i), item))
}

func TestFullStorageTakesTheEnqueueThatHitItThenRefuses(t *testing.T) {
	g, c := guardedQueueStorage(t, 4<<20)
	item := make([]byte, 100<<10)
	n := 0
	for ; n < 1000 && g.refusal(context.Background()) == nil; n++ {
		if err := enqueue(c, n, item); err != nil {
			t.Fatalf("enqueue %d failed: the reserve should have taken it: %v", n, err)
		}
	}
	if n == 1000 {
		t.Fatal("the storage never filled")
	}
	if err := g.refusal(context.Background()); !errors.Is(err, errQueueStorageFull) {
		t.Fatalf("refusal after the disk filled: %v", err)
	}
	for i := 0; i < n; i++ {
		v, err := c.Get(context.Background(), fmt.Sprint(i))
		if err != nil || len(v) != len(item) {
			t.Fatalf("item %d of %d: %d bytes, %v", i, n, len(v), err)
		}
	}
	// The queue drains: the reserve fits again and calls are accepted.
	for i := 0; i < n; i++ {
		if err := c.Batch(context.Background(), storage.SetOperation("qmv0", nil), storage.DeleteOperation(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.refusal(context.Background()); err != nil {
		t.Fatalf("still refusing after the queue drained: %v", err)
	}
}

func TestDispatchKeepsItsItemWhenTheMetadataWriteFails(t *testing.T) {
	_, c := guardedQueueStorage(t, 4<<20)
	if err := enqueue(c, 0, []byte("call")); err != nil {
		t.Fatal(err)
	}
	// Metadata too large for the database's bound fails like a full disk.
	get := storage.GetOperation("0")
	if err := c.Batch(context.Background(), storage.SetOperation("qmv0", make([]byte, 8<<20)), get); err != nil {
		t.Fatalf("dispatch: %v; want the item read without the metadata write", err)
	}
	if string(get.Value) != "call" {
		t.Fatalf("dispatched %q", get.Value)
	}
	if v, err := c.Get(context.Background(), "0"); err != nil || string(v) != "call" {
		t.Fatalf("item after the failed metadata write: %q, %v", v, err)
	}
}
