package ledgerexporter

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"
)

// The persistent queue of exporterhelper v0.161.0 deletes an item it has
// already acknowledged when the metadata write that marks the item as
// dispatched fails (getNextItem → itemDispatchingFinish), which is what a
// full disk does; and a failed enqueue leaves its size counted in
// otelcol_exporter_queue_size. queueGuard wraps the queue's storage client
// so that neither happens here (the upstream fix is in
// docs/upstream/exporterhelper-persistent-queue.md):
//
//   - A dispatch (the metadata write plus the read of the next item) whose
//     metadata write fails is done as the read alone. The item stays; the
//     metadata catches up at the next write, and a crash in between
//     redelivers the item, which the ledger deduplicates.
//   - A reserve value keeps disk space for the queue's own bookkeeping.
//     When an item no longer fits, the reserve is given up so the item that
//     was already on its way in is stored rather than failed, and the
//     exporter refuses new calls at once until the reserve fits again.
//     Failed enqueues therefore stay rare, and a refused call was never
//     counted as queued.
type queueGuard struct {
	logger *zap.Logger
	// reserveChunks of reserveChunkSize bytes make up the reserve: one big
	// value would be copied whole by every write to its page (the file
	// storage copies pages on write).
	reserveChunks int
	// retryEvery bounds how often a full guard tries to restore its reserve.
	retryEvery time.Duration

	mu        sync.Mutex
	client    storage.Client
	full      error // non-nil while new calls are refused
	lastRetry time.Time
	// freedSince counts deletions since the last failed reserve write: no
	// point retrying before the queue has let go of something.
	freedSince int

	metaWriteFailures func(context.Context)
}

// Keys of the upstream persistent queue's metadata (queue/persistent_queue.go):
// the current one and the legacy ones it migrates from.
var queueMetadataKeys = map[string]bool{"qmv0": true, "ri": true, "wi": true, "di": true}

const reserveChunkSize = 64 << 10

// reserveKey cannot collide with the queue's keys (decimal indexes and the
// metadata keys above), and sorts before all of them, next to the oldest
// items rather than the metadata every operation rewrites.
func reserveKey(i int) string { return fmt.Sprintf("!docket.ledger.disk_reserve.%05d", i) }

// writeReserve writes every chunk of the reserve in one batch.
func (g *queueGuard) writeReserve(ctx context.Context, c storage.Client) error {
	ops := make([]*storage.Operation, g.reserveChunks)
	chunk := make([]byte, reserveChunkSize)
	for i := range ops {
		ops[i] = storage.SetOperation(reserveKey(i), chunk)
	}
	return c.Batch(ctx, ops...)
}

var errQueueStorageFull = errors.New("ledger: the sending queue's storage is full")

// refusal is why new calls are refused now, or nil.
func (g *queueGuard) refusal(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.full == nil {
		return nil
	}
	if g.client != nil && g.freedSince > 0 && time.Since(g.lastRetry) >= g.retryEvery {
		g.lastRetry = time.Now()
		if err := g.writeReserve(ctx, g.client); err == nil {
			g.logger.Info("ledger sending queue has room again; accepting calls")
			g.full = nil
			return nil
		}
		g.freedSince = 0
	}
	return g.full
}

func (g *queueGuard) setFull(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.full == nil {
		g.logger.Error("ledger sending queue storage is full: new calls are refused with Retry-After until the queue drains", zap.Error(err))
	}
	g.full = fmt.Errorf("%w: %w", errQueueStorageFull, err)
	g.lastRetry = time.Now()
	g.freedSince = 0
}

// isFull tells whether new calls are refused: the queue's writes are then
// not deferred, since its deletions are what frees the disk.
func (g *queueGuard) isFull() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.full != nil
}

func (g *queueGuard) freed() {
	g.mu.Lock()
	g.freedSince++
	g.mu.Unlock()
}

// wrapHost hands the queue the guarded storage extension.
func (g *queueGuard) wrapHost(host component.Host, storageID *component.ID) component.Host {
	if storageID == nil {
		return host
	}
	return &guardedHost{Host: host, storageID: *storageID, guard: g}
}

type guardedHost struct {
	component.Host
	storageID component.ID
	guard     *queueGuard
}

