package ledgerexporter

import (
	"sync"
	"time"

	"github.com/docketlabs/docket/ledger"
)

// RequestSpansConfig bounds how the exporter links request-path spans
// (server, producer, consumer) to the LLM calls of their trace. They are
// evidence only for traces that hold a call, and the spans of one trace
// arrive in different batches in the order they end: a producer span
// before the call, the worker's consumer span and the server span after it.
// So the exporter remembers the traces whose calls it saw, and holds a
// request span whose trace has shown no call yet, for Window on each side.
// A request span held longer, or pushed out when MaxPendingSpans are held,
// is dropped (counted in otelcol_exporter_ledger_request_spans_dropped); a trace
// pushed out of the MaxTraces remembered loses request spans that arrive
// later. The memory is about 150 bytes per remembered trace and 1 KiB per
// held span (by default ≤ 30 MB and ≤ 20 MB). Held spans are in memory
// only: a restart forgets them, and the calls remembered.
type RequestSpansConfig struct {
	Window          time.Duration `mapstructure:"window"`
	MaxTraces       int           `mapstructure:"max_traces"`
	MaxPendingSpans int           `mapstructure:"max_pending_spans"`
}

var defaultRequestSpans = RequestSpansConfig{Window: 5 * time.Minute, MaxTraces: 200000, MaxPendingSpans: 20000}

type traceKey struct{ tenant, traceID string }

type stamped struct {
	key traceKey
	at  time.Time
}

// fifo is a queue of stamped keys, oldest first.
type fifo struct {
	items []stamped
	head  int
}

func (q *fifo) push(s stamped) { q.items = append(q.items, s) }
func (q *fifo) len() int       { return len(q.items) - q.head }
func (q *fifo) peek() stamped  { return q.items[q.head] }

func (q *fifo) pop() {
	q.items[q.head] = stamped{}
	q.head++
	if q.head > 1024 && q.head*2 > len(q.items) {
		q.items = append(q.items[:0], q.items[q.head:]...)
		q.head = 0
	}
}

// requestLinker decides which request-path spans are kept. Safe for
// concurrent use: batches are converted on the receivers' goroutines.
type requestLinker struct {
	cfg RequestSpansConfig

	mu         sync.Mutex
	calls      map[traceKey]time.Time // last call seen per trace
	callOrder  fifo
	pending    map[traceKey][]ledger.EvidenceSpan
	pendingAt  map[traceKey]time.Time // when the trace's first held span came
	pendOrder  fifo
	pendingLen int
}

func newRequestLinker(cfg RequestSpansConfig) *requestLinker {
	return &requestLinker{cfg: cfg, calls: map[traceKey]time.Time{},
		pending: map[traceKey][]ledger.EvidenceSpan{}, pendingAt: map[traceKey]time.Time{}}
}

// link takes the traces of the calls and the request-path spans of one
// batch, received at now, and returns the request spans to write with it:
// those of traces with a call, including spans held from earlier batches.
// dropped counts held spans given up (expired or pushed out).
func (l *requestLinker) link(now time.Time, calls []traceKey, spans []ledger.EvidenceSpan) (keep []ledger.EvidenceSpan, dropped int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	dropped = l.expire(now)
	for _, k := range calls {
		if _, seen := l.calls[k]; !seen {
			l.callOrder.push(stamped{k, now})
		}
		l.calls[k] = now
		if held, ok := l.pending[k]; ok {
			keep = append(keep, held...)
			l.release(k)
		}
	}
	for l.callOrder.len() > 0 && len(l.calls) > l.cfg.MaxTraces {
		l.forgetOldestCall()
	}
	for _, s := range spans {
		k := traceKey{s.Tenant, s.TraceID}
		if _, ok := l.calls[k]; ok {
			keep = append(keep, s)
			continue
		}
		for l.pendingLen >= l.cfg.MaxPendingSpans && l.pendOrder.len() > 0 {
			dropped += l.dropOldestPending()
		}
		if _, ok := l.pending[k]; !ok {
			l.pendingAt[k] = now
			l.pendOrder.push(stamped{k, now})
		}
		l.pending[k] = append(l.pending[k], s)
		l.pendingLen++
	}
	return keep, dropped
}

// expire forgets calls and drops held spans older than the window.
func (l *requestLinker) expire(now time.Time) (dropped int) {
	cutoff := now.Add(-l.cfg.Window)
	for l.callOrder.len() > 0 && l.callOrder.peek().at.Before(cutoff) {
		l.forgetOldestCall()
	}
	for l.pendOrder.len() > 0 && l.pendOrder.peek().at.Before(cutoff) {
		dropped += l.dropOldestPending()
	}
	return dropped
}

// forgetOldestCall removes the oldest queued call trace, unless a later
// call of the same trace renewed it (then it is queued again).
func (l *requestLinker) forgetOldestCall() {
	s := l.callOrder.peek()
	l.callOrder.pop()
	if at, ok := l.calls[s.key]; ok && at.Equal(s.at) {
		delete(l.calls, s.key)
	} else if ok {
		l.callOrder.push(stamped{s.key, at})
	}
}

// dropOldestPending drops the held spans of the oldest waiting trace.
func (l *requestLinker) dropOldestPending() int {
	s := l.pendOrder.peek()
	l.pendOrder.pop()
	if at, ok := l.pendingAt[s.key]; !ok || !at.Equal(s.at) {
		return 0 // released earlier
	}
	n := len(l.pending[s.key])
	l.release(s.key)
	return n
}

func (l *requestLinker) release(k traceKey) {
	l.pendingLen -= len(l.pending[k])
	delete(l.pending, k)
	delete(l.pendingAt, k)
}
