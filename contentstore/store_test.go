package contentstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/docketlabs/docket/internal/s3test"
)

const testSecret = "test-secret-0123456789abcdef0123456789"

func dirConfig(path string, limits Limits) Config {
	c := NewDefaultConfig()
	c.Directory = configoptional.Some(DirConfig{Path: path, Fsync: true})
	c.Secret = testSecret
	c.MaxObjectBytes, c.MaxTotalBytes = limits.MaxObjectBytes, limits.MaxTotalBytes
	c.MaxTenantBytes, c.TenantQuotas = limits.MaxTenantBytes, limits.TenantQuotas
	return c
}

var bucketSeq atomic.Int64

func s3Config(srv *s3test.Server, bucket string, limits Limits) Config {
	c := NewDefaultConfig()
	s := S3Config{
		Endpoint: srv.Endpoint, Bucket: bucket, AccessKey: srv.AccessKey, SecretKey: configopaque.String(srv.SecretKey),
		Insecure: true, CreateBucket: true, ObjectLock: true, Timeout: defaultS3Timeout,
	}
	c.S3 = configoptional.Some(s)
	c.Secret = testSecret
	c.MaxObjectBytes, c.MaxTotalBytes = limits.MaxObjectBytes, limits.MaxTotalBytes
	c.MaxTenantBytes, c.TenantQuotas = limits.MaxTenantBytes, limits.TenantQuotas
	return c
}

