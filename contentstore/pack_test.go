package contentstore

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
)

// segmentFiles returns the paths of a store's segments, in order.
func segmentFiles(t testing.TB, root string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(root, segmentsDir, "*"+segmentExt))
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

// rawSegments is every byte of a store's segments.
func rawSegments(t testing.TB, root string) []byte {
	t.Helper()
	var all []byte
	for _, p := range segmentFiles(t, root) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	return all
}

// tamperSegments replaces old by forged (as long) where a segment holds it.
func tamperSegments(t testing.TB, root string, old, forged []byte) {
	t.Helper()
	for _, p := range segmentFiles(t, root) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if i := bytes.Index(b, old); i >= 0 {
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt(forged, int64(i)); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatal("content not found in any segment")
}

// unseal makes the last segment look as a crash leaves it: its seal cut
// off, extra appended.
func unseal(t testing.TB, root string, extra []byte) string {
	t.Helper()
	segs := segmentFiles(t, root)
	last := segs[len(segs)-1]
	f, err := os.OpenFile(last, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if !endsSealed(f, fi.Size()) {
		t.Fatal("the last segment of a closed store is not sealed")
	}
	if err := f.Truncate(fi.Size() - sealLen); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(extra, fi.Size()-sealLen); err != nil {
		t.Fatal(err)
	}
	return last
}

// newDir is the path and configuration of a new directory store.
func newDir(t testing.TB) (string, Config) {
	root := filepath.Join(t.TempDir(), "content")
	return root, dirConfig(root, defaultLimits)
}

// putPrompt stores content as a prompt of tenant acme.
func putPrompt(t testing.TB, st Store, content []byte) PutResult {
	t.Helper()
	r, err := st.Put(ctx, "acme", "prompt", content)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func keyOf(t testing.TB, st Store, tenant, kind string, content []byte) string {
	t.Helper()
	res, _, err := st.(*dirHandle).address(PutObject{tenant, kind, content})
	if err != nil {
		t.Fatal(err)
	}
	return res.Ref.key()
}

// A batch's objects are appended to one segment; nothing is written as a
// file, and the store reads, lists and counts them after a reopen.
func TestPackedObjectsSurviveReopen(t *testing.T) {
	root, c := newDir(t)
	st := mustOpen(t, c)
	var objs []PutObject
	for i := range 50 {
		objs = append(objs, PutObject{"acme", "input.messages", batchMessage(i)})
	}
	out := st.PutBatch(ctx, objs)
	var used int64
	for _, o := range out {
		if o.Err != nil || !o.Created {
			t.Fatalf("%+v", o)
		}
		used += o.Size
	}
	if entries, _ := os.ReadDir(root); len(entries) != 2 {
		t.Fatalf("root holds %d entries, want only .tmp and %s", len(entries), segmentsDir)
	}
	if segs := segmentFiles(t, root); len(segs) != 1 {
		t.Fatalf("%d segments for one batch", len(segs))
	}
	st.Close()
	again := mustOpen(t, c)
	for i, o := range out {
		got, err := again.Get(ctx, o.Ref)
		if err != nil || !bytes.Equal(got, Canonicalize(batchMessage(i))) {
			t.Fatalf("object %d after reopen: %q %v", i, got, err)
		}
	}
	if u := again.Usage(); u.UsedBytes != used {
		t.Fatalf("used %d after reopen, want %d", u.UsedBytes, used)
	}
	if dup := again.PutBatch(ctx, objs[:1])[0]; dup.Err != nil || dup.Created {
		t.Fatalf("stored content written again: %+v", dup)
	}
}

// Delete erases the object's bytes from its segment (they are not merely
// forgotten), durably with a tombstone: after a reopen it is still gone,
// and storing it again works.
func TestPackedDeleteErasesBytes(t *testing.T) {
	root, c := newDir(t)
	st := mustOpen(t, c)
	canary := []byte("canary-4417 my card is 4111 1111 1111 1111")
	keep := []byte("keep-me-0932")
	r := putPrompt(t, st, canary)
	k := putPrompt(t, st, keep)
	if !bytes.Contains(rawSegments(t, root), canary) {
		t.Fatal("the canary is not in a segment to begin with")
	}
	if err := st.Delete(ctx, r.Ref); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(rawSegments(t, root), canary) {
		t.Fatal("deleted content still in the segment file")
	}
	if u := st.Usage(); u.UsedBytes != k.Size {
		t.Fatalf("used %d after delete, want %d", u.UsedBytes, k.Size)
	}
	st.Close()
	st = mustOpen(t, c)
	if _, err := st.Get(ctx, r.Ref); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted object after reopen: %v", err)
	}
	if got, err := st.Get(ctx, k.Ref); err != nil || !bytes.Equal(got, keep) {
		t.Fatalf("the object next to the deleted one: %q %v", got, err)
	}
	if u := st.Usage(); u.UsedBytes != k.Size {
		t.Fatalf("used %d after reopen, want %d", u.UsedBytes, k.Size)
	}
	again, err := st.Put(ctx, "acme", "prompt", canary)
	if err != nil || !again.Created || again.Ref != r.Ref {
		t.Fatalf("re-put after delete: %+v %v", again, err)
	}
	st.Close()
	st = mustOpen(t, c)
	if got, err := st.Get(ctx, r.Ref); err != nil || !bytes.Equal(got, canary) {
		t.Fatalf("re-put object after reopen: %q %v", got, err)
	}
}

// The process died after a delete's tombstone was durable but before its
// bytes were erased: the next open erases them.
func TestPackedDeleteErasedAfterCrash(t *testing.T) {
	root, c := newDir(t)
	st := mustOpen(t, c)
	canary := []byte("canary-8812 call me at +1 555 0100")
	r := putPrompt(t, st, canary)
	key := keyOf(t, st, "acme", "prompt", canary)
	st.Close()
	unseal(t, root, appendRecord(nil, recTombstone, key, time.Now().UnixNano(), nil))
	st = mustOpen(t, c)
	if _, err := st.Get(ctx, r.Ref); !errors.Is(err, ErrNotFound) {
		t.Fatalf("object with a tombstone: %v", err)
	}
	if bytes.Contains(rawSegments(t, root), canary) {
		t.Fatal("bytes of an object whose tombstone survived a crash were not erased at open")
	}
}

// An open that cannot erase the bytes of an object whose tombstone a crash
// left behind reports it and leaves the tombstone's segment unsealed, so
// that the next open erases them; sealed, it would never be looked at
// again and the deleted content would stay on disk.
func TestPackedEraseFailingAtOpenIsRetried(t *testing.T) {
	root, c := newDir(t)
	st := mustOpen(t, c)
	canary := []byte("canary-4471 my card ends 4242")
	r := putPrompt(t, st, canary)
	key := keyOf(t, st, "acme", "prompt", canary)
	st.Close()
	unseal(t, root, appendRecord(nil, recTombstone, key, time.Now().UnixNano(), nil))
	eraseBytes = func(*os.File, int64, int64) error { return errors.New("injected I/O error") }
	t.Cleanup(func() { eraseBytes = erase })
	st = mustOpen(t, c)
	if _, err := st.Get(ctx, r.Ref); !errors.Is(err, ErrNotFound) {
		t.Fatalf("object with a tombstone: %v", err)
	}
	putPrompt(t, st, []byte("written after the failed erase"))
	st.Close()
	if !bytes.Contains(rawSegments(t, root), canary) {
		t.Fatal("the injected failure did not keep the bytes: the test shows nothing")
	}
	eraseBytes = erase
	st = mustOpen(t, c)
	defer st.Close()
	if bytes.Contains(rawSegments(t, root), canary) {
		t.Fatal("bytes of a deleted object whose erase failed at open were never erased")
	}
	if _, err := st.Get(ctx, r.Ref); !errors.Is(err, ErrNotFound) {
		t.Fatalf("object with a tombstone, second open: %v", err)
	}
}

// A legal hold is a durable record: it blocks deletion across a reopen
// until released, and the release is durable too.
func TestPackedHoldSurvivesReopen(t *testing.T) {
	_, c := newDir(t)
	st := mustOpen(t, c)
	r := putPrompt(t, st, []byte("evidence"))
	if err := st.SetLegalHold(ctx, r.Ref, true); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st = mustOpen(t, c)
	if held, err := st.LegalHold(ctx, r.Ref); err != nil || !held {
		t.Fatalf("hold after reopen: %v %v", held, err)
	}
	if err := st.Delete(ctx, r.Ref); !errors.Is(err, ErrLegalHold) {
		t.Fatalf("delete of a held object after reopen: %v", err)
	}
	if err := st.SetLegalHold(ctx, r.Ref, false); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st = mustOpen(t, c)
	if held, err := st.LegalHold(ctx, r.Ref); err != nil || held {
		t.Fatalf("hold after release and reopen: %v %v", held, err)
	}
	if err := st.Delete(ctx, r.Ref); err != nil {
		t.Fatal(err)
	}
}

// A crash in the middle of a round leaves records that are partly written:
// an object whose data does not match its checksum, and a record cut
// short. They are left out (counted), the tail is cut off, everything
// before is read, and the content can be stored again.
func TestPackedTornTailIgnored(t *testing.T) {
	root, c := newDir(t)
	st := mustOpen(t, c)
	good := putPrompt(t, st, []byte("acknowledged"))
	tornContent, cutContent := []byte("torn in the middle"), []byte("cut short by the crash")
	tornKey, cutKey := keyOf(t, st, "acme", "prompt", tornContent), keyOf(t, st, "acme", "prompt", cutContent)
	st.Close()
	stamp := time.Now().UnixNano()
	torn := appendRecord(nil, recObject, tornKey, stamp, tornContent)
	copy(torn[len(torn)-8:], make([]byte, 8)) // a page never written
	cut := appendRecord(nil, recObject, cutKey, stamp, cutContent)
	cut = cut[:len(cut)-5]
	last := unseal(t, root, append(torn, cut...))
	before, _ := os.Stat(last)

	st = mustOpen(t, c)
	if got, err := st.Get(ctx, good.Ref); err != nil || string(got) != "acknowledged" {
		t.Fatalf("acknowledged object: %q %v", got, err)
	}
	n := 0
	if err := st.List(ctx, Selection{}, func(ObjectInfo) error { n++; return nil }); err != nil || n != 1 {
		t.Fatalf("%d objects listed (%v), want only the acknowledged one", n, err)
	}
	if u := st.Usage(); u.UsedBytes != good.Size {
		t.Fatalf("used %d, want %d: torn objects counted", u.UsedBytes, good.Size)
	}
	// Both records are cut off the file, not only left out.
	f, err := os.Open(last)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	recs, end, err := scanSegment(f, fi.Size(), true)
	if err != nil || end != fi.Size() || fi.Size() > before.Size()-int64(len(torn)+len(cut)) {
		t.Fatalf("segment of %d bytes, valid up to %d (%v), was %d with %d torn", fi.Size(), end, err, before.Size(), len(torn)+len(cut))
	}
	for _, r := range recs {
		if r.torn {
			t.Fatal("a torn record is still in the segment: a later open would not check it")
		}
	}
	for _, content := range [][]byte{tornContent, cutContent} {
		r, err := st.Put(ctx, "acme", "prompt", content)
		if err != nil || !r.Created {
			t.Fatalf("storing torn content again: %+v %v", r, err)
		}
		if got, err := st.Get(ctx, r.Ref); err != nil || !bytes.Equal(got, content) {
			t.Fatalf("stored again: %q %v", got, err)
		}
	}
}

// A store whose objects are files (written before segments) keeps working
// when opened with segments: its files are read, listed, counted, held
// and deleted, new objects go to segments, and content it holds as a file
// is not written again.
func TestMixedLayouts(t *testing.T) {
	root, c := newDir(t)
	old := openFiles(t, c)
	a := putPrompt(t, old, []byte("old and held"))
	b := putPrompt(t, old, []byte("old, to delete"))
	if err := old.SetLegalHold(ctx, a.Ref, true); err != nil {
		t.Fatal(err)
	}
	old.Close()

	st := mustOpen(t, c)
	n, err := st.Put(ctx, "acme", "prompt", []byte("new"))
	if err != nil || !n.Created {
		t.Fatal(n, err)
	}
	if dup, err := st.Put(ctx, "acme", "prompt", []byte("old and held")); err != nil || dup.Created {
		t.Fatalf("content stored as a file written again: %+v %v", dup, err)
	}
	if !bytes.Contains(rawSegments(t, root), []byte("new")) || bytes.Contains(rawSegments(t, root), []byte("old")) {
		t.Fatal("new objects must go to segments, and only they")
	}
	for _, r := range []PutResult{a, b, n} {
		if _, err := st.Get(ctx, r.Ref); err != nil {
			t.Fatalf("%s: %v", r.Ref, err)
		}
		if info, err := st.Stat(ctx, r.Ref); err != nil || info.Size != r.Size {
			t.Fatalf("stat %s: %+v %v", r.Ref, info, err)
		}
	}
	listed := 0
	if err := st.List(ctx, Selection{Tenant: "acme"}, func(ObjectInfo) error { listed++; return nil }); err != nil || listed != 3 {
		t.Fatalf("listed %d (%v), want 3 of both layouts", listed, err)
	}
	if u := st.Usage(); u.UsedBytes != a.Size+b.Size+n.Size {
		t.Fatalf("used %d, want %d", u.UsedBytes, a.Size+b.Size+n.Size)
	}
	if err := st.Delete(ctx, a.Ref); !errors.Is(err, ErrLegalHold) {
		t.Fatalf("delete of a held file: %v", err)
	}
	if err := st.Delete(ctx, b.Ref); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Get(ctx, b.Ref); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted file: %v", err)
	}
	if err := st.SetLegalHold(ctx, a.Ref, false); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, a.Ref); err != nil {
		t.Fatal(err)
	}
	if u := st.Usage(); u.UsedBytes != n.Size {
		t.Fatalf("used %d after deletes, want %d", u.UsedBytes, n.Size)
	}
}

