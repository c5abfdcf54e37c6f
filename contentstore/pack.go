package contentstore

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/docketlabs/docket/internal/groupcommit"
)

// The packed layout of the directory backend: the objects a sync round
// stores are appended to one segment file (<root>/.segments/<seq>.seg) with
// one write and one sync, instead of a file each (creating a file cost a
// third of the collector's CPU at 2,400 calls/s, nearly all of it inode
// allocation). Every change is a self-describing record: an object, a
// tombstone, a hold or a release. The index (key → where the object is)
// lives in memory and is rebuilt at open from the records' headers.
//
// Record: a 23-byte header, the key, the data.
//
//	0  crc32c of bytes 4..end of key (the header and the key)
//	4  kind
//	5  key length (uint16)
//	7  data length (uint32)
//	11 time stored (unix nanoseconds)
//	19 crc32c of the data
//
// The header's checksum covers the data's, so together they cover the
// whole record; they are apart so that a deleted object, whose data is
// erased (zeros), still frames the records after it.
//
// A segment is sealed (a seal record last) when it is full or the store
// closes, once everything in it is durable; at open only an unsealed
// segment — the one written when the process died — has its data checked:
// records of a round that never finished syncing are torn, counted,
// logged and cut off, so what a crash left half-written is never visible.
const (
	recObject byte = iota + 1
	recTombstone
	recHold
	recRelease
	recSeal
)

