package ledgerexporter

import (
	"sync"
	"time"

	"go.uber.org/zap"
)

// outageLog makes a storage outage visible in the logs: once when it starts,
// every interval while it lasts (calls keep waiting in the sending queue),
// and once when storage is back.
type outageLog struct {
	logger   *zap.Logger
	interval time.Duration

	mu      sync.Mutex
	since   time.Time
	lastLog time.Time
	fails   int
}

func (o *outageLog) failure(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := time.Now()
	o.fails++
	if o.since.IsZero() {
		o.since, o.lastLog = now, now
		o.logger.Warn("ledger storage unavailable: calls wait in the sending queue and are retried; watch otelcol_exporter_queue_size against otelcol_exporter_queue_capacity", zap.Error(err))
		return
	}
	if now.Sub(o.lastLog) >= o.interval {
		o.lastLog = now
		o.logger.Warn("ledger storage still unavailable; calls are waiting in the sending queue",
			zap.Duration("for", now.Sub(o.since).Round(time.Second)), zap.Int("failed_writes", o.fails), zap.Error(err))
	}
}

func (o *outageLog) success() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.since.IsZero() {
		return
	}
	o.logger.Info("ledger storage available again; queued calls are being written",
		zap.Duration("after", time.Since(o.since).Round(time.Second)), zap.Int("failed_writes", o.fails))
	o.since, o.fails = time.Time{}, 0
}
