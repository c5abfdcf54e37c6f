// Package storageconfig chooses and opens the ledger's storage engine from
// configuration: the embedded chDB engine (default) or a ClickHouse server.
package storageconfig

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"go.opentelemetry.io/collector/config/configopaque"

	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/storage/chdb"
	"github.com/docketlabs/docket/ledger/storage/clickhouse"
	"github.com/docketlabs/docket/queries"
)

// DefaultEmbeddedPath is where the embedded ledger lives when nothing is
// configured.
var DefaultEmbeddedPath = filepath.Join("data", "ledger")

// Config selects one storage. Empty means the embedded engine at
// DefaultEmbeddedPath.
type Config struct {
	Embedded   *EmbeddedConfig   `mapstructure:"embedded"`
	ClickHouse *ClickHouseConfig `mapstructure:"clickhouse"`
}

// EmbeddedConfig is the in-process chDB storage.
type EmbeddedConfig struct {
	// Path is the data directory; one process may own it at a time.
	Path string `mapstructure:"path"`
}

// ClickHouseConfig is a ClickHouse server or cluster.
type ClickHouseConfig struct {
	// DSN of the server's HTTP interface, e.g.
	// https://docket:secret@ch:8443/docket.
	DSN configopaque.String `mapstructure:"dsn"`
	// AllowUnauthenticated permits a DSN without a password.
	AllowUnauthenticated bool `mapstructure:"allow_unauthenticated"`
	// Cluster names a ClickHouse cluster (remote_servers): the schema is
	// created ON CLUSTER with replicated tables behind Distributed ones
	// (queries.Schema). Empty: one server.
	Cluster string `mapstructure:"cluster"`
}

// Validate checks that at most one engine is chosen and it is complete.
func (c Config) Validate() error {
	if c.Embedded != nil && c.ClickHouse != nil {
		return errors.New("storage: choose one of embedded and clickhouse")
	}
	if c.ClickHouse != nil {
		dsn := string(c.ClickHouse.DSN)
		if dsn == "" {
			return errors.New("storage: clickhouse.dsn is required")
		}
		if !strings.HasPrefix(dsn, "https://") && !strings.HasPrefix(dsn, "http://") {
			return errors.New("storage: clickhouse.dsn names the server's HTTP interface: https://user:password@host:8443/database")
		}
		if err := (queries.Schema{Cluster: c.ClickHouse.Cluster}).Validate(); err != nil {
			return fmt.Errorf("storage: clickhouse.cluster: %w", err)
		}
	}
	return nil
}

// EmbeddedPath is the data directory of the embedded engine, or "" when a
// server is configured.
func (c Config) EmbeddedPath() string {
	if c.ClickHouse != nil {
		return ""
	}
	if c.Embedded != nil && c.Embedded.Path != "" {
		return c.Embedded.Path
	}
	return DefaultEmbeddedPath
}

// Schema is how the migrations and the lifecycle's deletes are rendered:
// for the configured cluster, or for one node.
func (c Config) Schema() queries.Schema {
	if c.ClickHouse == nil {
		return queries.Schema{}
	}
	return queries.Schema{Cluster: c.ClickHouse.Cluster}
}

// Open opens the engine and applies pending migrations.
func Open(ctx context.Context, c Config) (*ledgerstore.Store, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	var store *ledgerstore.Store
	if c.ClickHouse != nil {
		ch := c.ClickHouse
		eng, err := clickhouse.Open(ctx, string(ch.DSN), clickhouse.Options{AllowUnauthenticated: ch.AllowUnauthenticated, Cluster: ch.Cluster != ""})
		if err != nil {
			return nil, err
		}
		store = ledgerstore.NewCluster(eng, c.Schema())
	} else {
		eng, err := chdb.Open(c.EmbeddedPath())
		if err != nil {
			return nil, err
		}
		store = ledgerstore.New(eng)
	}
	if err := store.Migrate(ctx); err != nil {
		_ = store.Engine().Close()
		return nil, fmt.Errorf("storage: %w", err)
	}
	return store, nil
}