const (
	recHeaderLen = 23
	// maxKeyLen bounds a key: an escaped tenant, a kind, a digest.
	maxKeyLen = maxTenantSegment + 1 + maxKindLen + 1 + digestLen
	// segmentBytes is the size past which a round starts a new segment.
	segmentBytes = 64 << 20
	segmentsDir  = ".segments"
	segmentExt   = ".seg"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errBadRecord: bytes that are not a whole record (a torn or corrupt one).
var errBadRecord = errors.New("contentstore: not a valid segment record")

// record is one record's header.
type record struct {
	kind    byte
	key     string
	dataLen int64
	stamp   int64
	dataCRC uint32
}

func (r record) size() int64 { return recHeaderLen + int64(len(r.key)) + r.dataLen }

// appendRecord appends a record of kind with key and data to buf.
func appendRecord(buf []byte, kind byte, key string, stamp int64, data []byte) []byte {
	start := len(buf)
	buf = append(buf, make([]byte, recHeaderLen)...)
	h := buf[start:]
	h[4] = kind
	binary.LittleEndian.PutUint16(h[5:], uint16(len(key)))
	binary.LittleEndian.PutUint32(h[7:], uint32(len(data)))
	binary.LittleEndian.PutUint64(h[11:], uint64(stamp))
	binary.LittleEndian.PutUint32(h[19:], crc32.Checksum(data, castagnoli))
	buf = append(buf, key...)
	binary.LittleEndian.PutUint32(buf[start:], crc32.Checksum(buf[start+4:], castagnoli))
	return append(buf, data...)
}

// parseRecord parses the header and key at the start of b (the data need
// not be there).
func parseRecord(b []byte) (record, error) {
	if len(b) < recHeaderLen {
		return record{}, errBadRecord
	}
	r := record{
		kind:    b[4],
		dataLen: int64(binary.LittleEndian.Uint32(b[7:])),
		stamp:   int64(binary.LittleEndian.Uint64(b[11:])),
		dataCRC: binary.LittleEndian.Uint32(b[19:]),
	}
	keyLen := int(binary.LittleEndian.Uint16(b[5:]))
	switch {
	case r.kind < recObject || r.kind > recSeal, keyLen > maxKeyLen, r.dataLen > maxReadBytes,
		r.kind != recObject && r.dataLen != 0, (r.kind == recSeal) != (keyLen == 0),
		len(b) < recHeaderLen+keyLen:
		return record{}, errBadRecord
	}
	if crc32.Checksum(b[4:recHeaderLen+keyLen], castagnoli) != binary.LittleEndian.Uint32(b) {
		return record{}, errBadRecord
	}
	r.key = string(b[recHeaderLen : recHeaderLen+keyLen])
	return r, nil
}

// scanned is a record found in a segment, at off.
type scanned struct {
	record
	off int64
	// torn: its data does not match its checksum.
	torn bool
}

// eraseBytes is erase, a variable so that tests can make it fail.
var eraseBytes = erase

// writeSeal writes a seal record at off in f.
func writeSeal(f *os.File, off, stamp int64) error {
	_, err := f.WriteAt(appendRecord(nil, recSeal, "", stamp, nil), off)
	return err
}

// sealLen is the size of a seal record.
const sealLen = recHeaderLen

// endsSealed reports whether a segment of size bytes ends with a seal.
func endsSealed(r io.ReaderAt, size int64) bool {
	if size < sealLen {
		return false
	}
	b := make([]byte, sealLen)
	if _, err := r.ReadAt(b, size-sealLen); err != nil {
		return false
	}
	rec, err := parseRecord(b)
	return err == nil && rec.kind == recSeal
}

// scanSegment reads the records of a segment of size bytes: end is where
// the valid ones end (size unless something that is not a record
// follows). With verify every object's data is checked too.
func scanSegment(r io.ReaderAt, size int64, verify bool) (recs []scanned, end int64, err error) {
	// Records are read through a window of the file, so that a segment of
	// small objects costs a read per window rather than one per record.
	win := make([]byte, scanWindow)
	var winOff int64
	winLen := 0
	// at returns the window's bytes from off on, at least n of them unless
	// the segment ends first.
	at := func(off int64, n int) ([]byte, error) {
		n = int(min(int64(n), size-off))
		if off < winOff || off+int64(n) > winOff+int64(winLen) {
			if n > len(win) {
				win = make([]byte, n)
			}
			read, rerr := r.ReadAt(win[:min(int64(len(win)), size-off)], off)
			if rerr != nil && !errors.Is(rerr, io.EOF) {
				return nil, fmt.Errorf("contentstore: read segment: %w", rerr)
			}
			winOff, winLen = off, read
		}
		return win[off-winOff : winLen], nil
	}
	for end < size {
		b, err := at(end, recHeaderLen+maxKeyLen)
		if err != nil {
			return nil, 0, err
		}
		rec, perr := parseRecord(b)
		if perr != nil || end+rec.size() > size {
			break
		}
		s := scanned{record: rec, off: end}
		if verify && rec.kind == recObject {
			dataOff := end + recHeaderLen + int64(len(rec.key))
			data, err := at(dataOff, int(rec.dataLen))
			if err != nil {
				return nil, 0, err
			}
			if int64(len(data)) < rec.dataLen {
				break // the file is shorter than it was
			}
			s.torn = crc32.Checksum(data[:rec.dataLen], castagnoli) != rec.dataCRC
		}
		recs = append(recs, s)
		end += rec.size()
	}
	return recs, end, nil
}

// scanWindow is how much of a segment a scan reads at once.
const scanWindow = 1 << 20

// packEntry is where an object lives.
type packEntry struct {
	seg   uint64
	off   int64 // of its data
	size  int64
	stamp int64
	held  bool
}

// packStats is what an open found.
type packStats struct {
	segments, objects int
	// torn counts objects of an unfinished round left out; cut the bytes
	// after the last valid record of an unsealed segment.
	torn, cut int64
	// unerased counts deleted objects whose bytes an open could not erase
	// again.
	unerased int64
	// corrupt names sealed segments with bytes that are not records.
	corrupt []string
}

// pack is the packed layout: its segments and its index.
type pack struct {
	dir   string
	fsync bool
	// rounds serializes writes: a round appends the records of every job
	// waiting, syncs once and only then makes them visible in the index.
	rounds groupcommit.Committer[*packJob]
	// sync makes a round's files (and, when the round created a segment,
	// the segments directory) durable.
	sync func(files []*os.File, dirs []string) error

	mu    sync.RWMutex
	index map[string]packEntry
	segs  map[uint64]*os.File
	// active is the segment rounds append to, created by the first round
	// that needs one; nil after a failed round, whose tail may not be
	// durable: such a segment is left unsealed, to be checked at next open.
	active     *os.File
	activeSeq  uint64
	activeSize int64
	nextSeq    uint64
	closed     bool
	// lock is the segments directory, locked while open (lockDir).
	lock *os.File
}

// packRec is one record a job asks a round to write.
type packRec struct {
	kind byte
	key  string
	obj  *batchObject // recObject
}

type packJob struct {
	recs []packRec
	err  error
}

func segmentName(seq uint64) string { return fmt.Sprintf("%016x%s", seq, segmentExt) }

// openPack opens the segments under root, checking and sealing one a crash
// left unsealed.
func openPack(root string, fsync bool, sync func([]*os.File, []string) error, logger *zap.Logger) (*pack, error) {
	p := &pack{dir: filepath.Join(root, segmentsDir), fsync: fsync, sync: sync, index: map[string]packEntry{}, segs: map[uint64]*os.File{}}
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return nil, fmt.Errorf("contentstore: create directory: %w", err)
	}
	lock, err := os.Open(p.dir)
	if err != nil {
		return nil, fmt.Errorf("contentstore: open directory: %w", err)
	}
	if err = lockDir(lock); err != nil {
		_ = lock.Close()
		return nil, fmt.Errorf("contentstore: directory %s: %w", root, err)
	}
	p.lock = lock
	entries, err := lock.ReadDir(-1)
	if err != nil {
		p.close()
		return nil, fmt.Errorf("contentstore: read directory: %w", err)
	}
	var seqs []uint64
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), segmentExt)
		seq, perr := strconv.ParseUint(name, 16, 64)
		if !ok || perr != nil || segmentName(seq) != e.Name() {
			continue
		}
		seqs = append(seqs, seq)
	}
	slices.Sort(seqs)
	segs := make([]*loaded, 0, len(seqs))
	for _, seq := range seqs {
		var l *loaded
		if l, err = p.read(seq); err != nil {
			p.close()
			return nil, err
		}
		if l != nil {
			segs = append(segs, l)
		}
		p.nextSeq = seq + 1
	}
	st := cutTorn(segs)
	for _, l := range segs {
		for _, r := range l.recs {
			if p.apply(l.seq, r, !l.sealed) != nil {
				st.unerased++
				l.unerased = true
			}
		}
	}
	lastSealed := false
	for _, l := range segs {
		if lastSealed, err = p.seal(l, &st); err != nil {
			p.close()
			return nil, err
		}
	}
	if err := p.resume(lastSealed); err != nil {
		p.close()
		return nil, err
	}
	st.segments, st.objects = len(p.segs), len(p.index)
	if st.torn > 0 || st.cut > 0 {
		logger.Warn("content store: a crash left a write unfinished; objects whose write had not completed are left out (no reference to them was handed out)",
			zap.Int64("torn_objects", st.torn), zap.Int64("cut_bytes", st.cut))
	}
	if st.unerased > 0 {
		logger.Error("content store: deleted objects whose bytes could not be erased after a crash; they stay unreadable through the store, and are erased again at the next open",
			zap.Int64("objects", st.unerased))
	}
	if len(st.corrupt) > 0 {
		logger.Error("content store: segments damaged after they were written; the objects after the damage cannot be read",
			zap.Strings("segments", st.corrupt))
	}
	logger.Info("content store segments opened", zap.Int("segments", st.segments), zap.Int("objects", st.objects))
	return p, nil
}