func mustOpen(t *testing.T, c Config) Store {
	t.Helper()
	st, err := Open(context.Background(), c, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

var defaultLimits = Limits{MaxObjectBytes: DefaultMaxObjectBytes, MaxTotalBytes: DefaultMaxTotalBytes}

// backendCase opens a fresh, empty store of one backend.
type backendCase struct {
	name string
	open func(t *testing.T, limits Limits) (Store, Config)
}

// openFiles opens a directory store that writes each object as a file,
// as stores did before segments; opening its directory again (mustOpen)
// is the upgrade to segments.
func openFiles(t testing.TB, c Config) Store {
	t.Helper()
	logger := zap.NewNop()
	if tt, ok := t.(*testing.T); ok {
		logger = zaptest.NewLogger(tt)
	}
	b, err := openDirLayout(c.Directory.Get().Path, c.Directory.Get().Fsync, true, logger)
	if err != nil {
		t.Fatal(err)
	}
	st := newStore(b, []byte(c.Secret), c.limits(), logger)
	if err := st.countUsage(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// forEachBackend runs a test against the directory store (segments, and
// files as written before segments) and the S3 store on a real S3 server.
func forEachBackend(t *testing.T, test func(t *testing.T, open func(Limits) (Store, Config))) {
	var srv *s3test.Server
	cases := []backendCase{
		{"directory", func(t *testing.T, limits Limits) (Store, Config) {
			c := dirConfig(filepath.Join(t.TempDir(), "content"), limits)
			return mustOpen(t, c), c
		}},
		{"directory-files", func(t *testing.T, limits Limits) (Store, Config) {
			c := dirConfig(filepath.Join(t.TempDir(), "content"), limits)
			return openFiles(t, c), c
		}},
		{"s3", func(t *testing.T, limits Limits) (Store, Config) {
			c := s3Config(srv, fmt.Sprintf("docket-test-%d", bucketSeq.Add(1)), limits)
			return mustOpen(t, c), c
		}},
	}
	for _, bc := range cases {
		t.Run(bc.name, func(t *testing.T) {
			if bc.name == "s3" && srv == nil {
				srv = s3test.Start(t)
			}
			test(t, func(l Limits) (Store, Config) { return bc.open(t, l) })
		})
	}
}

var ctx = context.Background()

func TestPutGetDeduplicates(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Limits) (Store, Config)) {
		st, _ := open(defaultLimits)
		first := []byte(`[{"role":"user","parts":[{"type":"text","content":"My email is canary@example.test"}]}]`)
		again := []byte("[ {\"parts\": [ {\"content\": \"My email is canary@example.test\", \"type\": \"text\"} ], \"role\": \"user\"} ]\n")
		r1, err := st.Put(ctx, "acme", "input.messages", first)
		if err != nil || !r1.Created {
			t.Fatalf("first put: %+v %v", r1, err)
		}
		r2, err := st.Put(ctx, "acme", "input.messages", again)
		if err != nil || r2.Created || r2.Ref != r1.Ref {
			t.Fatalf("second put of the same message: %+v %v; want the existing %s", r2, err, r1.Ref)
		}
		got, err := st.Get(ctx, r1.Ref)
		if err != nil || !bytes.Equal(got, Canonicalize(first)) {
			t.Fatalf("get: %q %v", got, err)
		}
		if u := st.Usage(); !u.Known || u.UsedBytes != r1.Size || r2.Size != r1.Size {
			t.Fatalf("usage %+v, stored size %d: want the canonical form counted once", u, r1.Size)
		}
		n := 0
		if err := st.List(ctx, Selection{}, func(ObjectInfo) error { n++; return nil }); err != nil || n != 1 {
			t.Fatalf("list: %d objects, %v; want 1", n, err)
		}
		// Plain text is stored byte for byte.
		text := []byte("  yes, call +82-10-5550-0101  \n")
		rt, err := st.Put(ctx, "acme", "prompt", text)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := st.Get(ctx, rt.Ref); !bytes.Equal(got, text) {
			t.Fatalf("text changed: %q", got)
		}
	})
}

func TestAddressIsKeyedAndTenantScoped(t *testing.T) {
	dir := t.TempDir()
	st := mustOpen(t, dirConfig(filepath.Join(dir, "a"), defaultLimits))
	guess := []byte("yes")
	r, err := st.Put(ctx, "acme", "output.messages", guess)
	if err != nil {
		t.Fatal(err)
	}
	plain := sha256.Sum256(guess)
	if r.Ref.Digest == hex.EncodeToString(plain[:]) || strings.Contains(r.Ref.String(), "yes") {
		t.Fatalf("reference %s can be confirmed by hashing the guess", r.Ref)
	}
	other, err := st.Put(ctx, "globex", "output.messages", guess)
	if err != nil || other.Ref.Digest == r.Ref.Digest {
		t.Fatal("two tenants' identical content share a digest")
	}
	kind, err := st.Put(ctx, "acme", "input.messages", guess)
	if err != nil || kind.Ref.Digest == r.Ref.Digest {
		t.Fatal("the kind is not part of the address")
	}
	c := dirConfig(filepath.Join(dir, "b"), defaultLimits)
	c.Secret = configopaque.String(strings.Repeat("z", MinSecretLen))
	other2, err := mustOpen(t, c).Put(ctx, "acme", "output.messages", guess)
	if err != nil || other2.Ref.Digest == r.Ref.Digest {
		t.Fatal("another deployment secret gives the same digest")
	}
	// A reference of one tenant does not open another tenant's object.
	forged := r.Ref
	forged.Tenant = "globex"
	if _, err := st.Get(ctx, forged); !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrIntegrity) {
		t.Fatalf("forged tenant: %v", err)
	}
}

func TestLimitsAndQuota(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Limits) (Store, Config)) {
		st, _ := open(Limits{MaxObjectBytes: 64, MaxTotalBytes: 100, MaxTenantBytes: 100})
		if _, err := st.Put(ctx, "acme", "prompt", bytes.Repeat([]byte("x"), 65)); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("over max_object_bytes: %v", err)
		}
		a, err := st.Put(ctx, "acme", "prompt", bytes.Repeat([]byte("a"), 60))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Put(ctx, "acme", "prompt", bytes.Repeat([]byte("b"), 60)); !errors.Is(err, ErrQuotaExceeded) {
			t.Fatalf("over max_total_bytes: %v", err)
		}
		if _, err := st.Put(ctx, "acme", "prompt", bytes.Repeat([]byte("a"), 60)); !errors.Is(err, ErrQuotaExceeded) {
			t.Fatalf("content already stored is refused where new content would be: %v", err)
		}
		n := 0
		_ = st.List(ctx, Selection{}, func(ObjectInfo) error { n++; return nil })
		if n != 1 {
			t.Fatalf("%d objects stored, want only the one within limits", n)
		}
		if err := st.Delete(ctx, a.Ref); err != nil {
			t.Fatal(err)
		}
		if u := st.Usage(); u.UsedBytes != 0 {
			t.Fatalf("usage after delete: %+v", u)
		}
		if _, err := st.Put(ctx, "acme", "prompt", bytes.Repeat([]byte("b"), 60)); err != nil {
			t.Fatalf("after delete the quota has room: %v", err)
		}
	})
}

