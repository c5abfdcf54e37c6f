package contentstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"syscall"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"go.uber.org/zap"

	"github.com/docketlabs/docket/internal/parallel"
)

// s3Backend stores objects in an S3 bucket (MinIO, AWS, any S3 server).
// Buckets it creates have Object Lock, so legal hold is enforced by the
// server itself; Object Lock implies versioning, so remove deletes every
// version and delete marker of a key.
type s3Backend struct {
	cfg     S3Config
	client  *minio.Client
	logger  *zap.Logger
	breaker *breaker

	initMu      sync.Mutex
	initialized bool
	lockEnabled bool
}

func openS3(cfg S3Config, logger *zap.Logger) (*s3Backend, error) {
	client, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:  credentials.NewStaticV4(cfg.AccessKey, string(cfg.SecretKey), ""),
		Secure: !cfg.Insecure,
		Region: cfg.Region,
		// The breaker decides when to try again; retries inside one call
		// would only hold the pipeline while the server is down.
		MaxRetries: 1,
	})
	if err != nil {
		return nil, fmt.Errorf("contentstore: s3 client: %w", err)
	}
	return &s3Backend{cfg: cfg, client: client, logger: logger, breaker: newBreaker(logger)}, nil
}

// do runs one S3 operation under the per-call timeout and the breaker,
// after the bucket has been prepared.
func (s *s3Backend) do(ctx context.Context, op func(ctx context.Context) error) error {
	return s.breaker.call(ctx, func() error {
		opCtx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
		defer cancel()
		err := s.prepare(opCtx)
		if err == nil {
			err = op(opCtx)
		}
		return s.classify(ctx, err)
	})
}

// prepare makes sure the bucket exists (creating it with Object Lock) and
// learns whether legal hold is available, once.
func (s *s3Backend) prepare(ctx context.Context) error {
	s.initMu.Lock()
	defer s.initMu.Unlock()
	if s.initialized {
		return nil
	}
	exists, err := s.client.BucketExists(ctx, s.cfg.Bucket)
	if err != nil {
		return err
	}
	if !exists {
		if !s.cfg.CreateBucket {
			return fmt.Errorf("contentstore: s3 bucket %q does not exist and create_bucket is false", s.cfg.Bucket)
		}
		err = s.client.MakeBucket(ctx, s.cfg.Bucket, minio.MakeBucketOptions{Region: s.cfg.Region, ObjectLocking: s.cfg.ObjectLock})
		if err != nil && minio.ToErrorResponse(err).Code != "BucketAlreadyOwnedByYou" {
			return err
		}
		s.logger.Info("content store bucket created", zap.String("bucket", s.cfg.Bucket), zap.Bool("object_lock", s.cfg.ObjectLock))
	}
	lock, _, _, _, err := s.client.GetObjectLockConfig(ctx, s.cfg.Bucket)
	s.lockEnabled = err == nil && lock == "Enabled"
	if !s.lockEnabled {
		s.logger.Warn("content store bucket has no Object Lock: legal hold is unavailable", zap.String("bucket", s.cfg.Bucket))
	}
	s.initialized = true
	return nil
}

// classify maps S3 and transport errors to the store's errors. A caller
// that gave up gets its own context error, which does not count against
// the store's availability.
func (s *s3Backend) classify(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, ErrNotFound) || errors.Is(err, ErrLegalHold) || errors.Is(err, ErrLegalHoldUnsupported) {
		return err
	}
	resp := minio.ToErrorResponse(err)
	switch {
	case resp.Code == "NoSuchKey" || resp.Code == "NoSuchVersion":
		return ErrNotFound
	case resp.Code == "NoSuchBucket":
		s.initMu.Lock()
		s.initialized = false
		s.initMu.Unlock()
		return fmt.Errorf("%w: s3: %w", ErrUnavailable, err)
	case resp.StatusCode >= 500 || resp.Code == "SlowDown" || resp.Code == "RequestTimeout":
		return fmt.Errorf("%w: s3: %w", ErrUnavailable, err)
	case resp.StatusCode == http.StatusNotFound:
		return ErrNotFound
	}
	var netErr net.Error
	if errors.As(err, &netErr) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) {
		return fmt.Errorf("%w: s3: %w", ErrUnavailable, err)
	}
	return fmt.Errorf("contentstore: s3: %w", err)
}

func (s *s3Backend) name(key string) string { return s.cfg.Prefix + key }