// loaded is a segment as read at open.
type loaded struct {
	seq    uint64
	f      *os.File
	size   int64
	sealed bool
	recs   []scanned
	// end is where its last valid record ends; past it nothing is kept.
	end int64
	// unerased: a tombstone in it could not erase its object's bytes, so
	// it stays unsealed, for the next open to apply its tombstones again.
	unerased bool
}

// read opens and scans one segment. A segment not sealed was written when
// the process ended: data of its last round may be torn, so every object
// in it is checked. An empty one is removed.
func (p *pack) read(seq uint64) (*loaded, error) {
	path := filepath.Join(p.dir, segmentName(seq))
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("contentstore: open segment: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("contentstore: open segment: %w", err)
	}
	l := &loaded{seq: seq, f: f, size: fi.Size(), sealed: endsSealed(f, fi.Size())}
	if l.recs, l.end, err = scanSegment(f, l.size, !l.sealed); err != nil {
		_ = f.Close()
		return nil, err
	}
	if !l.sealed && l.end == 0 {
		_ = f.Close()
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("contentstore: remove empty segment: %w", err)
		}
		return nil, nil
	}
	p.segs[seq] = f
	return l, nil
}

// cutTorn finds, in each unsealed segment, the first object whose data
// does not match its checksum and that no later tombstone accounts for
// (a deleted object's data is erased): the round it belongs to never
// finished, so nothing after it was acknowledged, and the segment is cut
// there.
func cutTorn(segs []*loaded) packStats {
	var st packStats
	deleted := map[string]bool{}
	for i := len(segs) - 1; i >= 0; i-- {
		l := segs[i]
		cut := -1
		for j := len(l.recs) - 1; j >= 0; j-- {
			switch r := l.recs[j]; {
			case r.kind == recTombstone:
				deleted[r.key] = true
			case r.torn && !deleted[r.key]:
				cut = j
			}
		}
		if cut >= 0 {
			for _, r := range l.recs[cut:] {
				if r.kind == recObject && r.torn {
					st.torn++
				}
			}
			l.end, l.recs = l.recs[cut].off, l.recs[:cut]
		}
	}
	return st
}