func (h *guardedHost) GetExtensions() map[component.ID]component.Component {
	exts := h.Host.GetExtensions()
	ext, ok := exts[h.storageID].(storage.Extension)
	if !ok {
		return exts // the queue reports the missing or wrong extension
	}
	out := make(map[component.ID]component.Component, len(exts))
	for id, e := range exts {
		out[id] = e
	}
	out[h.storageID] = &guardedStorage{Extension: ext, guard: h.guard}
	return out
}

// Report keeps component status reporting working through the wrapper.
func (h *guardedHost) Report(ev *componentstatus.Event) {
	componentstatus.ReportStatus(h.Host, ev)
}

type guardedStorage struct {
	storage.Extension
	guard *queueGuard
}

func (s *guardedStorage) GetClient(ctx context.Context, kind component.Kind, id component.ID, name string) (storage.Client, error) {
	c, err := s.Extension.GetClient(ctx, kind, id, name)
	if err != nil {
		return nil, err
	}
	g := s.guard
	g.mu.Lock()
	g.client = c
	g.mu.Unlock()
	if err := g.writeReserve(ctx, c); err != nil {
		g.setFull(fmt.Errorf("write the disk reserve: %w", err))
		g.freed() // retry the reserve at the first refused call
	}
	return &guardedClient{Client: c, guard: g}, nil
}

type guardedClient struct {
	storage.Client
	guard *queueGuard
	commits
}

// write runs a batch the queue could not defer (queuecommit.go), keeping
// the queue's items when the storage fails.
func (c *guardedClient) write(ctx context.Context, ops []*storage.Operation) error {
	err := c.Client.Batch(ctx, ops...)
	putsItem, dispatches, deletes := classify(ops)
	switch {
	case err == nil:
		if deletes {
			c.guard.freed()
		}
		return nil
	case putsItem:
		return c.retryPut(ctx, err, ops)
	case dispatches:
		// Read the item without the metadata write instead of letting the
		// queue delete it.
		rest := make([]*storage.Operation, 0, len(ops))
		for _, op := range ops {
			if op.Type == storage.Get {
				rest = append(rest, op)
			}
		}
		if err2 := c.Client.Batch(ctx, rest...); err2 != nil {
			return errors.Join(err, err2)
		}
		if c.guard.metaWriteFailures != nil {
			c.guard.metaWriteFailures(ctx)
		}
		c.guard.logger.Warn("ledger sending queue: metadata write failed while dispatching; the item is kept and the metadata is written with the next update", zap.Error(err))
		return nil
	}
	return err
}

// retryPut stores an item that did not fit by giving up reserve chunks
// until it does, and turns the guard full; with the reserve gone the put
// fails.
func (c *guardedClient) retryPut(ctx context.Context, err error, ops []*storage.Operation) error {
	c.guard.setFull(err)
	const step = 16 // 1 MiB at a time
	for first := 0; first < c.guard.reserveChunks; first += step {
		del := make([]*storage.Operation, 0, step)
		for i := first; i < min(first+step, c.guard.reserveChunks); i++ {
			del = append(del, storage.DeleteOperation(reserveKey(i)))
		}
		if derr := c.Client.Batch(ctx, del...); derr != nil {
			return errors.Join(err, derr)
		}
		if err = c.Client.Batch(ctx, ops...); err == nil {
			return nil
		}
	}
	return err
}

// classify tells what a queue batch does: write an item (enqueue); write
// only the metadata and read items (dispatch, the batch the upstream queue
// answers with a deletion when it fails); delete.
func classify(ops []*storage.Operation) (putsItem, dispatches, deletes bool) {
	writesMeta, reads := false, false
	for _, op := range ops {
		switch op.Type {
		case storage.Set:
			if queueMetadataKeys[op.Key] {
				writesMeta = true
			} else {
				putsItem = true
			}
		case storage.Get:
			reads = true
		case storage.Delete:
			deletes = true
		}
	}
	return putsItem, writesMeta && reads && !putsItem && !deletes, deletes
}

func (c *guardedClient) Set(ctx context.Context, key string, value []byte) error {
	return c.Batch(ctx, storage.SetOperation(key, value))
}

func (c *guardedClient) Delete(ctx context.Context, key string) error {
	return c.Batch(ctx, storage.DeleteOperation(key))
}

func (c *guardedClient) Close(ctx context.Context) error {
	c.flushOnClose(ctx)
	c.guard.mu.Lock()
	c.guard.client = nil
	c.guard.mu.Unlock()
	return c.Client.Close(ctx)
}