// crashEnv names the directory a crash child writes to.
const crashEnv = "CONTENTSTORE_CRASH_CHILD_DIR"

func crashContent(run, i int) []byte {
	return fmt.Appendf(nil, `[{"role":"user","parts":[{"type":"text","content":"crash run %d object %d %s"}]}]`, run, i, strings.Repeat("x", i%500))
}

// TestCrashChild is the child of TestPackedCrash: it stores batches from
// several goroutines until killed, printing "<i> <ref>" for each object
// only once its batch has returned.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashEnv)
	if dir == "" {
		t.Skip("run by TestPackedCrash")
	}
	run, _ := strconv.Atoi(os.Getenv(crashEnv + "_RUN"))
	st, err := Open(ctx, dirConfig(dir, defaultLimits), nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for b := 0; ; b++ {
				objs := make([]PutObject, 10)
				first := (b*4 + g) * len(objs)
				for i := range objs {
					objs[i] = PutObject{"acme", "input.messages", crashContent(run, first+i)}
				}
				res := st.PutBatch(ctx, objs)
				mu.Lock()
				for i, o := range res {
					if o.Err == nil {
						fmt.Fprintf(out, "%d %s\n", first+i, o.Ref)
					}
				}
				_ = out.Flush()
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// A process killed while it writes: after a reopen every reference it
// handed out reads back, and every object the store lists reads back
// whole (nothing half-written is visible). Three crashes in a row on one
// directory, each leaving an unsealed segment behind.
func TestPackedCrash(t *testing.T) {
	root := filepath.Join(t.TempDir(), "content")
	acked := map[string][]byte{}
	for run := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashEnv+"="+root, fmt.Sprintf("%s_RUN=%d", crashEnv, run))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		n, want := 0, 300+run*97
		for sc.Scan() {
			i, ref, ok := strings.Cut(sc.Text(), " ")
			idx, err := strconv.Atoi(i)
			if !ok || err != nil || !strings.HasPrefix(ref, Scheme) {
				continue
			}
			acked[ref] = Canonicalize(crashContent(run, idx))
			if n++; n == want {
				_ = cmd.Process.Kill()
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		_ = cmd.Wait()
		if n < want {
			t.Fatalf("run %d: the child stopped after %d objects", run, n)
		}

		st, err := Open(ctx, dirConfig(root, defaultLimits), zaptest.NewLogger(t))
		if err != nil {
			t.Fatal(err)
		}
		for s, content := range acked {
			ref, err := ParseRef(s)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := st.Get(ctx, ref); err != nil || !bytes.Equal(got, content) {
				t.Fatalf("run %d: acknowledged %s: %d bytes, %v", run, s, len(got), err)
			}
		}
		listed, used := 0, int64(0)
		err = st.List(ctx, Selection{}, func(o ObjectInfo) error {
			listed++
			used += o.Size
			_, err := st.Get(ctx, o.Ref)
			return err
		})
		if err != nil {
			t.Fatalf("run %d: a listed object does not read back whole: %v", run, err)
		}
		if listed < len(acked) {
			t.Fatalf("run %d: %d objects listed, %d acknowledged", run, listed, len(acked))
		}
		if u := st.Usage(); u.UsedBytes != used {
			t.Fatalf("run %d: used %d, listed %d", run, u.UsedBytes, used)
		}
		t.Logf("run %d: %d acknowledged in all, %d listed", run, len(acked), listed)
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		unseal(t, root, nil) // as if the open itself had been killed
	}
}

// FuzzScanSegment: whatever bytes a segment holds, the scan never panics
// or reads past them, and every record it accepts is exactly the bytes
// that encoding it again gives.
func FuzzScanSegment(f *testing.F) {
	stamp := int64(1764633600e9)
	seg := appendRecord(nil, recObject, "acme/prompt/"+strings.Repeat("ab", 32), stamp, []byte("hello"))
	seg = appendRecord(seg, recHold, "acme/prompt/"+strings.Repeat("ab", 32), stamp, nil)
	seg = appendRecord(seg, recTombstone, "acme/prompt/"+strings.Repeat("cd", 32), stamp, nil)
	f.Add(seg)
	f.Add(appendRecord(seg, recSeal, "", stamp, nil))
	f.Add(seg[:len(seg)-3])
	f.Add(appendRecord(nil, recObject, "acme/prompt/"+strings.Repeat("ef", 32), stamp, []byte("cut short"))[:103])
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, end, err := scanSegment(bytes.NewReader(b), int64(len(b)), true)
		if err != nil {
			t.Fatal(err)
		}
		if end < 0 || end > int64(len(b)) {
			t.Fatalf("end %d of %d bytes", end, len(b))
		}
		off := int64(0)
		for _, r := range recs {
			if r.off != off {
				t.Fatalf("record at %d, want %d", r.off, off)
			}
			dataOff := r.off + recHeaderLen + int64(len(r.key))
			data := b[dataOff : dataOff+r.dataLen]
			again := appendRecord(nil, r.kind, r.key, r.stamp, data)
			if !r.torn && !bytes.Equal(again, b[r.off:r.off+r.size()]) {
				t.Fatalf("record at %d does not encode to its bytes", r.off)
			}
			off += r.size()
		}
		if off != end {
			t.Fatalf("records end at %d, scan says %d", off, end)
		}
	})
}