// putBatch puts the new objects, at most batchWorkers at once; the server
// has made each durable when it answers.
func (s *s3Backend) putBatch(ctx context.Context, objs []*batchObject) {
	parallel.For(len(objs), batchWorkers, func(i int) {
		o := objs[i]
		if o.exists {
			return
		}
		o.err = s.do(ctx, func(ctx context.Context) error {
			_, err := s.client.PutObject(ctx, s.cfg.Bucket, s.name(o.key), bytes.NewReader(o.data), int64(len(o.data)),
				minio.PutObjectOptions{ContentType: "application/octet-stream", DisableMultipart: true, SendContentMd5: true})
			return err
		})
		o.created = o.err == nil
	})
}

// hiddenVersion finds the newest real version of a key whose latest entry
// is a delete marker. A delete without a version ID — by any S3 client, on a
// held object too — only adds such a marker; the content is still there and
// still evidence, so reads fall back to it. ErrNotFound if there is none.
func (s *s3Backend) hiddenVersion(ctx context.Context, key string) (minio.ObjectInfo, error) {
	vs, err := s.versions(ctx, key)
	if err != nil {
		return minio.ObjectInfo{}, err
	}
	var newest minio.ObjectInfo
	for _, v := range vs {
		if !v.IsDeleteMarker && (newest.VersionID == "" || v.LastModified.After(newest.LastModified)) {
			newest = v
		}
	}
	if newest.VersionID == "" {
		return minio.ObjectInfo{}, ErrNotFound
	}
	return newest, nil
}

// versionFor is the version a read should use: "" (the latest) unless the
// latest is a delete marker hiding a real version.
func (s *s3Backend) versionFor(ctx context.Context, key string, err error) (string, error) {
	if minio.ToErrorResponse(err).Code != "NoSuchKey" {
		return "", err
	}
	v, verr := s.hiddenVersion(ctx, key)
	if verr != nil {
		if errors.Is(verr, ErrNotFound) {
			return "", err
		}
		return "", verr
	}
	return v.VersionID, nil
}

