package contentstore

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.uber.org/zap"
)

// Defaults of the embedded store.
var DefaultDirectory = filepath.Join("data", "content")

const (
	DefaultMaxObjectBytes = 16 << 20
	DefaultMaxTotalBytes  = 4 << 30
	defaultS3Timeout      = 10 * time.Second
)

// Config selects one backend — a local directory (the default) or S3 — and
// sets the deployment secret and the limits. The zero-configuration store
// is the directory DefaultDirectory with a secret generated next to it.
type Config struct {
	Directory configoptional.Optional[DirConfig] `mapstructure:"directory"`
	S3        configoptional.Optional[S3Config]  `mapstructure:"s3"`
	// Secret is the deployment secret (at least 32 bytes). Every process
	// that shares a store must use the same secret.
	Secret configopaque.String `mapstructure:"secret"`
	// SecretFile holds the secret; it is generated (mode 0600) if missing.
	// Default: the directory path plus ".secret".
	SecretFile string `mapstructure:"secret_file"`
	// MaxObjectBytes is the largest content stored; larger content is not
	// stored and the span says over_limit.
	MaxObjectBytes int64 `mapstructure:"max_object_bytes"`
	// MaxTotalBytes is the quota of the store; past it content is not
	// stored and the span says over_quota.
	MaxTotalBytes int64 `mapstructure:"max_total_bytes"`
	// MaxTenantBytes is each tenant's quota unless TenantQuotas names the
	// tenant. Unset: half of MaxTotalBytes, so that no one tenant can fill
	// the store for everyone.
	MaxTenantBytes int64 `mapstructure:"max_tenant_bytes"`
	// TenantQuotas sets the quota of named tenants.
	TenantQuotas map[string]int64 `mapstructure:"tenant_quotas"`
}

// DirConfig is the local directory backend.
type DirConfig struct {
	Path string `mapstructure:"path"`
	// Fsync makes every object durable before its reference is handed out.
	Fsync bool `mapstructure:"fsync"`
}

// S3Config is an S3 bucket.
type S3Config struct {
	// Endpoint is host:port of the S3 server.
	Endpoint  string              `mapstructure:"endpoint"`
	Bucket    string              `mapstructure:"bucket"`
	Region    string              `mapstructure:"region"`
	AccessKey string              `mapstructure:"access_key"`
	SecretKey configopaque.String `mapstructure:"secret_key"`
	// Prefix is prepended to every object name.
	Prefix string `mapstructure:"prefix"`
	// Insecure talks plain HTTP instead of TLS.
	Insecure bool `mapstructure:"insecure"`
	// CreateBucket creates a missing bucket (with Object Lock when
	// ObjectLock is set).
	CreateBucket bool `mapstructure:"create_bucket"`
	ObjectLock   bool `mapstructure:"object_lock"`
	// Timeout bounds each S3 request.
	Timeout time.Duration `mapstructure:"timeout"`
}

// NewDefaultConfig returns the embedded default configuration.
func NewDefaultConfig() Config {
	return Config{
		Directory:      configoptional.Default(DirConfig{Path: DefaultDirectory, Fsync: true}),
		S3:             configoptional.Default(S3Config{CreateBucket: true, ObjectLock: true, Timeout: defaultS3Timeout}),
		MaxObjectBytes: DefaultMaxObjectBytes,
		MaxTotalBytes:  DefaultMaxTotalBytes,
	}
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	if c.Directory.HasValue() && c.S3.HasValue() {
		return errors.New("choose one of directory and s3")
	}
	if d := c.Directory.Get(); d != nil && d.Path == "" {
		return errors.New("directory.path must not be empty")
	}
	if s := c.S3.Get(); s != nil {
		switch {
		case s.Endpoint == "":
			return errors.New("s3.endpoint is required")
		case s.Bucket == "":
			return errors.New("s3.bucket is required")
		case s.AccessKey == "" || s.SecretKey == "":
			return errors.New("s3.access_key and s3.secret_key are required")
		case s.Timeout <= 0:
			return errors.New("s3.timeout must be positive")
		}
	}
	if c.Secret != "" && c.SecretFile != "" {
		return errors.New("choose one of secret and secret_file")
	}
	if c.Secret != "" && len(c.Secret) < MinSecretLen {
		return fmt.Errorf("secret must be at least %d bytes", MinSecretLen)
	}
	if c.MaxObjectBytes <= 0 || c.MaxTotalBytes <= 0 {
		return errors.New("max_object_bytes and max_total_bytes must be positive: the store is bounded")
	}
	if c.MaxObjectBytes > c.MaxTotalBytes {
		return errors.New("max_object_bytes must not exceed max_total_bytes")
	}
	if c.MaxTenantBytes < 0 || c.MaxTenantBytes > c.MaxTotalBytes {
		return errors.New("max_tenant_bytes must be between 0 (half of max_total_bytes) and max_total_bytes")
	}
	for t, q := range c.TenantQuotas {
		if err := ValidateTenant(t); err != nil {
			return fmt.Errorf("tenant_quotas: %w", err)
		}
		if q <= 0 || q > c.MaxTotalBytes {
			return fmt.Errorf("tenant_quotas[%q]: must be positive and at most max_total_bytes", t)
		}
	}
	return nil
}