// A segment left unsealed (its process died) holds an object deleted
// later, whose tombstone is in the next segment and whose data is erased:
// it does not match its checksum, yet it is not torn, and the objects
// after it are kept.
func TestPackedErasedObjectIsNotTorn(t *testing.T) {
	root, c := newDir(t)
	st := mustOpen(t, c)
	gone := putPrompt(t, st, []byte("deleted later"))
	kept := putPrompt(t, st, []byte("acknowledged after it"))
	key := keyOf(t, st, "acme", "prompt", []byte("deleted later"))
	st.Close()
	tamperSegments(t, root, []byte("deleted later"), make([]byte, len("deleted later")))
	first := unseal(t, root, nil)
	next := filepath.Join(root, segmentsDir, segmentName(1))
	if filepath.Base(first) != segmentName(0) {
		t.Fatalf("first segment %s", first)
	}
	stamp := time.Now().UnixNano()
	if err := os.WriteFile(next, appendRecord(appendRecord(nil, recTombstone, key, stamp, nil), recSeal, "", stamp, nil), 0o600); err != nil {
		t.Fatal(err)
	}
	st = mustOpen(t, c)
	if got, err := st.Get(ctx, kept.Ref); err != nil || string(got) != "acknowledged after it" {
		t.Fatalf("object after an erased one: %q %v", got, err)
	}
	if _, err := st.Get(ctx, gone.Ref); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted object: %v", err)
	}
}

