// Package contentstore keeps the content of LLM calls — prompts, responses,
// system instructions, tool definitions and tool call payloads — out of
// ordinary telemetry, in a store of its own: a local directory (the embedded
// default) or any S3 server.
//
// Objects are immutable and addressed by a keyed hash of their canonical
// form (see Canonicalize and Ref), so the same content stored twice is one
// object and a reference cannot be confirmed by hashing a guess. Every
// object is scoped by tenant. A per-object size limit and a total quota
// bound the store. Objects can be listed, deleted (all versions) and put on
// legal hold, which the backend itself enforces: a held object cannot be
// deleted until the hold is released (S3 Object Lock legal hold on S3).
package contentstore

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.uber.org/zap"

	"github.com/docketlabs/docket/internal/hostext"
)

// Store is the content store shared by the contentref processor, the UI and
// the tools. Implementations are safe for concurrent use. Errors never carry
// content; test them with errors.Is against the Err* values.
type Store interface {
	// Put stores content of a tenant under its address and returns the
	// reference. Storing content that is already there is cheap and returns
	// the same reference. Fails with ErrTooLarge, ErrQuotaExceeded,
	// ErrUnavailable, ErrInvalidTenant or ErrInvalidKind.
	Put(ctx context.Context, tenant, kind string, content []byte) (PutResult, error)
	// PutBatch stores several objects as one group commit: every object is
	// durable when it returns (on a directory store: appended to a segment
	// that is synced once for every batch of the round), never before, so a caller that
	// writes references only after it returns never hands out one to an
	// object a crash could lose. Each object has its own outcome, with the
	// errors of Put; one failing does not fail the others.
	PutBatch(ctx context.Context, objects []PutObject) []PutOutcome
	// Get returns the stored (canonical) content after checking that it
	// still matches its address (ErrIntegrity otherwise).
	Get(ctx context.Context, ref Ref) ([]byte, error)
	// Stat describes one object.
	Stat(ctx context.Context, ref Ref) (ObjectInfo, error)
	// Delete removes an object — on S3 every version of it. It fails with
	// ErrLegalHold while the object is held and ErrNotFound if it is gone.
	Delete(ctx context.Context, ref Ref) error
	// SetLegalHold puts an object on legal hold or releases it.
	SetLegalHold(ctx context.Context, ref Ref, on bool) error
	// LegalHold reports whether an object is on legal hold.
	LegalHold(ctx context.Context, ref Ref) (bool, error)
	// List calls fn for every object of the selection, in no fixed order.
	// An error from fn ends the listing and is returned.
	List(ctx context.Context, sel Selection, fn func(ObjectInfo) error) error
	// Limits returns the configured limits.
	Limits() Limits
	// Usage returns the bytes the store holds as this process counts them.
	Usage() Usage
	// Close releases the store.
	Close() error
}

// Provider is implemented by components that hand out a Store, such as the
// contentstore extension; processors find it among the host's extensions.
type Provider interface {
	ContentStore() Store
}

// Lookup finds the content store of extension id among the host's
// extensions.
func Lookup(host component.Host, id component.ID) (Store, error) {
	prov, err := hostext.Find[Provider](host, id, "content store")
	if err != nil {
		return nil, err
	}
	st := prov.ContentStore()
	if st == nil {
		return nil, fmt.Errorf("content store extension %s has not started", id)
	}
	return st, nil
}

// PutResult is the outcome of a successful Put.
type PutResult struct {
	Ref Ref
	// Size is the stored size in bytes: the canonical form.
	Size int64
	// Created is false when the object was already stored.
	Created bool
}

// PutObject is one object of a PutBatch.
type PutObject struct {
	Tenant, Kind string
	Content      []byte
}

// PutOutcome is what became of one object of a PutBatch: a result, or the
// error Put would have returned.
type PutOutcome struct {
	PutResult
	Err error
}

// ObjectInfo describes a stored object.
type ObjectInfo struct {
	Ref      Ref
	Size     int64
	StoredAt time.Time
}

// Selection chooses objects to list: all of them, one tenant's, or one
// tenant's of one kind.
type Selection struct {
	Tenant string
	Kind   string
}

// Limits bound the store.
type Limits struct {
	// MaxObjectBytes is the largest content accepted, as received and as
	// stored.
	MaxObjectBytes int64
	// MaxTotalBytes is the quota of the whole store.
	MaxTotalBytes int64
	// MaxTenantBytes is the quota of each tenant not in TenantQuotas.
	MaxTenantBytes int64
	TenantQuotas   map[string]int64
}

// TenantQuota is a tenant's quota.
func (l Limits) TenantQuota(tenant string) int64 {
	if q, ok := l.TenantQuotas[tenant]; ok {
		return q
	}
	return l.MaxTenantBytes
}

