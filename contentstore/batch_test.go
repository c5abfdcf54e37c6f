package contentstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func batchMessage(i int) []byte {
	return fmt.Appendf(nil, `[{"role":"user","parts":[{"type":"text","content":"batch message %d"}]}]`, i)
}

// A batch is stored object by object: the same content twice is one
// object, content already stored is not created again, bad objects fail
// alone, and legal hold binds objects a batch stored like any other.
func TestPutBatch(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Limits) (Store, Config)) {
		st, _ := open(Limits{MaxObjectBytes: 1 << 10, MaxTotalBytes: 1 << 20})
		pre, err := st.Put(ctx, "acme", "input.messages", batchMessage(0))
		if err != nil {
			t.Fatal(err)
		}
		reordered := []byte(`[ {"parts": [{"content": "batch message 1", "type": "text"}], "role": "user"} ]`)
		out := st.PutBatch(ctx, []PutObject{
			{"acme", "input.messages", batchMessage(0)},
			{"acme", "output.messages", batchMessage(1)},
			{"acme", "output.messages", reordered},
			{"globex", "input.messages", batchMessage(1)},
			{"acme", "input.messages", make([]byte, 2<<10)},
			{"", "input.messages", batchMessage(2)},
		})
		if len(out) != 6 {
			t.Fatalf("%d outcomes for 6 objects", len(out))
		}
		for i, want := range []struct {
			created bool
			err     error
		}{{false, nil}, {true, nil}, {false, nil}, {true, nil}, {false, ErrTooLarge}, {false, ErrInvalidTenant}} {
			if !errors.Is(out[i].Err, want.err) || out[i].Err == nil && out[i].Created != want.created {
				t.Errorf("object %d: created=%v err=%v; want created=%v err=%v", i, out[i].Created, out[i].Err, want.created, want.err)
			}
		}
		if out[0].Ref != pre.Ref || out[2].Ref != out[1].Ref || out[3].Ref == out[1].Ref {
			t.Fatalf("references: %v %v %v %v; want the stored one, one for the same message twice, another for another tenant", out[0].Ref, out[1].Ref, out[2].Ref, out[3].Ref)
		}
		for i := range 4 {
			if got, err := st.Get(ctx, out[i].Ref); err != nil || string(got) != string(Canonicalize(batchMessage(min(i, 1)))) {
				t.Errorf("object %d: %q %v", i, got, err)
			}
		}
		u := st.Usage()
		if want := pre.Size + out[1].Size + out[3].Size; u.UsedBytes != want {
			t.Errorf("used %d bytes, want %d: each object counted once", u.UsedBytes, want)
		}
		if want := 2*pre.Size + 3*out[1].Size; u.AcceptedBytes != want {
			t.Errorf("accepted %d bytes, want %d: every stored copy counted", u.AcceptedBytes, want)
		}

		held := out[1].Ref
		if err := st.SetLegalHold(ctx, held, true); err != nil {
			t.Fatal(err)
		}
		if err := st.Delete(ctx, held); !errors.Is(err, ErrLegalHold) {
			t.Fatalf("delete of a held object a batch stored: %v, want ErrLegalHold", err)
		}
		again := st.PutBatch(ctx, []PutObject{{"acme", "output.messages", batchMessage(1)}})
		if again[0].Err != nil || again[0].Created || again[0].Ref != held {
			t.Fatalf("held content stored again: %+v", again[0])
		}
		if on, err := st.LegalHold(ctx, held); err != nil || !on {
			t.Fatalf("hold after storing the content again: %v %v", on, err)
		}
		if err := st.SetLegalHold(ctx, held, false); err != nil {
			t.Fatal(err)
		}
		if err := st.Delete(ctx, held); err != nil {
			t.Fatal(err)
		}
		again = st.PutBatch(ctx, []PutObject{{"acme", "output.messages", batchMessage(1)}})
		if again[0].Err != nil || !again[0].Created {
			t.Fatalf("content stored again after deletion: %+v", again[0])
		}
	})
}