// seal cuts what follows the last valid record of a segment a crash left
// unsealed and seals it, and reports whether the segment is sealed and
// intact now.
func (p *pack) seal(l *loaded, st *packStats) (bool, error) {
	if l.sealed {
		if l.end < l.size {
			// Damaged after it was sealed: keep the bytes for whoever
			// investigates; the objects past the damage are unreadable.
			st.corrupt = append(st.corrupt, segmentName(l.seq))
			return false, nil
		}
		return true, nil
	}
	st.cut += l.size - l.end
	if err := l.f.Truncate(l.end); err != nil {
		return false, fmt.Errorf("contentstore: cut torn segment tail: %w", err)
	}
	if !l.unerased {
		if err := writeSeal(l.f, l.end, time.Now().UnixNano()); err != nil {
			return false, fmt.Errorf("contentstore: seal segment: %w", err)
		}
	}
	if err := l.f.Sync(); err != nil {
		return false, fmt.Errorf("contentstore: seal segment: %w", err)
	}
	return !l.unerased, nil
}

// resume makes the last segment the active one again when it is sealed
// intact and has room, so that restarts do not leave a small segment each:
// its seal is cut off (if the process dies before its next round is
// durable, the next open finds it unsealed and checks it).
func (p *pack) resume(lastSealed bool) error {
	if !lastSealed {
		return nil
	}
	seq := p.nextSeq - 1
	f := p.segs[seq]
	if f == nil {
		return nil // the last segment was empty and is gone
	}
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("contentstore: open segment: %w", err)
	}
	if fi.Size() >= segmentBytes {
		return nil
	}
	if err := f.Truncate(fi.Size() - sealLen); err != nil {
		return fmt.Errorf("contentstore: open segment: %w", err)
	}
	p.active, p.activeSeq, p.activeSize = f, seq, fi.Size()-sealLen
	return nil
}

// apply updates the index with one record of segment seq read at open. A
// tombstone found in an unsealed segment erases its object again: the
// process may have died between writing the tombstone and erasing.
func (p *pack) apply(seq uint64, r scanned, unsealed bool) error {
	if r.kind == recObject && r.torn {
		return nil
	}
	if gone, ok := p.indexRecord(r.kind, r.key, seq, r.off, r.dataLen, r.stamp); ok && unsealed {
		return eraseBytes(p.segs[gone.seg], gone.off, gone.size)
	}
	return nil
}