// Usage is what the store holds. Known is false until the store has been
// reachable once (an S3 store counts its bucket when it first connects).
//
// UsedBytes moves only when new content is stored, so whoever sees it
// change learns whether a message was already stored: it is for the
// store's own accounting, never for a metric. AcceptedBytes is what may be
// shown: the bytes of every Put that returned a reference since the store
// was opened, content already stored counted like new.
type Usage struct {
	UsedBytes     int64
	AcceptedBytes int64
	Known         bool
}

// maxReadBytes bounds a Get even if max_object_bytes was lowered after
// larger objects were stored.
const maxReadBytes = 1 << 30

// backend is raw, immutable object storage by key. Keys are
// <escaped tenant>/<kind>/<digest>.
type backend interface {
	// putBatch writes the objects that do not exist yet and makes all of
	// them durable, setting each one's created and err. An existing object
	// of a key is kept (created false).
	putBatch(ctx context.Context, objs []*batchObject)
	get(ctx context.Context, key string) ([]byte, error)
	stat(ctx context.Context, key string) (objectStat, error)
	// remove deletes every version of the object and returns the bytes
	// freed.
	remove(ctx context.Context, key string) (int64, error)
	setHold(ctx context.Context, key string, on bool) error
	hold(ctx context.Context, key string) (bool, error)
	// list calls fn for the current objects under a key prefix.
	list(ctx context.Context, prefix string, fn func(key string, st objectStat) error) error
	// usage calls fn for every object version held with its key (which
	// may not be one of ours) and size.
	usage(ctx context.Context, fn func(key string, size int64)) error
	close() error
}

// batchObject is one object of a backend's putBatch.
type batchObject struct {
	key  string
	data []byte
	// exists: the store found the object already there; it is not
	// written, but a directory store still syncs its directory, since
	// another batch may have linked it without having synced yet.
	exists bool

	created bool
	err     error
}

type objectStat struct {
	size     int64
	modified time.Time
}

// store adds addressing, canonicalization, limits and the quota to a
// backend.
type store struct {
	b      backend
	keyer  *keyer
	limits Limits
	logger *zap.Logger

	// Operations on one key are serialized so that a concurrent Put of the
	// same content is counted once and Delete cannot race SetLegalHold.
	locks [256]sync.Mutex
	seed  maphash.Seed
	// inflight holds the keys a batch is writing, each closed when that
	// write ends; another batch with the same content waits for it rather
	// than writing it again. The locks are not held while writing, so
	// batches never wait for each other's I/O otherwise.
	flightMu sync.Mutex
	inflight map[string]chan struct{}

	usageMu    sync.Mutex // held while the initial usage is counted
	mu         sync.Mutex
	used       int64
	tenantUsed map[string]int64
	accepted   int64
	known      bool
	closed     bool
}

func newStore(b backend, secret []byte, limits Limits, logger *zap.Logger) *store {
	return &store{b: b, keyer: newKeyer(secret), limits: limits, logger: logger, seed: maphash.MakeSeed(), tenantUsed: map[string]int64{}, inflight: map[string]chan struct{}{}}
}

func (s *store) lock(key string) *sync.Mutex {
	return &s.locks[maphash.String(s.seed, key)%uint64(len(s.locks))]
}

func (s *store) Put(ctx context.Context, tenant, kind string, content []byte) (PutResult, error) {
	out := s.PutBatch(ctx, []PutObject{{Tenant: tenant, Kind: kind, Content: content}})
	return out[0].PutResult, out[0].Err
}

// pendingPut is one distinct key of a PutBatch.
type pendingPut struct {
	obj      batchObject
	tenant   string
	res      PutResult
	reserved bool
	// done is closed when this batch's write of the key has ended; after
	// is another batch's, which was writing the key when this one looked.
	done, after chan struct{}
	err         error
}