// Batches sharing content, at once: each object is created by exactly one
// of them, every reference handed out can be read, and the store holds one
// copy of each (one version on S3), as a store opened afresh counts.
func TestPutBatchConcurrentSameContent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Limits) (Store, Config)) {
		st, cfg := open(defaultLimits)
		const distinct, batches, per = 30, 8, 20
		outs := make([][]PutOutcome, batches)
		var wg sync.WaitGroup
		for b := range batches {
			wg.Go(func() {
				objs := make([]PutObject, per)
				for i := range objs {
					objs[i] = PutObject{"acme", "input.messages", batchMessage((b*7 + i) % distinct)}
				}
				outs[b] = st.PutBatch(ctx, objs)
			})
		}
		wg.Wait()
		created, sizes := 0, map[Ref]int64{}
		for _, out := range outs {
			for _, o := range out {
				if o.Err != nil {
					t.Fatal(o.Err)
				}
				if o.Created {
					created++
				}
				sizes[o.Ref] = o.Size
			}
		}
		var want int64
		for ref, size := range sizes {
			want += size
			if _, err := st.Get(ctx, ref); err != nil {
				t.Fatalf("%s: %v", ref, err)
			}
		}
		if created != len(sizes) || len(sizes) != distinct {
			t.Fatalf("%d creations of %d objects (%d distinct messages)", created, len(sizes), distinct)
		}
		if u := st.Usage(); u.UsedBytes != want {
			t.Fatalf("used %d bytes, want %d", u.UsedBytes, want)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		fresh := mustOpen(t, cfg)
		if _, err := fresh.Put(ctx, "acme", "input.messages", batchMessage(0)); err != nil {
			t.Fatal(err)
		}
		if u := fresh.Usage(); u.UsedBytes != want {
			t.Fatalf("a store opened afresh counts %d bytes, want %d: a copy was written twice", u.UsedBytes, want)
		}
	})
}

// One object of a batch cannot be written as a file (its tenant's
// directory is a file): it fails alone, uncounted, and the others are
// stored.
func TestPutBatchFailsPerObject(t *testing.T) {
	root := filepath.Join(t.TempDir(), "content")
	st := openFiles(t, dirConfig(root, defaultLimits))
	if err := os.WriteFile(filepath.Join(root, "blocked"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	out := st.PutBatch(ctx, []PutObject{
		{"acme", "input.messages", batchMessage(1)},
		{"blocked", "input.messages", batchMessage(2)},
		{"acme", "input.messages", batchMessage(3)},
	})
	if out[1].Err == nil {
		t.Fatal("object under an unwritable directory stored")
	}
	for _, i := range []int{0, 2} {
		if out[i].Err != nil || !out[i].Created {
			t.Fatalf("object %d: %+v", i, out[i])
		}
		if _, err := st.Get(ctx, out[i].Ref); err != nil {
			t.Fatal(err)
		}
	}
	if u := st.Usage(); u.UsedBytes != out[0].Size+out[2].Size {
		t.Fatalf("used %d bytes, want %d: the failed object counted", u.UsedBytes, out[0].Size+out[2].Size)
	}
	if tmp, _ := os.ReadDir(filepath.Join(root, ".tmp")); len(tmp) != 0 {
		t.Fatalf("%d temporary files left behind", len(tmp))
	}
}

// A crash between linking an object file and syncing it can leave it
// short or empty under its name; no reference to it was handed out, and
// storing the content again repairs it rather than trusting the name — in
// a store that writes files and in one upgraded to segments.
func TestPutBatchRepairsObjectLeftByACrash(t *testing.T) {
	root := filepath.Join(t.TempDir(), "content")
	c := dirConfig(root, defaultLimits)
	old := openFiles(t, c)
	first := old.PutBatch(ctx, []PutObject{{"acme", "input.messages", batchMessage(1)}})[0]
	if first.Err != nil {
		t.Fatal(first.Err)
	}
	old.Close()
	ref := first.Ref
	p := filepath.Join(root, "acme", "input.messages", ref.Digest[:2], ref.Digest)
	st := mustOpen(t, c)
	for _, leftover := range [][]byte{nil, Canonicalize(batchMessage(1))[:10], bytesOf('x', int(first.Size))} {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, leftover, 0o400); err != nil {
			t.Fatal(err)
		}
		again := st.PutBatch(ctx, []PutObject{{"acme", "input.messages", batchMessage(1)}})[0]
		if again.Err != nil || again.Ref != ref {
			t.Fatalf("leftover of %d bytes: %+v", len(leftover), again)
		}
		if got, err := st.Get(ctx, ref); err != nil || string(got) != string(Canonicalize(batchMessage(1))) {
			t.Fatalf("leftover of %d bytes not repaired: %q %v", len(leftover), got, err)
		}
	}
}

func bytesOf(c byte, n int) []byte { return []byte(strings.Repeat(string(c), n)) }
