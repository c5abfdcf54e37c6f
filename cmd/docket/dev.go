package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/docketlabs/docket/collector"
)

func devCommand() *cobra.Command {
	var dataDir string
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run collector, ledger and evidence UI in one process on embedded defaults",
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, err := collector.WriteDevConfig(dataDir)
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, `docket dev — data in %s (config written to %s)
  OTLP in:        grpc 127.0.0.1:4317, http 127.0.0.1:4318
  evidence UI:    http://127.0.0.1:8080/   (first start: the admin's one-time password is printed below,
                  or written to %s/ui-users.json.admin-password when not on a terminal)
  metrics:        http://127.0.0.1:8888/metrics
  try:            make demo   (example app + load; prints trace IDs to look up)
`, dataDir, path, dataDir)
			return runCollector(cmd.Context(), path)
		},
	}
	cmd.Flags().StringVar(&dataDir, "data", "data", "data directory (ledger, queue, content, UI accounts)")
	return cmd
}
