package contentrefprocessor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/internal/parallel"
)

// defaultStoreID is the extension the processor uses when store is unset.
var defaultStoreID = component.NewID(component.MustNewType("contentstore"))

type contentRef struct {
	cfg    *Config
	logger *zap.Logger
	tel    *telemetry
	budget *budget

	store contentstore.Store

	lastWarn atomic.Int64 // unix nanos of the last unexpected-error warning
}

func newContentRef(cfg *Config, logger *zap.Logger, tel *telemetry) *contentRef {
	return &contentRef{cfg: cfg, logger: logger, tel: tel, budget: newBudget(cfg.MaxInflightBytes)}
}

// start finds the content store extension. There is no fallback store: one
// opened here would be unknown to deletion, legal hold and the UI, with a
// secret made up on the spot.
func (p *contentRef) start(_ context.Context, host component.Host) error {
	id := defaultStoreID
	if p.cfg.Store != nil {
		id = *p.cfg.Store
	}
	st, err := contentstore.Lookup(host, id)
	if err != nil {
		return fmt.Errorf("contentref: no content store: %w (declare it in extensions and service.extensions, or name another with store)", err)
	}
	p.store = st
	return nil
}

// source says where an item's content sits.
type source int

const (
	srcAttrs      source = iota // a content key and its indexed forms
	srcEventAttrs               // the non-metadata attributes of a content event
	srcBody                     // a content log record's body
	srcUnknown                  // the attributes of GenAI telemetry that are neither content keys nor metadata
)

// item is one piece of content and, after run, what became of it.
type item struct {
	rec   *record
	attrs pcommon.Map   // holds the content (unless srcBody) and gets the reference
	body  pcommon.Value // srcBody
	src   source
	key   int  // srcAttrs: index in conventions.ContentKeys
	exact bool // srcAttrs: the key alone, without indexed forms
	kind  string
	scope string // the instrumentation scope, for conventions.Lift
	// unknown selects the attributes of a srcUnknown item.
	unknown func(string) bool

	size   int64
	status string
	ref    string
}

// record is a span or log record: it gets the summary of its items and
// those of its events.
type record struct {
	attrs pcommon.Map
	res   *resourceInfo
	items []*item
}

type resourceInfo struct {
	tenant    string
	tenantErr bool
	capture   bool
	// metadata are the configured metadata keys beyond the contract's.
	metadata map[string]bool
}

// resource decides tenant and capture once per resource. The tenant rule is
// the ledger exporter's, so the reference and the ledger row agree.
func (p *contentRef) resource(res pcommon.Resource) *resourceInfo {
	attrs := res.Attributes()
	tenant := conventions.Tenant(attrs, p.cfg.DefaultTenant)
	service := ""
	if v, ok := attrs.Get("service.name"); ok {
		service = v.AsString()
	}
	return &resourceInfo{
		tenant:    tenant,
		tenantErr: contentstore.ValidateTenant(tenant) != nil,
		capture:   p.cfg.captures(tenant, service),
		metadata:  p.cfg.metadataKeys(tenant, service),
	}
}

// batch collects the content of one ConsumeTraces/ConsumeLogs call, stores
// it concurrently, then rewrites the telemetry in one sequential pass.
type batch struct {
	signal  signal
	planted int64 // attributes removed by removePlanted
	scope   string
	items   []*item
	records []*record
	cur     *record
	pending record
	// unknown counts, per family, the attributes treated as unknown, and
	// dropped those of them removed unstored (unknown_keys: drop), on
	// droppedRecords spans and log records.
	unknown, dropped map[string]int64
	droppedRecords   int64
}

// begin starts a span or log record; its record is created with its first
// item.
func (b *batch) begin(attrs pcommon.Map, res *resourceInfo) {
	b.cur = nil
	b.pending = record{attrs: attrs, res: res}
}

func (b *batch) add(it *item) {
	if b.cur == nil {
		r := b.pending
		b.cur = &r
		b.records = append(b.records, b.cur)
	}
	it.rec = b.cur
	b.cur.items = append(b.cur.items, it)
	b.items = append(b.items, it)
}