// TestTenantQuotas: a tenant that fills its quota leaves the rest of the
// store to the others; quotas are per tenant with a default, and survive a
// restart (usage is recounted per tenant).
func TestTenantQuotas(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Limits) (Store, Config)) {
		st, c := open(Limits{MaxObjectBytes: 64, MaxTotalBytes: 1000, MaxTenantBytes: 100, TenantQuotas: map[string]int64{"big": 300}})
		put := func(st Store, tenant string, i int) error {
			_, err := st.Put(ctx, tenant, "prompt", fmt.Appendf(nil, "%060d", i))
			return err
		}
		for i := range 5 {
			if err := put(st, "noisy", i); (i == 0) != (err == nil) || (i > 0 && !errors.Is(err, ErrQuotaExceeded)) {
				t.Fatalf("noisy put %d: %v", i, err)
			}
		}
		for i := range 6 {
			if err := put(st, "big", i); (i < 5) != (err == nil) {
				t.Fatalf("big put %d (quota 300): %v", i, err)
			}
		}
		if err := put(st, "quiet", 0); err != nil {
			t.Fatalf("another tenant over its quota took this one's: %v", err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		again := mustOpen(t, c)
		if err := put(again, "noisy", 9); !errors.Is(err, ErrQuotaExceeded) {
			t.Fatalf("after a restart the tenant's usage was forgotten: %v", err)
		}
		if err := put(again, "quiet", 9); !errors.Is(err, ErrQuotaExceeded) { // 60 of 100 used
			t.Fatalf("after a restart the tenant's usage was forgotten: %v", err)
		}
		if err := put(again, "fresh", 9); err != nil {
			t.Fatalf("a new tenant gets the default quota: %v", err)
		}
	})
}

// TestDefaultTenantQuota: unset, a tenant may fill half the store.
func TestDefaultTenantQuota(t *testing.T) {
	c := dirConfig(filepath.Join(t.TempDir(), "content"), Limits{MaxObjectBytes: 64, MaxTotalBytes: 200})
	st := mustOpen(t, c)
	if got := st.Limits().TenantQuota("anyone"); got != 100 {
		t.Fatalf("default tenant quota %d, want half of 200", got)
	}
	for _, bad := range []Config{
		func() Config { c := c; c.MaxTenantBytes = 201; return c }(),
		func() Config { c := c; c.TenantQuotas = map[string]int64{"acme": 0}; return c }(),
		func() Config { c := c; c.TenantQuotas = map[string]int64{"tab\tin": 10}; return c }(),
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("accepted %+v", bad)
		}
	}
}

func TestDeleteAndLegalHold(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Limits) (Store, Config)) {
		st, _ := open(defaultLimits)
		r, err := st.Put(ctx, "acme", "input.messages", []byte(`[{"content":"preserve me"}]`))
		if err != nil {
			t.Fatal(err)
		}
		if held, err := st.LegalHold(ctx, r.Ref); err != nil || held {
			t.Fatalf("new object held=%v, %v", held, err)
		}
		if err := st.SetLegalHold(ctx, r.Ref, true); err != nil {
			t.Fatal(err)
		}
		if held, err := st.LegalHold(ctx, r.Ref); err != nil || !held {
			t.Fatalf("after hold: held=%v, %v", held, err)
		}
		if err := st.Delete(ctx, r.Ref); !errors.Is(err, ErrLegalHold) {
			t.Fatalf("delete of a held object: %v, want ErrLegalHold", err)
		}
		if _, err := st.Get(ctx, r.Ref); err != nil {
			t.Fatalf("held object unreadable after refused delete: %v", err)
		}
		if err := st.SetLegalHold(ctx, r.Ref, false); err != nil {
			t.Fatal(err)
		}
		if err := st.Delete(ctx, r.Ref); err != nil {
			t.Fatalf("delete after release: %v", err)
		}
		if _, err := st.Get(ctx, r.Ref); !errors.Is(err, ErrNotFound) {
			t.Fatalf("get after delete: %v", err)
		}
		if _, err := st.Stat(ctx, r.Ref); !errors.Is(err, ErrNotFound) {
			t.Fatalf("stat after delete: %v", err)
		}
		if err := st.Delete(ctx, r.Ref); !errors.Is(err, ErrNotFound) {
			t.Fatalf("second delete: %v", err)
		}
		if err := st.SetLegalHold(ctx, r.Ref, true); !errors.Is(err, ErrNotFound) {
			t.Fatalf("hold of a deleted object: %v", err)
		}
		n := 0
		_ = st.List(ctx, Selection{}, func(ObjectInfo) error { n++; return nil })
		if n != 0 {
			t.Fatalf("deleted object still listed")
		}
		// The same content can be stored again after deletion.
		if r2, err := st.Put(ctx, "acme", "input.messages", []byte(`[{"content":"preserve me"}]`)); err != nil || !r2.Created || r2.Ref != r.Ref {
			t.Fatalf("re-put after delete: %+v %v", r2, err)
		}
	})
}

