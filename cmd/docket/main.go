// Command docket is the Docket distribution: the evidence collector and the
// tools around its ledger. It only wires; the work lives in the packages.
package main

import (
	"errors"
	"log/slog"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	root := &cobra.Command{
		Use:           "docket",
		Short:         "Evidence collector and ledger for LLM applications",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       buildVersion(),
	}
	root.AddCommand(collectorCommand(), devCommand(), uiCommand(), exportCommand(), lifecycleCommand(), contentCommand(), replayCommand(), usageCommand(), reconcileCommand(), versionCommand())
	if err := root.Execute(); err != nil {
		slog.Error("docket failed", "err", err)
		var exit exitError
		if errors.As(err, &exit) {
			os.Exit(exit.code)
		}
		os.Exit(1)
	}
}
