package contentstore

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/docketlabs/docket/internal/s3test"
)

func rawClient(t *testing.T, srv *s3test.Server) *minio.Client {
	t.Helper()
	c, err := minio.New(srv.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(srv.AccessKey, srv.SecretKey, "")})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The S3 server itself enforces the legal hold: deleting the held version
// directly, bypassing the store, is refused too. After release, Delete
// leaves no version and no delete marker behind.
func TestS3ServerRefusesDeletingHeldObject(t *testing.T) {
	srv := s3test.Start(t)
	cfg := s3Config(srv, "hold-test", defaultLimits)
	st := mustOpen(t, cfg)
	r, err := st.Put(ctx, "acme", "output.messages", []byte(`[{"content":"court ordered preservation"}]`))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetLegalHold(ctx, r.Ref, true); err != nil {
		t.Fatal(err)
	}
	raw := rawClient(t, srv)
	var versions []minio.ObjectInfo
	for info := range raw.ListObjectsIter(ctx, "hold-test", minio.ListObjectsOptions{Prefix: r.Ref.key(), WithVersions: true, Recursive: true}) {
		if info.Err != nil {
			t.Fatal(info.Err)
		}
		versions = append(versions, info)
	}
	if len(versions) != 1 || versions[0].VersionID == "" {
		t.Fatalf("want one versioned object, got %+v", versions)
	}
	err = raw.RemoveObject(ctx, "hold-test", r.Ref.key(), minio.RemoveObjectOptions{VersionID: versions[0].VersionID})
	if err == nil {
		t.Fatal("the S3 server deleted a version on legal hold")
	}
	t.Logf("S3 server refused: %s: %s", minio.ToErrorResponse(err).Code, minio.ToErrorResponse(err).Message)
	if err := st.Delete(ctx, r.Ref); !errors.Is(err, ErrLegalHold) {
		t.Fatalf("store delete of a held object: %v", err)
	}
	if _, err := st.Get(ctx, r.Ref); err != nil {
		t.Fatalf("held object lost: %v", err)
	}
	// A delete without a version ID is allowed even on a held object: it
	// only puts a delete marker on top. The held content is still there,
	// and the store still reads it and reports the hold.
	if err := raw.RemoveObject(ctx, "hold-test", r.Ref.key(), minio.RemoveObjectOptions{}); err != nil {
		t.Fatalf("delete marker: %v", err)
	}
	if got, err := st.Get(ctx, r.Ref); err != nil || !strings.Contains(string(got), "court ordered preservation") {
		t.Fatalf("held object hidden by a delete marker: %q, %v", got, err)
	}
	if held, err := st.LegalHold(ctx, r.Ref); err != nil || !held {
		t.Fatalf("legal hold behind a delete marker: %v, %v", held, err)
	}
	if _, err := st.Stat(ctx, r.Ref); err != nil {
		t.Fatalf("stat behind a delete marker: %v", err)
	}
	if err := st.SetLegalHold(ctx, r.Ref, false); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, r.Ref); err != nil {
		t.Fatal(err)
	}
	for info := range raw.ListObjectsIter(ctx, "hold-test", minio.ListObjectsOptions{Prefix: r.Ref.key(), WithVersions: true, Recursive: true}) {
		t.Fatalf("left behind after delete: version %q delete marker %v err %v", info.VersionID, info.IsDeleteMarker, info.Err)
	}
}

func TestS3BucketWithoutObjectLock(t *testing.T) {
	srv := s3test.Start(t)
	cfg := s3Config(srv, "no-lock", defaultLimits)
	cfg.S3.Get().ObjectLock = false
	st := mustOpen(t, cfg)
	r, err := st.Put(ctx, "acme", "prompt", []byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetLegalHold(ctx, r.Ref, true); !errors.Is(err, ErrLegalHoldUnsupported) {
		t.Fatalf("hold without Object Lock: %v, want ErrLegalHoldUnsupported", err)
	}
	if err := st.Delete(ctx, r.Ref); err != nil {
		t.Fatalf("delete in an unversioned bucket: %v", err)
	}
	if _, err := st.Stat(ctx, r.Ref); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
}

// While the S3 server is down every operation fails with ErrUnavailable,
// fast after the first; when it is back, writes succeed again.
func TestS3Outage(t *testing.T) {
	srv := s3test.Start(t)
	st := mustOpen(t, s3Config(srv, "outage", defaultLimits))
	if _, err := st.Put(ctx, "acme", "prompt", []byte("before")); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	start := time.Now()
	if _, err := st.Put(ctx, "acme", "prompt", []byte("during 1")); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("put while down: %v", err)
	}
	for i := range 100 {
		_, err := st.Put(ctx, "acme", "prompt", []byte("during "+strings.Repeat("x", i)))
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("put %d while down: %v", i, err)
		}
	}
	t.Logf("101 puts while down took %v", time.Since(start))
	if _, err := st.Get(ctx, Ref{Tenant: "acme", Kind: "prompt", Digest: strings.Repeat("0", 64)}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("get while down: %v", err)
	}
	srv.Restart()
	deadline := time.Now().Add(3 * maxBackoff)
	for {
		_, err := st.Put(ctx, "acme", "prompt", []byte("after"))
		if err == nil {
			break
		}
		if !errors.Is(err, ErrUnavailable) || time.Now().After(deadline) {
			t.Fatalf("put after the server returned: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	n := 0
	if err := st.List(ctx, Selection{}, func(ObjectInfo) error { n++; return nil }); err != nil || n != 2 {
		t.Fatalf("after outage: %d objects, %v; want before+after", n, err)
	}
}

// A store opened while the server is down starts anyway and works once the
// server is there.
func TestS3StartsWhileServerDown(t *testing.T) {
	srv := s3test.Start(t)
	srv.Stop()
	st := mustOpen(t, s3Config(srv, "late", defaultLimits))
	if _, err := st.Put(ctx, "acme", "prompt", []byte("x")); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("put before the server is up: %v", err)
	}
	if u := st.Usage(); u.Known {
		t.Fatalf("usage known before the server was reachable: %+v", u)
	}
	srv.Restart()
	deadline := time.Now().Add(3 * maxBackoff)
	for {
		_, err := st.Put(ctx, "acme", "prompt", []byte("x"))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("store never came up: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