func (s *s3Backend) get(ctx context.Context, key string) ([]byte, error) {
	var data []byte
	err := s.do(ctx, func(ctx context.Context) error {
		opts := minio.GetObjectOptions{}
		if _, err := s.client.StatObject(ctx, s.cfg.Bucket, s.name(key), minio.StatObjectOptions{}); err != nil {
			if opts.VersionID, err = s.versionFor(ctx, key, err); err != nil {
				return err
			}
		}
		obj, err := s.client.GetObject(ctx, s.cfg.Bucket, s.name(key), opts)
		if err != nil {
			return err
		}
		defer func() { _ = obj.Close() }()
		data, err = io.ReadAll(io.LimitReader(obj, maxReadBytes+1))
		if err == nil && len(data) > maxReadBytes {
			return fmt.Errorf("contentstore: read object: more than a read may return")
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("contentstore: read object: %w", err)
	}
	return data, nil
}

func (s *s3Backend) stat(ctx context.Context, key string) (objectStat, error) {
	var st objectStat
	err := s.do(ctx, func(ctx context.Context) error {
		info, err := s.client.StatObject(ctx, s.cfg.Bucket, s.name(key), minio.StatObjectOptions{})
		if err != nil {
			version, verr := s.versionFor(ctx, key, err)
			if verr != nil {
				return verr
			}
			if info, err = s.client.StatObject(ctx, s.cfg.Bucket, s.name(key), minio.StatObjectOptions{VersionID: version}); err != nil {
				return err
			}
		}
		st = objectStat{size: info.Size, modified: info.LastModified}
		return nil
	})
	return st, err
}

// versions lists every version and delete marker of exactly one key.
func (s *s3Backend) versions(ctx context.Context, key string) ([]minio.ObjectInfo, error) {
	name := s.name(key)
	var out []minio.ObjectInfo
	for info := range s.client.ListObjectsIter(ctx, s.cfg.Bucket, minio.ListObjectsOptions{Prefix: name, Recursive: true, WithVersions: true}) {
		if info.Err != nil {
			return nil, info.Err
		}
		if info.Key == name {
			out = append(out, info)
		}
	}
	return out, nil
}

func (s *s3Backend) remove(ctx context.Context, key string) (int64, error) {
	var freed int64
	err := s.do(ctx, func(ctx context.Context) error {
		vs, err := s.versions(ctx, key)
		if err != nil {
			return err
		}
		found := false
		for _, v := range vs {
			found = found || !v.IsDeleteMarker
		}
		if !found {
			return ErrNotFound
		}
		for _, v := range vs {
			// No governance bypass: a held version is refused by the server.
			err := s.client.RemoveObject(ctx, s.cfg.Bucket, v.Key, minio.RemoveObjectOptions{VersionID: v.VersionID})
			if err != nil {
				if minio.ToErrorResponse(err).Code == "AccessDenied" && s.heldVersion(ctx, v) {
					return ErrLegalHold
				}
				return err
			}
			if !v.IsDeleteMarker {
				freed += v.Size
			}
		}
		return nil
	})
	return freed, err
}

func (s *s3Backend) heldVersion(ctx context.Context, v minio.ObjectInfo) bool {
	st, err := s.client.GetObjectLegalHold(ctx, s.cfg.Bucket, v.Key, minio.GetObjectLegalHoldOptions{VersionID: v.VersionID})
	return err == nil && st != nil && *st == minio.LegalHoldEnabled
}

// setHold sets the legal hold of every version of the key, so no copy of
// the content can be deleted while the hold stands. A gone object is
// ErrNotFound on a bucket without Object Lock too: a hold must not count
// it as kept by the checks.
func (s *s3Backend) setHold(ctx context.Context, key string, on bool) error {
	return s.do(ctx, func(ctx context.Context) error {
		vs, err := s.versions(ctx, key)
		if err != nil {
			return err
		}
		vs = slices.DeleteFunc(vs, func(v minio.ObjectInfo) bool { return v.IsDeleteMarker })
		switch {
		case len(vs) == 0:
			return ErrNotFound
		case !s.lockEnabled:
			return ErrLegalHoldUnsupported
		}
		status := minio.LegalHoldDisabled
		if on {
			status = minio.LegalHoldEnabled
		}
		for _, v := range vs {
			if err := s.client.PutObjectLegalHold(ctx, s.cfg.Bucket, v.Key, minio.PutObjectLegalHoldOptions{VersionID: v.VersionID, Status: &status}); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *s3Backend) hold(ctx context.Context, key string) (bool, error) {
	var held bool
	err := s.do(ctx, func(ctx context.Context) error {
		var version string
		if _, err := s.client.StatObject(ctx, s.cfg.Bucket, s.name(key), minio.StatObjectOptions{}); err != nil {
			if version, err = s.versionFor(ctx, key, err); err != nil {
				return err
			}
		}
		if !s.lockEnabled {
			return nil
		}
		st, err := s.client.GetObjectLegalHold(ctx, s.cfg.Bucket, s.name(key), minio.GetObjectLegalHoldOptions{VersionID: version})
		if err != nil {
			if minio.ToErrorResponse(err).Code == "NoSuchObjectLockConfiguration" {
				return nil
			}
			return err
		}
		held = st != nil && *st == minio.LegalHoldEnabled
		return nil
	})
	return held, err
}

// list pages through current objects; each page is one call under the
// timeout, so long listings do not trip it.
func (s *s3Backend) list(ctx context.Context, prefix string, fn func(key string, st objectStat) error) error {
	return s.listAll(ctx, prefix, false, func(info minio.ObjectInfo) error {
		return fn(info.Key[len(s.cfg.Prefix):], objectStat{size: info.Size, modified: info.LastModified})
	})
}

func (s *s3Backend) usage(ctx context.Context, fn func(key string, size int64)) error {
	return s.listAll(ctx, "", true, func(info minio.ObjectInfo) error {
		if !info.IsDeleteMarker {
			fn(info.Key[len(s.cfg.Prefix):], info.Size)
		}
		return nil
	})
}

func (s *s3Backend) listAll(ctx context.Context, prefix string, versions bool, fn func(minio.ObjectInfo) error) error {
	if err := s.do(ctx, func(context.Context) error { return nil }); err != nil {
		return err
	}
	listCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	for info := range s.client.ListObjectsIter(listCtx, s.cfg.Bucket, minio.ListObjectsOptions{Prefix: s.cfg.Prefix + prefix, Recursive: true, WithVersions: versions}) {
		if info.Err != nil {
			return fmt.Errorf("contentstore: list bucket: %w", s.classify(ctx, info.Err))
		}
		if err := fn(info); err != nil {
			return err
		}
	}
	return ctx.Err()
}

func (s *s3Backend) close() error { return nil }