func (s *store) PutBatch(ctx context.Context, objects []PutObject) []PutOutcome {
	out := make([]PutOutcome, len(objects))
	fail := func(err error) []PutOutcome {
		for i := range out {
			out[i].Err = err
		}
		return out
	}
	if err := s.check(); err != nil {
		return fail(err)
	}
	if err := s.countUsage(ctx); err != nil {
		return fail(err)
	}
	// The same content twice in one batch is one object: the later copies
	// share the first one's outcome.
	byKey := map[string]*pendingPut{}
	of := make([]*pendingPut, len(objects))
	var pending []*pendingPut
	for i, o := range objects {
		res, canonical, err := s.address(o)
		if err != nil {
			out[i].Err = err
			continue
		}
		key := res.Ref.key()
		if p, ok := byKey[key]; ok {
			of[i] = p
			continue
		}
		p := &pendingPut{obj: batchObject{key: key, data: canonical}, tenant: o.Tenant, res: res}
		byKey[key], of[i] = p, p
		pending = append(pending, p)
	}
	var write []*batchObject
	for _, p := range pending {
		if p.err = s.admit(ctx, p); p.err == nil && p.after == nil {
			write = append(write, &p.obj)
		}
	}
	if len(write) > 0 {
		s.b.putBatch(ctx, write)
	}
	for _, p := range pending {
		s.settle(p)
	}
	// Only now, with this batch's own writes ended, wait for the other
	// batches': two batches waiting for each other first would never end.
	for _, p := range pending {
		if p.after != nil && p.err == nil {
			p.err = s.follow(ctx, p)
		}
	}
	seen := map[*pendingPut]bool{}
	for i, p := range of {
		if p == nil {
			continue
		}
		out[i] = PutOutcome{PutResult: p.res, Err: p.err}
		if seen[p] {
			// A later copy is accepted like content already stored.
			out[i].Created = false
			if p.err == nil {
				s.accept(p.res.Size)
			}
		}
		seen[p] = true
	}
	return out
}

// address validates an object and computes its canonical form and
// reference.
func (s *store) address(o PutObject) (PutResult, []byte, error) {
	if err := ValidateTenant(o.Tenant); err != nil {
		return PutResult{}, nil, err
	}
	if err := ValidateKind(o.Kind); err != nil {
		return PutResult{}, nil, err
	}
	if int64(len(o.Content)) > s.limits.MaxObjectBytes {
		return PutResult{}, nil, ErrTooLarge
	}
	canonical := Canonicalize(o.Content)
	ref := Ref{Tenant: o.Tenant, Kind: o.Kind, Digest: s.keyer.digest(o.Tenant, o.Kind, canonical)}
	return PutResult{Ref: ref, Size: int64(len(canonical))}, canonical, nil
}

// admit asks the quota, looks for the object and reserves the bytes of a
// new one, unless another batch is writing it. The key's lock is held only
// for this, not for the write.
func (s *store) admit(ctx context.Context, p *pendingPut) error {
	l := s.lock(p.obj.key)
	l.Lock()
	defer l.Unlock()
	s.flightMu.Lock()
	p.after = s.inflight[p.obj.key]
	s.flightMu.Unlock()
	// The quota is asked before the store looks for the object: content
	// already stored is refused exactly when new content would be, so the
	// answer does not tell the two apart.
	if !s.fits(p.tenant, p.res.Size) {
		return ErrQuotaExceeded
	}
	if _, err := s.b.stat(ctx, p.obj.key); err == nil {
		p.obj.exists = true
		return nil
	} else if !errors.Is(err, ErrNotFound) {
		return err
	}
	if p.after != nil {
		return nil
	}
	if err := s.reserve(p.tenant, p.res.Size); err != nil {
		return err
	}
	p.reserved = true
	p.done = make(chan struct{})
	s.flightMu.Lock()
	s.inflight[p.obj.key] = p.done
	s.flightMu.Unlock()
	return nil
}

// follow waits for the batch that was writing a key when this one looked
// and takes its result: an object there, durable since that batch has
// ended.
func (s *store) follow(ctx context.Context, p *pendingPut) error {
	select {
	case <-p.after:
	case <-ctx.Done():
		return ctx.Err()
	}
	if _, err := s.b.stat(ctx, p.obj.key); err != nil {
		return fmt.Errorf("contentstore: a concurrent write of the object failed: %w", err)
	}
	s.accept(p.res.Size)
	return nil
}

// settle takes the backend's verdict: reserved bytes of an object that was
// not created (it failed, or it was there after all) are refunded.
func (s *store) settle(p *pendingPut) {
	if p.done != nil {
		s.flightMu.Lock()
		delete(s.inflight, p.obj.key)
		s.flightMu.Unlock()
		close(p.done)
	}
	if p.after != nil {
		return
	}
	if p.err == nil {
		p.err = p.obj.err
	}
	if p.reserved && (p.err != nil || !p.obj.created) {
		s.add(p.tenant, -p.res.Size)
	}
	if p.err == nil {
		if p.obj.created && !p.reserved {
			// It replaced a broken object that a crash left.
			s.add(p.tenant, p.res.Size)
		}
		s.accept(p.res.Size)
		p.res.Created = p.obj.created
	}
}

func (s *store) fits(tenant string, size int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fitsLocked(tenant, size)
}

func (s *store) fitsLocked(tenant string, size int64) bool {
	return s.used+size <= s.limits.MaxTotalBytes && s.tenantUsed[tenant]+size <= s.limits.TenantQuota(tenant)
}

