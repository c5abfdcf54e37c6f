package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/storage/chdb"
	"github.com/docketlabs/docket/ledger/storageconfig"
	"github.com/docketlabs/docket/ui/apiclient"
)

// storageFlags are the ledger storage flags shared by the offline commands.
type storageFlags struct {
	dataDir string
}

func (s *storageFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&s.dataDir, "data", "data", "data directory of the embedded ledger (as given to docket dev)")
}

// config selects a ClickHouse server when DOCKET_CLICKHOUSE_DSN is set (kept
// out of flags so the password stays out of process listings), else the
// embedded ledger in the data directory.
func (s *storageFlags) config() storageconfig.Config {
	if dsn := os.Getenv("DOCKET_CLICKHOUSE_DSN"); dsn != "" {
		return storageconfig.Config{ClickHouse: &storageconfig.ClickHouseConfig{DSN: configopaque.String(dsn)}}
	}
	return storageconfig.Config{Embedded: &storageconfig.EmbeddedConfig{Path: filepath.Join(s.dataDir, "ledger")}}
}

// localFlags select the local data of an operator command: the embedded
// ledger and the directory content store, and who acts on them.
type localFlags struct {
	storage    storageFlags
	contentDir string
	actor      string
}

func (l *localFlags) register(fs *pflag.FlagSet) {
	l.registerLedger(fs)
	fs.StringVar(&l.contentDir, "content", "", "content store directory (default DIR/content, its secret in DIR/content.secret)")
}

// registerLedger registers the flags of commands that need only the ledger.
func (l *localFlags) registerLedger(fs *pflag.FlagSet) {
	fs.StringVar(&l.storage.dataDir, "data", "data", "data directory (as given to docket dev): the ledger in DIR/ledger")
	fs.StringVar(&l.actor, "actor", "", "who is acting, put on record (default: the login name)")
}

// localData is the opened local data. The operator has the data directory
// in hand, so acts as an admin of every tenant; the name goes on record.
type localData struct {
	ledger   *ledgerstore.Store
	content  contentstore.Store
	operator access.Principal
}

func (d *localData) close() {
	_ = d.content.Close()
	_ = d.ledger.Engine().Close()
}

// openLedger opens the ledger only, for commands that need no content.
func (l *localFlags) openLedger(ctx context.Context) (*ledgerstore.Store, access.Principal, error) {
	actor, err := l.operator()
	if err != nil {
		return nil, access.Principal{}, err
	}
	cfg := l.storage.config()
	if cfg.Embedded != nil {
		// Say who holds the directory, rather than the engine's lock error.
		if a, ok := apiclient.Discover(cfg.Embedded.Path); ok && chdb.Held(cfg.Embedded.Path) {
			return nil, access.Principal{}, fmt.Errorf("the ledger in %s is held by a running docket (pid %d, API at %s): this command needs the directory to itself; stop that process first (export, lifecycle and content get can act through it with --server %s and an API token)",
				l.storage.dataDir, a.PID, a.URL, a.URL)
		}
	}
	store, err := storageconfig.Open(ctx, cfg)
	if err != nil {
		return nil, access.Principal{}, err
	}
	return store, access.Principal{User: actor, Role: access.RoleAdmin, Tenants: []string{access.AllTenants}}, nil
}

// operator is who acts, for the record: --actor or the login name.
func (l *localFlags) operator() (string, error) {
	if l.actor != "" {
		return l.actor, nil
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username, nil
	}
	return "", errors.New("--actor is required (no login name found)")
}

func (l *localFlags) open(ctx context.Context) (*localData, error) {
	store, operator, err := l.openLedger(ctx)
	if err != nil {
		return nil, err
	}
	dir := l.contentDir
	if dir == "" {
		dir = filepath.Join(l.storage.dataDir, "content")
	}
	cfg := contentstore.NewDefaultConfig()
	cfg.Directory = configoptional.Some(contentstore.DirConfig{Path: dir, Fsync: true})
	content, err := contentstore.Open(ctx, cfg, nil)
	if err != nil {
		_ = store.Engine().Close()
		return nil, err
	}
	return &localData{ledger: store, content: content, operator: operator}, nil
}
