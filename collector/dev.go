package collector

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

//go:embed dev.yaml
var devConfig string

// WriteDevConfig renders the embedded `docket dev` configuration for a data
// directory into that directory and returns its path. The file is left for
// the user to read: it is the effective configuration.
func WriteDevConfig(dataDir string) (string, error) {
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return "", fmt.Errorf("collector: data dir: %w", err)
	}
	for _, sub := range []string{"ledger", "queue"} {
		if err := os.MkdirAll(filepath.Join(abs, sub), 0o700); err != nil {
			return "", fmt.Errorf("collector: create data dir: %w", err)
		}
	}
	// strconv.Quote yields a valid YAML double-quoted scalar for any path.
	cfg := strings.ReplaceAll(devConfig, "${DATA_DIR}", strings.Trim(strconv.Quote(abs), `"`))
	path := filepath.Join(abs, "docket-dev.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return "", fmt.Errorf("collector: write dev config: %w", err)
	}
	return path, nil
}