// reserve counts size against the quotas before it is written.
func (s *store) reserve(tenant string, size int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.fitsLocked(tenant, size) {
		return ErrQuotaExceeded
	}
	s.used += size
	s.tenantUsed[tenant] += size
	return nil
}

func (s *store) add(tenant string, n int64) {
	s.mu.Lock()
	s.used += n
	if s.tenantUsed[tenant] += n; s.tenantUsed[tenant] <= 0 {
		delete(s.tenantUsed, tenant)
	}
	s.mu.Unlock()
}

func (s *store) accept(n int64) {
	s.mu.Lock()
	s.accepted += n
	s.mu.Unlock()
}

// countUsage learns how much the backend holds, once.
func (s *store) countUsage(ctx context.Context) error {
	s.usageMu.Lock()
	defer s.usageMu.Unlock()
	s.mu.Lock()
	known := s.known
	s.mu.Unlock()
	if known {
		return nil
	}
	var used int64
	tenants := map[string]int64{}
	err := s.b.usage(ctx, func(key string, size int64) {
		used += size
		// Objects that are not ours count against the store, no tenant.
		if ref, err := parseKey(key); err == nil {
			tenants[ref.Tenant] += size
		}
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.used += used
	for t, n := range tenants {
		s.tenantUsed[t] += n
	}
	s.known = true
	s.mu.Unlock()
	s.logger.Info("content store usage counted", zap.Int64("used_bytes", used), zap.Int64("max_total_bytes", s.limits.MaxTotalBytes))
	return nil
}

func (s *store) Get(ctx context.Context, ref Ref) ([]byte, error) {
	if err := s.checkRef(ref); err != nil {
		return nil, err
	}
	data, err := s.b.get(ctx, ref.key())
	if err != nil {
		return nil, err
	}
	if s.keyer.digest(ref.Tenant, ref.Kind, data) != ref.Digest {
		return nil, fmt.Errorf("%w: %s", ErrIntegrity, ref)
	}
	return data, nil
}

func (s *store) Stat(ctx context.Context, ref Ref) (ObjectInfo, error) {
	if err := s.checkRef(ref); err != nil {
		return ObjectInfo{}, err
	}
	st, err := s.b.stat(ctx, ref.key())
	if err != nil {
		return ObjectInfo{}, err
	}
	return ObjectInfo{Ref: ref, Size: st.size, StoredAt: st.modified}, nil
}

func (s *store) Delete(ctx context.Context, ref Ref) error {
	if err := s.checkRef(ref); err != nil {
		return err
	}
	key := ref.key()
	l := s.lock(key)
	l.Lock()
	defer l.Unlock()
	freed, err := s.b.remove(ctx, key)
	if freed > 0 {
		s.add(ref.Tenant, -freed)
	}
	return err
}

func (s *store) SetLegalHold(ctx context.Context, ref Ref, on bool) error {
	if err := s.checkRef(ref); err != nil {
		return err
	}
	key := ref.key()
	l := s.lock(key)
	l.Lock()
	defer l.Unlock()
	return s.b.setHold(ctx, key, on)
}

func (s *store) LegalHold(ctx context.Context, ref Ref) (bool, error) {
	if err := s.checkRef(ref); err != nil {
		return false, err
	}
	return s.b.hold(ctx, ref.key())
}

func (s *store) List(ctx context.Context, sel Selection, fn func(ObjectInfo) error) error {
	if err := s.check(); err != nil {
		return err
	}
	prefix := ""
	if sel.Tenant != "" {
		if err := ValidateTenant(sel.Tenant); err != nil {
			return err
		}
		prefix = escapeTenant(sel.Tenant) + "/"
		if sel.Kind != "" {
			if err := ValidateKind(sel.Kind); err != nil {
				return err
			}
			prefix += sel.Kind + "/"
		}
	} else if sel.Kind != "" {
		return errors.New("contentstore: list: a kind selection needs a tenant")
	}
	return s.b.list(ctx, prefix, func(key string, st objectStat) error {
		ref, err := parseKey(key)
		if err != nil {
			return nil // not one of ours
		}
		return fn(ObjectInfo{Ref: ref, Size: st.size, StoredAt: st.modified})
	})
}

func (s *store) Limits() Limits { return s.limits }

func (s *store) Usage() Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Usage{UsedBytes: s.used, AcceptedBytes: s.accepted, Known: s.known}
}

func (s *store) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return s.b.close()
}

func (s *store) check() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	return nil
}

func (s *store) checkRef(ref Ref) error {
	if err := s.check(); err != nil {
		return err
	}
	return ref.validate()
}