func TestList(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Limits) (Store, Config)) {
		st, _ := open(defaultLimits)
		want := map[Ref]int64{}
		for i, tk := range []struct{ tenant, kind string }{
			{"acme", "input.messages"}, {"acme", "input.messages"}, {"acme", "output.messages"},
			{"globex", "input.messages"}, {"고객사", "prompt"},
		} {
			content := fmt.Appendf(nil, "content %d", i)
			r, err := st.Put(ctx, tk.tenant, tk.kind, content)
			if err != nil {
				t.Fatal(err)
			}
			want[r.Ref] = int64(len(content))
		}
		count := func(sel Selection) int {
			n := 0
			err := st.List(ctx, sel, func(o ObjectInfo) error {
				if want[o.Ref] != o.Size || o.StoredAt.IsZero() {
					t.Errorf("listed %+v, unknown or wrong size", o)
				}
				n++
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		if n := count(Selection{}); n != 5 {
			t.Fatalf("all: %d", n)
		}
		if n := count(Selection{Tenant: "acme"}); n != 3 {
			t.Fatalf("acme: %d", n)
		}
		if n := count(Selection{Tenant: "acme", Kind: "input.messages"}); n != 2 {
			t.Fatalf("acme input: %d", n)
		}
		if n := count(Selection{Tenant: "고객사"}); n != 1 {
			t.Fatalf("non-ASCII tenant: %d", n)
		}
		if n := count(Selection{Tenant: "nobody"}); n != 0 {
			t.Fatalf("unknown tenant: %d", n)
		}
		stop := errors.New("stop")
		if err := st.List(ctx, Selection{}, func(ObjectInfo) error { return stop }); !errors.Is(err, stop) {
			t.Fatalf("callback error not returned: %v", err)
		}
	})
}

func TestUsageSurvivesReopen(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Limits) (Store, Config)) {
		st, cfg := open(defaultLimits)
		var total int64
		for i := range 5 {
			r, err := st.Put(ctx, "acme", "prompt", bytes.Repeat([]byte{byte('a' + i)}, 100*(i+1)))
			if err != nil {
				t.Fatal(err)
			}
			total += r.Size
		}
		st.Close()
		again := mustOpen(t, cfg)
		if _, err := again.Put(ctx, "acme", "prompt", bytes.Repeat([]byte{'a'}, 100)); err != nil {
			t.Fatal(err)
		}
		if u := again.Usage(); !u.Known || u.UsedBytes != total {
			t.Fatalf("usage after reopen %+v, want %d", u, total)
		}
	})
}

