package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/docketlabs/docket/ledger/audit"
	"github.com/docketlabs/docket/ledger/storage"
	"github.com/docketlabs/docket/ledger/storage/chdb"
)

func exportCommand() *cobra.Command {
	var local localFlags
	var remote remoteFlags
	var req audit.Request
	var format, from, to, out string
	cmd := &cobra.Command{
		Use:   "export --from TIME --to TIME --out DIR --reason REASON [--tenant T] [--format jsonl|csv|parquet]",
		Short: "Export the ledger for an audit as a verifiable bundle (from the local data, or a running Docket with --server)",
		Long: `Export the calls of a tenant (default: every tenant) that started in [--from, --to)
into a new bundle directory: calls.<format>, optionally the access log and the
lifecycle records, and manifest.json with the query, totals (a total with
unknown parts carries "+?"), the SHA-256 of every file and a hash chain over
every file's rows. The export is recorded in the access log; the root it
prints is the ref of that record. Check a bundle with "docket export verify".

Times are RFC 3339 (2026-03-01T00:00:00Z) or dates (2026-03-01, UTC midnight).

With --server URL (and an API token in $DOCKET_TOKEN) the running Docket
writes the bundle, recorded under the token's service account, and it is
downloaded into --out while ingestion goes on; progress goes to stderr.
Without --server, the embedded ledger in --data must not be held by a
running process; if it is, the command says where that process's API is.`,
		Args: cobra.NoArgs,
		// A denied export is not a usage mistake.
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if out == "" {
				return errors.New("export: --out is required")
			}
			if req.From, err = parseTime("--from", from); err != nil {
				return err
			}
			if req.To, err = parseTime("--to", to); err != nil {
				return err
			}
			req.Format = audit.Format(format)
			ctx := cmd.Context()
			client, err := remote.client(&local, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if client != nil {
				return exportRemote(ctx, client, req, out, cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			store, operator, err := local.openLedger(ctx)
			if err != nil {
				return err
			}
			defer func() { _ = store.Engine().Close() }()
			m, err := audit.Export(ctx, store, operator, req, out)
			if err != nil {
				return fmt.Errorf("export: %w", err)
			}
			printManifest(cmd.OutOrStdout(), out, m)
			return nil
		},
	}
	local.registerLedger(cmd.Flags())
	remote.register(cmd.Flags())
	fs := cmd.Flags()
	fs.StringVar(&req.Tenant, "tenant", "", "tenant to export (default: every tenant)")
	fs.StringVar(&from, "from", "", "first call start time included (required)")
	fs.StringVar(&to, "to", "", "call start time the export ends before (required)")
	fs.StringVar(&format, "format", string(audit.FormatJSONL), "file format: jsonl, csv or parquet")
	fs.StringVar(&out, "out", "", "bundle directory to create; it must not exist or be empty (required)")
	fs.StringVar(&req.Reason, "reason", "", "why the export is made; recorded in the access log (required)")
	fs.BoolVar(&req.IncludeAccessLog, "access-log", false, "include the access log recorded in the time range")
	fs.BoolVar(&req.IncludeState, "state", false, "include the lifecycle records (holds, deletion jobs, content events, expiry runs) of the time range")
	cmd.AddCommand(exportVerifyCommand())
	return cmd
}

func parseTime(flag, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, fmt.Errorf("export: %s is required", flag)
	}
	return parseInstant(flag, s)
}

func printManifest(w io.Writer, dir string, m audit.Manifest) {
	fmt.Fprintf(w, "bundle %s\n", dir)
	for _, f := range m.Files {
		fmt.Fprintf(w, "  %-22s %10d rows  sha256 %s\n", f.Name, f.Rows, f.SHA256)
	}
	t := m.Totals
	fmt.Fprintf(w, "calls %d, input tokens %s, output tokens %s, cost USD %s\n", t.Calls, t.InputTokens.Total, t.OutputTokens.Total, t.CostUSD.Total)
	fmt.Fprintf(w, "root %s (access-log event %s)\n", m.Root, m.AccessEventID)
}

func exportVerifyCommand() *cobra.Command {
	var root string
	cmd := &cobra.Command{
		Use:   "verify BUNDLE_DIR",
		Short: "Check a bundle against its manifest: file hashes, row counts, hash chains, totals",
		Long: `Check an export bundle: every file's SHA-256, its rows re-read in their canonical
form against the row count, the hash chain and its checkpoints, the totals and
the root. Exits non-zero naming the first problem (file and rows). Reading
Parquet back uses a temporary embedded engine; the ledger is not opened.`,
		Args:         cobra.ExactArgs(1),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			var tmp string
			var eng *chdb.Engine
			defer func() {
				if eng != nil {
					_ = eng.Close()
				}
				if tmp != "" {
					_ = os.RemoveAll(tmp)
				}
			}()
			openEngine := func() (storage.Engine, error) {
				var err error
				if tmp, err = os.MkdirTemp("", "docket-verify-"); err != nil {
					return nil, err
				}
				if eng, err = chdb.Open(tmp); err != nil {
					return nil, err
				}
				return eng, nil
			}
			report, err := audit.Verify(cmd.Context(), args[0], audit.VerifyOptions{Root: root, Engine: openEngine})
			w := cmd.OutOrStdout()
			for _, f := range report.Files {
				fmt.Fprintln(w, f.Summary())
			}
			for _, p := range report.Problems {
				fmt.Fprintln(w, "problem:", p)
			}
			if err != nil {
				return fmt.Errorf("export verify: %w", err)
			}
			fmt.Fprintf(w, "bundle ok, root %s\n", report.Manifest.Root)
			return nil
		},
	}
	cmd.Flags().StringVar(&root, "root", "", "root the bundle must have (the ref of its export's access-log entry)")
	return cmd
}