// A round whose write fails fails every object in it (none is counted or
// found), leaves its segment to be checked at the next open, and the next
// round writes to a new segment.
func TestPackedWriteFailure(t *testing.T) {
	root, c := newDir(t)
	st := mustOpen(t, c)
	before := putPrompt(t, st, []byte("before"))
	p := st.(*dirHandle).b.(*dirBackend).pack
	// The segment, open read-only: every write fails.
	ro, err := os.Open(filepath.Join(p.dir, segmentName(p.activeSeq)))
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	p.active = ro
	out := st.PutBatch(ctx, []PutObject{{"acme", "prompt", []byte("lost 1")}, {"acme", "prompt", []byte("lost 2")}})
	for i, o := range out {
		if o.Err == nil {
			t.Fatalf("object %d of a failed write: %+v", i, o)
		}
		if strings.Contains(o.Err.Error(), "lost") {
			t.Fatalf("the error carries content: %v", o.Err)
		}
	}
	if u := st.Usage(); u.UsedBytes != before.Size {
		t.Fatalf("used %d after a failed write, want %d", u.UsedBytes, before.Size)
	}
	after, err := st.Put(ctx, "acme", "prompt", []byte("lost 1"))
	if err != nil || !after.Created {
		t.Fatalf("the next write: %+v %v", after, err)
	}
	if n := len(segmentFiles(t, root)); n != 2 {
		t.Fatalf("%d segments, want a new one after the failed write", n)
	}
	st.Close()
	st = mustOpen(t, c)
	for _, r := range []PutResult{before, after} {
		if _, err := st.Get(ctx, r.Ref); err != nil {
			t.Fatal(err)
		}
	}
	if u := st.Usage(); u.UsedBytes != before.Size+after.Size {
		t.Fatalf("used %d after reopen, want %d", u.UsedBytes, before.Size+after.Size)
	}
}

// A second process cannot open a directory another one has open: it would
// append to the same segments and cut the tail of the one being written.
func TestDirectoryIsLockedAgainstOtherProcesses(t *testing.T) {
	root := filepath.Join(t.TempDir(), "content")
	st := mustOpen(t, dirConfig(root, defaultLimits))
	if _, err := st.Put(ctx, "acme", "prompt", []byte("mine")); err != nil {
		t.Fatal(err)
	}
	// Another open of the directory, not shared as within one process.
	if _, err := openDirLayout(root, true, false, zaptest.NewLogger(t)); err == nil || !strings.Contains(err.Error(), "another process") {
		t.Fatalf("second open of a directory in use: %v", err)
	}
	st.Close()
	b, err := openDirLayout(root, true, false, zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("open after the owner closed: %v", err)
	}
	if err := b.close(); err != nil {
		t.Fatal(err)
	}
}