func TestTamperedObjectIsDetected(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Limits) (Store, Config)) {
		st, cfg := open(defaultLimits)
		r, err := st.Put(ctx, "acme", "output.messages", []byte("the model said no."))
		if err != nil {
			t.Fatal(err)
		}
		forged := []byte("the model said yes")
		root := cfg.Directory.Get()
		p := ""
		if root != nil {
			p = filepath.Join(root.Path, "acme", "output.messages", r.Ref.Digest[:2], r.Ref.Digest)
		}
		if _, err := os.Stat(p); root != nil && err != nil {
			// In a segment: the same number of bytes, changed in place.
			tamperSegments(t, root.Path, []byte("the model said no."), forged)
		} else if s3 := cfg.S3.Get(); s3 != nil {
			client, err := minio.New(s3.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(s3.AccessKey, string(s3.SecretKey), "")})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := client.PutObject(ctx, s3.Bucket, r.Ref.key(), bytes.NewReader(forged), int64(len(forged)), minio.PutObjectOptions{}); err != nil {
				t.Fatal(err)
			}
		} else {
			p := filepath.Join(cfg.Directory.Get().Path, "acme", "output.messages", r.Ref.Digest[:2], r.Ref.Digest)
			if err := os.Chmod(p, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, forged, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.Get(ctx, r.Ref); !errors.Is(err, ErrIntegrity) {
			t.Fatalf("tampered object: %v, want ErrIntegrity", err)
		}
	})
}

func TestLargeContent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Limits) (Store, Config)) {
		st, _ := open(defaultLimits)
		big := []byte(`[{"role":"user","parts":[{"type":"text","content":"` + strings.Repeat("0123456789", 1<<20) + `"}]}]`)
		r, err := st.Put(ctx, "acme", "input.messages", big)
		if err != nil {
			t.Fatal(err)
		}
		got, err := st.Get(ctx, r.Ref)
		if err != nil || !bytes.Equal(got, Canonicalize(big)) || r.Size != int64(len(big)) {
			t.Fatalf("10 MB round trip: %d bytes, %v", len(got), err)
		}
		over := Limits{MaxObjectBytes: 1 << 20, MaxTotalBytes: DefaultMaxTotalBytes}
		small, _ := open(over)
		if _, err := small.Put(ctx, "acme", "input.messages", big); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("10 MB over a 1 MiB limit: %v", err)
		}
	})
}

func TestInvalidInput(t *testing.T) {
	st := mustOpen(t, dirConfig(filepath.Join(t.TempDir(), "c"), defaultLimits))
	if _, err := st.Put(ctx, "", "prompt", []byte("x")); !errors.Is(err, ErrInvalidTenant) {
		t.Fatalf("empty tenant: %v", err)
	}
	if _, err := st.Put(ctx, "bad\xfftenant", "prompt", []byte("x")); !errors.Is(err, ErrInvalidTenant) {
		t.Fatalf("invalid UTF-8 tenant: %v", err)
	}
	if _, err := st.Put(ctx, "acme", "../etc", []byte("x")); !errors.Is(err, ErrInvalidKind) {
		t.Fatalf("path in kind: %v", err)
	}
	if _, err := st.Get(ctx, Ref{Tenant: "acme", Kind: "prompt", Digest: "../../x"}); !errors.Is(err, ErrInvalidRef) {
		t.Fatalf("path in digest: %v", err)
	}
	if err := st.List(ctx, Selection{Kind: "prompt"}, func(ObjectInfo) error { return nil }); err == nil {
		t.Fatal("kind without tenant accepted")
	}
	// NUL bytes and invalid UTF-8 in content are stored as they are.
	odd := []byte("nul\x00 and \xff\xfe")
	r, err := st.Put(ctx, "acme", "prompt", odd)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := st.Get(ctx, r.Ref); err != nil || !bytes.Equal(got, odd) {
		t.Fatalf("odd bytes: %q %v", got, err)
	}
	st.Close()
	if _, err := st.Put(ctx, "acme", "prompt", []byte("x")); !errors.Is(err, ErrClosed) {
		t.Fatalf("put after close: %v", err)
	}
}

func TestDirectoryIsSharedWithinAProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "content")
	a := mustOpen(t, dirConfig(path, defaultLimits))
	b := mustOpen(t, dirConfig(path, defaultLimits))
	if _, err := a.Put(ctx, "acme", "prompt", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if u := b.Usage(); u.UsedBytes != 5 {
		t.Fatalf("second handle does not share the quota: %+v", u)
	}
	other := dirConfig(path, Limits{MaxObjectBytes: 1, MaxTotalBytes: 1})
	if _, err := Open(ctx, other, nil); err == nil {
		t.Fatal("same directory opened with other limits")
	}
	a.Close()
	if _, err := b.Put(ctx, "acme", "prompt", []byte("still open")); err != nil {
		t.Fatalf("closing one handle closed the other: %v", err)
	}
}