// indexRecord applies a record, at recOff in segment seg, to the index: an
// object enters it, a tombstone takes its object out (returned, for the
// caller to erase), a hold or a release sets its object's flag.
func (p *pack) indexRecord(kind byte, key string, seg uint64, recOff, size, stamp int64) (gone packEntry, removed bool) {
	switch kind {
	case recObject:
		p.index[key] = packEntry{seg: seg, off: recOff + recHeaderLen + int64(len(key)), size: size, stamp: stamp}
	case recTombstone:
		if e, ok := p.index[key]; ok {
			delete(p.index, key)
			return e, true
		}
	case recHold, recRelease:
		if e, ok := p.index[key]; ok {
			e.held = kind == recHold
			p.index[key] = e
		}
	}
	return packEntry{}, false
}

func (p *pack) lookup(key string) (packEntry, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	e, ok := p.index[key]
	return e, ok
}

// do runs job in a round and returns its error.
func (p *pack) do(job *packJob) error {
	p.rounds.Do(job, p.round)
	return job.err
}

// round writes the records of jobs with one write, syncs once, then
// publishes them: objects enter the index, holds change, tombstoned
// objects leave it and their bytes are erased.
func (p *pack) round(jobs []*packJob) {
	stamp := time.Now().UnixNano()
	var buf []byte
	type placed struct {
		rec packRec
		off int64 // of the record in buf
	}
	var out []placed
	inRound := map[string]bool{}
	p.mu.RLock()
	for _, j := range jobs {
		for _, r := range j.recs {
			if r.kind == recObject {
				// An object stored already (or twice in this round) is not
				// written again.
				if int64(len(r.obj.data)) > maxReadBytes {
					r.obj.err = fmt.Errorf("contentstore: write object: %d bytes is more than a read may return", len(r.obj.data))
					continue
				}
				if _, ok := p.index[r.key]; ok || inRound[r.key] {
					continue
				}
				inRound[r.key] = true
			}
			out = append(out, placed{r, int64(len(buf))})
			var data []byte
			if r.obj != nil {
				data = r.obj.data
			}
			buf = appendRecord(buf, r.kind, r.key, stamp, data)
		}
	}
	p.mu.RUnlock()
	if len(out) == 0 {
		return
	}
	seq, base, err := p.write(buf, stamp)
	if err != nil {
		// Every object of the round fails, a copy of one written in it too.
		for _, j := range jobs {
			j.err = err
			for _, r := range j.recs {
				if r.obj != nil && inRound[r.key] {
					r.obj.err = err
				}
			}
		}
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var erased []packEntry
	for _, pl := range out {
		r := pl.rec
		var size int64
		if r.obj != nil {
			size = int64(len(r.obj.data))
			r.obj.created = true
		}
		if gone, ok := p.indexRecord(r.kind, r.key, seq, base+pl.off, size, stamp); ok {
			erased = append(erased, gone)
		}
	}
	for _, e := range erased {
		if err := eraseBytes(p.segs[e.seg], e.off, e.size); err != nil {
			for _, j := range jobs {
				j.err = cmp.Or(j.err, err)
			}
		}
	}
}

// write appends buf to the active segment, starting one when there is
// none or it is full (sealing the full one), and makes it durable. It
// returns the segment and the offset buf starts at.
func (p *pack) write(buf []byte, stamp int64) (uint64, int64, error) {
	if p.closed {
		return 0, 0, ErrClosed
	}
	var files []*os.File
	var dirs []string
	if p.active != nil && p.activeSize > 0 && p.activeSize+int64(len(buf)) > segmentBytes {
		if err := writeSeal(p.active, p.activeSize, stamp); err != nil {
			p.active = nil
			return 0, 0, fmt.Errorf("contentstore: seal segment: %w", err)
		}
		files = append(files, p.active)
		p.active = nil
	}
	if p.active == nil {
		seq := p.nextSeq
		f, err := os.OpenFile(filepath.Join(p.dir, segmentName(seq)), os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
		if err != nil {
			return 0, 0, fmt.Errorf("contentstore: create segment: %w", err)
		}
		p.nextSeq++
		p.mu.Lock()
		p.segs[seq] = f
		p.mu.Unlock()
		p.active, p.activeSeq, p.activeSize = f, seq, 0
		dirs = append(dirs, p.dir)
	}
	seq, off := p.activeSeq, p.activeSize
	_, err := p.active.WriteAt(buf, off)
	if err == nil && p.fsync {
		err = p.sync(append(files, p.active), dirs)
	}
	if err != nil {
		// The tail may be torn or not durable: no record goes after it.
		p.active = nil
		return 0, 0, fmt.Errorf("contentstore: write segment: %w", err)
	}
	p.activeSize += int64(len(buf))
	return seq, off, nil
}

// put writes the objects that are not stored yet.
func (p *pack) put(objs []*batchObject) {
	job := &packJob{}
	for _, o := range objs {
		job.recs = append(job.recs, packRec{kind: recObject, key: o.key, obj: o})
	}
	_ = p.do(job) // each object carries its own error
}

func (p *pack) get(e packEntry, key string) ([]byte, error) {
	p.mu.RLock()
	f := p.segs[e.seg]
	p.mu.RUnlock()
	if f == nil {
		return nil, ErrClosed
	}
	if e.size > maxReadBytes {
		return nil, fmt.Errorf("contentstore: read object: %d bytes is more than a read may return", e.size)
	}
	b := make([]byte, e.size)
	if _, err := f.ReadAt(b, e.off); err != nil {
		return nil, fmt.Errorf("contentstore: read object: %w", err)
	}
	// Deleted while being read: its bytes may already be erased.
	if now, ok := p.lookup(key); !ok || now.seg != e.seg || now.off != e.off {
		return nil, fmt.Errorf("contentstore: read object: %w", ErrNotFound)
	}
	return b, nil
}

func (p *pack) remove(e packEntry, key string) (int64, error) {
	if e.held {
		return 0, ErrLegalHold
	}
	if err := p.do(&packJob{recs: []packRec{{kind: recTombstone, key: key}}}); err != nil {
		return e.size, fmt.Errorf("contentstore: delete object: %w", err)
	}
	return e.size, nil
}

func (p *pack) setHold(e packEntry, key string, on bool) error {
	if e.held == on {
		return nil
	}
	kind := recRelease
	if on {
		kind = recHold
	}
	if err := p.do(&packJob{recs: []packRec{{kind: kind, key: key}}}); err != nil {
		return fmt.Errorf("contentstore: legal hold: %w", err)
	}
	return nil
}

// keyed is an object of the index.
type keyed struct {
	key string
	packEntry
}

// objects returns the objects whose keys start with prefix.
func (p *pack) objects(prefix string) []keyed {
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make([]keyed, 0, len(p.index))
	for k, e := range p.index {
		if strings.HasPrefix(k, prefix) {
			out = append(out, keyed{k, e})
		}
	}
	return out
}

// usage calls fn for every object; fn must not call into the store.
func (p *pack) usage(fn func(key string, size int64)) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	for k, e := range p.index {
		fn(k, e.size)
	}
}

// close seals the active segment, after the rounds under way.
func (p *pack) close() {
	p.rounds.Do(&packJob{}, func([]*packJob) {
		if p.active != nil && p.activeSize > 0 {
			if err := writeSeal(p.active, p.activeSize, time.Now().UnixNano()); err == nil && p.fsync {
				_ = p.active.Sync()
			}
		}
		p.active, p.closed = nil, true
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, f := range p.segs {
			_ = f.Close()
		}
		p.segs = map[uint64]*os.File{}
		_ = p.lock.Close()
	})
}

// zero overwrites n bytes at off in f with zeros.
func zero(f *os.File, off, n int64) error {
	z := make([]byte, min(n, 1<<20))
	for n > 0 {
		w, err := f.WriteAt(z[:min(n, int64(len(z)))], off)
		if err != nil {
			return err
		}
		off, n = off+int64(w), n-int64(w)
	}
	return nil
}