// collectAttrs finds the content keys among attrs.
func (b *batch) collectAttrs(attrs pcommon.Map) {
	var found, indexed bitset
	for k := range attrs.All() {
		if i := conventions.ContentIndex(k); i >= 0 {
			if found.has(i) || k != conventions.ContentKeys[i].Name {
				indexed.set(i)
			}
			found.set(i)
		}
	}
	for i, ck := range conventions.ContentKeys {
		if found.has(i) {
			b.add(&item{attrs: attrs, src: srcAttrs, key: i, exact: !indexed.has(i), kind: ck.Kind, scope: b.scope})
		}
	}
}

// bitset holds one bit per content key (TestContentKeysFitTheBitset).
type bitset [4]uint64

func (s *bitset) set(i int)      { s[i/64] |= 1 << (i % 64) }
func (s *bitset) has(i int) bool { return s[i/64]&(1<<(i%64)) != 0 }

// collectEvent handles the payload of a content event beyond its content
// keys.
func (b *batch) collectEvent(attrs pcommon.Map, kind string) {
	for k := range attrs.All() {
		if !keptEventAttr(k) {
			b.add(&item{attrs: attrs, src: srcEventAttrs, kind: kind})
			return
		}
	}
}

// countDropped counts a span or log record whose unknown attributes were
// dropped.
func (b *batch) countDropped(cfg *Config) {
	if cfg.UnknownKeys == UnknownDrop {
		b.droppedRecords++
	}
}

// collectUnknown handles the attributes of GenAI telemetry that are
// neither content keys nor metadata (nor, on a content event, its payload,
// which collectEvent took): stored together as one item, or dropped. It
// returns how many there were.
func (p *contentRef) collectUnknown(b *batch, attrs pcommon.Map, family string, contentEvent bool) int64 {
	// The names are taken now: by the time the item is applied, references
	// and lifted metadata of other items sit next to them.
	var names []string
	extra := b.pending.res.metadata
	for k, v := range attrs.All() {
		if !conventions.IsContent(k) && !conventions.IsMetadataValue(k, v) && !extra[k] && (!contentEvent || keptEventAttr(k)) {
			names = append(names, k)
		}
	}
	if len(names) == 0 {
		return 0
	}
	b.unknown[family] += int64(len(names))
	unknown := func(k string) bool { return slices.Contains(names, k) }
	if p.cfg.UnknownKeys == UnknownDrop {
		b.dropped[family] += int64(len(names))
		attrs.RemoveIf(func(k string, _ pcommon.Value) bool { return unknown(k) })
	} else {
		b.add(&item{attrs: attrs, src: srcUnknown, kind: conventions.UnknownKind, unknown: unknown})
	}
	return int64(len(names))
}

func (p *contentRef) processTraces(ctx context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	b := &batch{signal: signalTraces, unknown: map[string]int64{}, dropped: map[string]int64{}}
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		var res *resourceInfo
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			b.scope = rs.ScopeSpans().At(j).Scope().Name()
			spans := rs.ScopeSpans().At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				if res == nil {
					res = p.resource(rs.Resource())
				}
				span := spans.At(k)
				b.planted += removePlanted(span.Attributes())
				b.begin(span.Attributes(), res)
				b.collectAttrs(span.Attributes())
				family, genAI := p.cfg.denies(conventions.GenAIFamily(b.scope, span.Attributes()))
				var unknown int64
				if genAI {
					unknown += p.collectUnknown(b, span.Attributes(), family, false)
				}
				events := span.Events()
				for e := 0; e < events.Len(); e++ {
					ev := events.At(e)
					b.planted += removePlanted(ev.Attributes())
					b.collectAttrs(ev.Attributes())
					kind, contentEvent := conventions.ContentEvents[ev.Name()]
					if contentEvent {
						b.collectEvent(ev.Attributes(), kind)
					}
					if genAI {
						unknown += p.collectUnknown(b, ev.Attributes(), family, contentEvent)
					}
				}
				if unknown > 0 {
					span.Attributes().PutInt(conventions.UnknownKeys, unknown)
					b.countDropped(p.cfg)
				}
			}
		}
	}
	p.run(ctx, b)
	return td, nil
}

