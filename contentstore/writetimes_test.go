package contentstore

import (
	"path/filepath"
	"testing"
	"time"
)

// TestStoredContentTakesAsLongAsAWrite: a Put of content already stored
// answers no sooner than a recent write did, so the time to answer does
// not tell whether a message was stored before. (A lower bound only: a
// loaded machine may make anything slower, never faster than a timer.)
func TestStoredContentTakesAsLongAsAWrite(t *testing.T) {
	st := mustOpen(t, dirConfig(filepath.Join(t.TempDir(), "content"), defaultLimits))
	w := &st.(*dirHandle).writes
	if _, err := st.Put(ctx, "acme", "prompt", []byte("first")); err != nil {
		t.Fatal(err)
	}
	if w.n != 1 || w.ring[0] <= 0 {
		t.Fatalf("the write was not timed: %d %v", w.n, w.ring[0])
	}
	// Recent writes were slow (a busy disk): a stored message waits as long.
	const slow = 80 * time.Millisecond
	for i := range w.ring {
		w.ring[i] = slow
	}
	w.n = len(w.ring)
	start := time.Now()
	res, err := st.Put(ctx, "acme", "prompt", []byte("first"))
	if err != nil || res.Created {
		t.Fatalf("%+v %v", res, err)
	}
	if took := time.Since(start); took < slow {
		t.Fatalf("stored content answered in %v, recent writes took %v", took, slow)
	}
}