// limits are the configured limits, defaults applied.
func (c Config) limits() Limits {
	l := Limits{MaxObjectBytes: c.MaxObjectBytes, MaxTotalBytes: c.MaxTotalBytes, MaxTenantBytes: c.MaxTenantBytes, TenantQuotas: c.TenantQuotas}
	if l.MaxTenantBytes == 0 {
		l.MaxTenantBytes = l.MaxTotalBytes / 2
	}
	return l
}

func (c Config) dir() DirConfig {
	d := *c.Directory.GetOrInsertDefault()
	if d.Path == "" {
		d.Path = DefaultDirectory
	}
	return d
}

// SecretPath is the file the secret is read from (or generated in) when
// no secret is given inline.
func (c Config) SecretPath() string {
	if c.SecretFile != "" {
		return c.SecretFile
	}
	return filepath.Clean(c.dir().Path) + ".secret"
}

func (c Config) loadSecret() ([]byte, error) {
	if c.Secret != "" {
		return []byte(c.Secret), nil
	}
	return LoadOrCreateSecret(c.SecretPath())
}

// Open opens the configured store. Opening a directory that this process
// already has open returns another handle on the same store (one quota,
// one set of locks); the configurations must then agree. An S3 store is
// opened without contacting the server: the bucket is prepared on first use,
// and while the server is down operations fail with ErrUnavailable.
func Open(_ context.Context, c Config, logger *zap.Logger) (Store, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("contentstore: %w", err)
	}
	if logger == nil {
		logger = zap.NewNop()
	}
	secret, err := c.loadSecret()
	if err != nil {
		return nil, err
	}
	limits := c.limits()
	if s := c.S3.Get(); s != nil {
		if c.Secret == "" {
			logger.Warn("content store secret is read from a local file; every collector writing to this bucket must use the same secret", zap.String("secret_file", c.SecretPath()))
		}
		b, err := openS3(*s, logger)
		if err != nil {
			return nil, err
		}
		logger.Info("content store opened", zap.String("backend", "s3"), zap.String("endpoint", s.Endpoint), zap.String("bucket", s.Bucket),
			zap.Int64("max_object_bytes", limits.MaxObjectBytes), zap.Int64("max_total_bytes", limits.MaxTotalBytes))
		return newStore(b, secret, limits, logger), nil
	}
	return openSharedDir(c.dir(), secret, limits, logger)
}

var (
	dirsMu sync.Mutex
	dirs   = map[string]*sharedDir{}
)

type sharedDir struct {
	st          *store
	refs        int
	fingerprint [32]byte
}

// dirHandle is one Open of a shared directory store.
type dirHandle struct {
	*store
	once    sync.Once
	release func() error
}

func (h *dirHandle) Close() error {
	var err error
	h.once.Do(func() { err = h.release() })
	return err
}

func openSharedDir(d DirConfig, secret []byte, limits Limits, logger *zap.Logger) (Store, error) {
	path, err := filepath.Abs(d.Path)
	if err != nil {
		return nil, fmt.Errorf("contentstore: directory %q: %w", d.Path, err)
	}
	fp := sha256.Sum256(fmt.Appendf(nil, "%x\x00%v\x00%d\x00%d\x00%d\x00%v", secret, d.Fsync, limits.MaxObjectBytes, limits.MaxTotalBytes,
		limits.MaxTenantBytes, limits.TenantQuotas))
	dirsMu.Lock()
	defer dirsMu.Unlock()
	sd := dirs[path]
	if sd != nil && sd.fingerprint != fp {
		return nil, fmt.Errorf("contentstore: directory %s is already open in this process with another secret or other limits", path)
	}
	if sd == nil {
		b, err := openDir(path, d.Fsync, logger)
		if err != nil {
			return nil, err
		}
		sd = &sharedDir{st: newStore(b, secret, limits, logger), fingerprint: fp}
		// The directory is local: count what it holds now, not on first use.
		if err := sd.st.countUsage(context.Background()); err != nil {
			return nil, err
		}
		dirs[path] = sd
		logger.Info("content store opened", zap.String("backend", "directory"), zap.String("path", path),
			zap.Int64("max_object_bytes", limits.MaxObjectBytes), zap.Int64("max_total_bytes", limits.MaxTotalBytes))
	}
	sd.refs++
	return &dirHandle{store: sd.st, release: func() error {
		dirsMu.Lock()
		defer dirsMu.Unlock()
		sd.refs--
		if sd.refs > 0 {
			return nil
		}
		delete(dirs, path)
		return sd.st.Close()
	}}, nil
}