func (p *contentRef) processLogs(ctx context.Context, ld plog.Logs) (plog.Logs, error) {
	b := &batch{signal: signalLogs, unknown: map[string]int64{}, dropped: map[string]int64{}}
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		var res *resourceInfo
		for j := 0; j < rl.ScopeLogs().Len(); j++ {
			b.scope = rl.ScopeLogs().At(j).Scope().Name()
			lrs := rl.ScopeLogs().At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				if res == nil {
					res = p.resource(rl.Resource())
				}
				lr := lrs.At(k)
				b.planted += removePlanted(lr.Attributes())
				b.begin(lr.Attributes(), res)
				b.collectAttrs(lr.Attributes())
				name := conventions.RecordEventName(lr)
				kind, contentEvent := conventions.ContentEvents[name]
				if contentEvent {
					b.collectEvent(lr.Attributes(), kind)
				}
				family, genAI := conventions.GenAIFamily(b.scope, lr.Attributes())
				if !genAI && conventions.IsGenAIEvent(name) {
					family, genAI = conventions.GenAI.Name, true
				}
				family, genAI = p.cfg.denies(family, genAI)
				if genAI {
					if !contentEvent {
						kind = conventions.UnknownKind
					}
					if n := p.collectUnknown(b, lr.Attributes(), family, contentEvent); n > 0 {
						lr.Attributes().PutInt(conventions.UnknownKeys, n)
						b.countDropped(p.cfg)
					}
				}
				if (contentEvent || genAI) && lr.Body().Type() != pcommon.ValueTypeEmpty {
					b.add(&item{attrs: lr.Attributes(), body: lr.Body(), src: srcBody, kind: kind})
				}
			}
		}
	}
	p.run(ctx, b)
	return ld, nil
}

// run stores the batch's items (reading the telemetry concurrently, never
// writing it), then moves the content out and the references in. The
// references are written only after the store has returned, so each one
// names an object already durable.
func (p *contentRef) run(ctx context.Context, b *batch) {
	p.tel.countPlanted(ctx, b.signal, b.planted)
	p.tel.countUnknown(ctx, b.signal, b.unknown, b.dropped, b.droppedRecords)
	if len(b.items) == 0 {
		return
	}
	parallel.For(len(b.items), p.cfg.WriteConcurrency, func(i int) { p.measure(b.items[i]) })
	groups := p.groups(b.items)
	parallel.For(len(groups), p.cfg.WriteConcurrency, func(i int) { p.storeGroup(ctx, groups[i]) })
	for _, it := range b.items {
		it.apply()
	}
	t := p.tel.newTally()
	for _, rec := range b.records {
		t.record(rec.apply())
		for _, it := range rec.items {
			t.item(it.status, it.size)
		}
	}
	p.tel.flush(ctx, b.signal, t)
}

// maxGroupItems bounds the objects of one store batch.
const maxGroupItems = 256

