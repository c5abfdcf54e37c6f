package main

import (
	"context"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"go.opentelemetry.io/collector/config/configopaque"

	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/backend"
)

func openStore(ctx context.Context, s storageFlags) (*ledger.Store, error) {
	return backend.Open(ctx, s.config())
}

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
func (s *storageFlags) config() backend.Config {
	if dsn := os.Getenv("DOCKET_CLICKHOUSE_DSN"); dsn != "" {
		return backend.Config{ClickHouse: &backend.ClickHouseConfig{DSN: configopaque.String(dsn)}}
	}
	return backend.Config{Embedded: &backend.EmbeddedConfig{Path: filepath.Join(s.dataDir, "ledger")}}
}
