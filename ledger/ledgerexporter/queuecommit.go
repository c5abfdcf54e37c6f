package ledgerexporter

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"
)

// The upstream persistent queue writes its storage three times per
// request: to enqueue it (the item and the metadata), to dispatch it (the
// metadata, and a read of the item) and once it is exported (the metadata
// and a deletion). Each is a bbolt commit, with two file syncs when the
// file storage syncs: 12% of the collector's CPU at 2,400 calls/s. Only
// the enqueue must be durable when it returns, since it acknowledges
// calls; guardedClient therefore defers the other two:
//
//   - a dispatch takes the item from memory while its enqueue is recent
//     enough to be held there (itemCacheBytes), else reads it from storage,
//     and its metadata write waits;
//   - a deletion waits with the metadata that goes with it;
//   - what waits is written in the transaction of the next batch the queue
//     writes (the next enqueue under load), before it, or on its own after
//     flushDelay, or at Close.
//
// The storage therefore always holds a state the queue was in: metadata
// written later is the newest the queue gave (a batch that writes newer
// metadata itself drops the waiting one), and an item is deleted only
// together with or after metadata that counts it exported. An enqueue is
// written as before, so nothing acknowledged is lost; a crash before the
// waiting writes redelivers the items dispatched since, which the ledger
// deduplicates, as when a dispatch's metadata write fails (queueguard.go).
// While the guard refuses calls because the disk is full, nothing waits:
// the deletions are what frees it.
const (
	flushDelay     = 200 * time.Millisecond
	itemCacheBytes = 16 << 20
)

// commits is guardedClient's state for the deferred writes.
type commits struct {
	mu      sync.Mutex
	deletes []*storage.Operation
	meta    *storage.Operation // the newest metadata not yet written
	timer   *time.Timer
	closed  bool
	// items are the values of items enqueued and not yet dispatched, up to
	// itemCacheBytes in all.
	items     map[string][]byte
	itemBytes int
}

func (c *guardedClient) Batch(ctx context.Context, ops ...*storage.Operation) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.guard.isFull() {
		// The guard has logged the full disk; this would repeat it at
		// every operation of the queue.
		if err := c.flush(ctx); err != nil {
			c.guard.logger.Debug("ledger sending queue: deferred queue writes failed on the full disk; they are retried", zap.Error(err))
		}
		return c.writeNow(ctx, ops)
	}
	if meta, item, ok := queueUpdate(ops); ok {
		switch item.Type {
		case storage.Delete:
			c.take(item.Key)
			c.deletes = append(c.deletes, item)
			c.wait(meta)
			return nil
		case storage.Get:
			c.wait(meta)
			if v, held := c.take(item.Key); held {
				item.Value = v
				return nil
			}
			if err := c.flush(ctx, item); err == nil {
				return nil
			}
			return c.Client.Batch(ctx, item)
		}
	}
	if c.meta != nil || len(c.deletes) > 0 {
		if err := c.flush(ctx, ops...); err == nil {
			c.keep(ops)
			return nil
		}
		// The queue's own batch alone, with the guard's fallbacks; what
		// waits is retried later.
	}
	return c.writeNow(ctx, ops)
}

// writeNow writes the queue's batch through the guard.
func (c *guardedClient) writeNow(ctx context.Context, ops []*storage.Operation) error {
	if err := c.write(ctx, ops); err != nil {
		return err
	}
	for _, op := range ops {
		if op.Type == storage.Set && queueMetadataKeys[op.Key] {
			c.meta = nil // older than what the queue just wrote
		}
	}
	c.keep(ops)
	return nil
}

// queueUpdate tells whether ops is the queue's metadata write followed by
// a read (a dispatch) or a deletion (the end of one) of one item.
func queueUpdate(ops []*storage.Operation) (meta, item *storage.Operation, ok bool) {
	if len(ops) != 2 || ops[0].Type != storage.Set || !queueMetadataKeys[ops[0].Key] || queueMetadataKeys[ops[1].Key] {
		return nil, nil, false
	}
	return ops[0], ops[1], ops[1].Type == storage.Get || ops[1].Type == storage.Delete
}

// wait makes meta the metadata to write, and makes sure it is written
// within flushDelay.
func (c *guardedClient) wait(meta *storage.Operation) {
	c.meta = meta
	if c.timer == nil && !c.closed {
		c.timer = time.AfterFunc(flushDelay, c.flushLater)
	}
}

// flush writes what waits, then extra, in one transaction.
func (c *guardedClient) flush(ctx context.Context, extra ...*storage.Operation) error {
	if c.meta == nil && len(c.deletes) == 0 && len(extra) == 0 {
		return nil
	}
	ops := make([]*storage.Operation, 0, len(c.deletes)+1+len(extra))
	ops = append(ops, c.deletes...)
	if c.meta != nil {
		ops = append(ops, c.meta)
	}
	ops = append(ops, extra...)
	if err := c.Client.Batch(ctx, ops...); err != nil {
		return err
	}
	if len(c.deletes) > 0 {
		c.guard.freed()
	}
	c.deletes, c.meta = nil, nil
	return nil
}

func (c *guardedClient) flushLater() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timer = nil
	if c.closed {
		return
	}
	if err := c.flush(context.Background()); err != nil {
		if c.guard.metaWriteFailures != nil {
			c.guard.metaWriteFailures(context.Background())
		}
		c.guard.logger.Warn("ledger sending queue: deferred queue writes failed; they are retried", zap.Error(err))
		c.timer = time.AfterFunc(max(flushDelay, c.guard.retryEvery), c.flushLater)
	}
}

// flushOnClose writes what waits before the client closes. If it cannot,
// the items it would have deleted are delivered again after a restart.
func (c *guardedClient) flushOnClose(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	if err := c.flush(ctx); err != nil {
		c.guard.logger.Warn("ledger sending queue: deferred queue writes failed at close; the items they finish are delivered again after a restart", zap.Error(err))
	}
}

// keep holds the items ops wrote for their dispatch. The queue marshals
// each item into a buffer of its own, which it does not touch again.
func (c *guardedClient) keep(ops []*storage.Operation) {
	for _, op := range ops {
		if op.Type != storage.Set || queueMetadataKeys[op.Key] || c.itemBytes+len(op.Value) > itemCacheBytes {
			continue
		}
		if c.items == nil {
			c.items = make(map[string][]byte)
		}
		c.take(op.Key)
		c.items[op.Key] = op.Value
		c.itemBytes += len(op.Value)
	}
}

func (c *guardedClient) take(key string) ([]byte, bool) {
	v, ok := c.items[key]
	if ok {
		delete(c.items, key)
		c.itemBytes -= len(v)
	}
	return v, ok
}

func (c *guardedClient) Get(ctx context.Context, key string) ([]byte, error) {
	op := storage.GetOperation(key)
	err := c.Batch(ctx, op)
	return op.Value, err
}