// groups splits the items to store into store batches (group commits) of
// at most maxGroupItems and a quarter of the in-flight budget each, so
// that a few requests' batches fit in the budget at once.
func (p *contentRef) groups(items []*item) [][]*item {
	var out [][]*item
	var cur []*item
	var held int64
	for _, it := range items {
		if it.status != "" {
			continue
		}
		if len(cur) > 0 && (len(cur) == maxGroupItems || held+heldBytes(it) > p.cfg.MaxInflightBytes/4) {
			out, cur, held = append(out, cur), nil, 0
		}
		cur = append(cur, it)
		held += heldBytes(it)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// heldBytes is the memory an item takes while stored: its content as
// built, in canonical form, and in the canonicalizer's scratch for
// reordering.
func heldBytes(it *item) int64 { return 3 * it.size }

// content builds the item's content up to limit bytes; with limit 0 it
// only measures.
func (it *item) content(limit int64) ([]byte, int64, bool) {
	switch it.src {
	case srcBody:
		return valueContent(it.body, limit)
	case srcEventAttrs:
		return attrsContent(it.attrs, func(k string) bool { return !keptEventAttr(k) }, limit)
	case srcUnknown:
		return attrsContent(it.attrs, it.unknown, limit)
	}
	if it.exact {
		v, _ := it.attrs.Get(conventions.ContentKeys[it.key].Name)
		return valueContent(v, limit)
	}
	return attrsContent(it.attrs, func(k string) bool { return conventions.ContentIndex(k) == it.key }, limit)
}

// measure sizes an item and sets the status of one that is not to be
// stored.
func (p *contentRef) measure(it *item) {
	_, it.size, _ = it.content(0)
	switch {
	case !it.rec.res.capture:
		it.status = StatusNotCaptured
	case it.rec.res.tenantErr:
		it.status = StatusInvalidTenant
	case it.size > p.store.Limits().MaxObjectBytes:
		it.status = StatusOverLimit
	}
}

// storeGroup builds the content of a group of items and stores it as one
// batch; each item gets its own outcome.
func (p *contentRef) storeGroup(ctx context.Context, items []*item) {
	var need int64
	for _, it := range items {
		need += heldBytes(it)
	}
	held := p.budget.acquire(need)
	defer p.budget.release(held)
	objs := make([]contentstore.PutObject, 0, len(items))
	stored := make([]*item, 0, len(items))
	for _, it := range items {
		content, _, over := it.content(it.size)
		if over {
			it.status = StatusOverLimit
			continue
		}
		objs = append(objs, contentstore.PutObject{Tenant: it.rec.res.tenant, Kind: it.kind, Content: content})
		stored = append(stored, it)
	}
	for i, out := range p.store.PutBatch(ctx, objs) {
		p.outcome(stored[i], out)
	}
}

// outcome records what the store did with an item; an item that was not
// stored gets no reference (its content is removed all the same).
func (p *contentRef) outcome(it *item, out contentstore.PutOutcome) {
	err := out.Err
	switch {
	case err == nil:
		it.status, it.ref = StatusStored, out.Ref.String()
	case errors.Is(err, contentstore.ErrTooLarge):
		it.status = StatusOverLimit
	case errors.Is(err, contentstore.ErrQuotaExceeded):
		it.status = StatusOverQuota
	case errors.Is(err, contentstore.ErrInvalidTenant):
		it.status = StatusInvalidTenant
	default:
		it.status = StatusStoreUnavailable
		if !errors.Is(err, contentstore.ErrUnavailable) {
			p.warnLimited(err)
		}
	}
}

// warnLimited logs store errors other than plain unavailability (which the
// store logs itself) at most every 10 seconds. Store errors carry no
// content.
func (p *contentRef) warnLimited(err error) {
	now := time.Now().UnixNano()
	last := p.lastWarn.Load()
	if now-last < int64(10*time.Second) || !p.lastWarn.CompareAndSwap(last, now) {
		return
	}
	p.logger.Warn("content store write failed; content recorded as store_unavailable", zap.Error(err))
}

// apply removes the item's content and leaves its reference, or the reason
// it has none.
func (it *item) apply() {
	var name, refKey string
	switch it.src {
	case srcAttrs:
		name = conventions.ContentKeys[it.key].Name
		refKey = name + conventions.RefSuffix
		conventions.Lift(it.scope, it.attrs, name)
		it.attrs.RemoveIf(func(k string, _ pcommon.Value) bool { return conventions.ContentIndex(k) == it.key })
	case srcEventAttrs:
		name, refKey = "attributes", AttrAttributesRef
		it.attrs.RemoveIf(func(k string, _ pcommon.Value) bool { return !keptEventAttr(k) })
	case srcBody:
		name, refKey = "body", AttrBodyRef
		pcommon.NewValueEmpty().CopyTo(it.body)
	case srcUnknown:
		name, refKey = conventions.UnknownKind, conventions.UnknownRef
		it.attrs.RemoveIf(func(k string, _ pcommon.Value) bool { return it.unknown(k) })
	}
	if it.ref != "" {
		it.attrs.PutStr(refKey, it.ref)
	} else {
		it.attrs.PutStr(attrItemStatusPrefix+name, it.status)
	}
}

// apply writes the record's summary status and content bytes and returns
// the summary. Whatever status the record arrived with was removed as
// planted.
func (r *record) apply() string {
	sts := make([]string, 0, len(r.items))
	var total int64
	for _, it := range r.items {
		sts = append(sts, it.status)
		total += it.size
	}
	summary := summarize(sts)
	r.attrs.PutStr(AttrStatus, summary)
	r.attrs.PutInt(AttrBytes, total)
	return summary
}

// budget bounds the bytes of content held by writes in progress.
type budget struct {
	mu   sync.Mutex
	cond *sync.Cond
	free int64
	max  int64
}

func newBudget(max int64) *budget {
	b := &budget{free: max, max: max}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// acquire waits for n bytes (at most the whole budget) and returns what it
// took.
func (b *budget) acquire(n int64) int64 {
	n = min(n, b.max)
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.free < n {
		b.cond.Wait()
	}
	b.free -= n
	return n
}

func (b *budget) release(n int64) {
	b.mu.Lock()
	b.free += n
	b.mu.Unlock()
	b.cond.Broadcast()
}
