package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/docketlabs/docket/ledger/usage"
	"github.com/docketlabs/docket/reconcile"
)

func usageCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "usage", Short: "Import the providers' own usage reports (for docket reconcile)"}
	cmd.AddCommand(usageImportCommand(), usagePullCommand(), usageImportsCommand())
	return cmd
}

func usageImportCommand() *cobra.Command {
	var local localFlags
	var provider, file string
	cmd := &cobra.Command{
		Use:   "import --provider openai|anthropic --file F",
		Short: "Import a provider's usage CSV export (embedded ledger: while the collector is stopped)",
		Long: `Import a usage export: one row per UTC day and group with a header row.
OpenAI columns: date (or start_time), model, project_id, api_key_id,
num_model_requests, input_tokens, output_tokens, input_cached_tokens, endpoint
(completions or embeddings). Anthropic columns: date (or starting_at), model,
workspace_id, api_key_id, uncached_input_tokens, cache_read_input_tokens,
cache_creation_input_tokens (or its 5m and 1h parts), output_tokens.
The import is recorded with the file's name and SHA-256 and who imported it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return errors.New("usage import: --file is required")
			}
			ctx := cmd.Context()
			store, operator, err := local.openLedger(ctx)
			if err != nil {
				return err
			}
			defer func() { _ = store.Engine().Close() }()
			imp, err := usage.ImportFile(ctx, store, provider, file, operator.User)
			if err != nil {
				return fmt.Errorf("usage import: %w", err)
			}
			printImport(cmd.OutOrStdout(), imp)
			return nil
		},
	}
	local.registerLedger(cmd.Flags())
	cmd.Flags().StringVar(&provider, "provider", "", "openai or anthropic (required)")
	cmd.Flags().StringVar(&file, "file", "", "the CSV export (required)")
	return cmd
}

func usagePullCommand() *cobra.Command {
	var local localFlags
	var provider, baseURL, keyFile, from, to string
	cmd := &cobra.Command{
		Use:   "pull --provider openai|anthropic [--from DAY --to DAY]",
		Short: "Pull a provider's daily usage report with an organization admin key and import it",
		Long: fmt.Sprintf(`Pull the daily usage of [--from, --to) (default: the last 7 days and today)
grouped by model, project or workspace, and API key: OpenAI's organization
Usage API (completions and embeddings) or Anthropic's usage report (messages).
The admin key is read from --admin-key-file, else from %s or %s.`,
			usage.AdminKeyEnv[usage.ProviderOpenAI], usage.AdminKeyEnv[usage.ProviderAnthropic]),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			key, err := usage.AdminKey(provider, keyFile)
			if err != nil {
				return err
			}
			start, end, err := dayRange(from, to)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			store, operator, err := local.openLedger(ctx)
			if err != nil {
				return err
			}
			defer func() { _ = store.Engine().Close() }()
			imp, err := usage.Client{Provider: provider, BaseURL: baseURL, AdminKey: key}.Import(ctx, store, start, end, operator.User)
			if err != nil {
				return fmt.Errorf("usage pull: %w", err)
			}
			printImport(cmd.OutOrStdout(), imp)
			return nil
		},
	}
	local.registerLedger(cmd.Flags())
	fs := cmd.Flags()
	fs.StringVar(&provider, "provider", "", "openai or anthropic (required)")
	fs.StringVar(&baseURL, "base-url", "", "API base URL (default: the provider's public API)")
	fs.StringVar(&keyFile, "admin-key-file", "", "file holding the admin key")
	fs.StringVar(&from, "from", "", "first UTC day (default: 7 days before today)")
	fs.StringVar(&to, "to", "", "UTC day the pull ends before (default: tomorrow)")
	return cmd
}

func usageImportsCommand() *cobra.Command {
	var local localFlags
	var provider string
	cmd := &cobra.Command{
		Use:   "imports [--provider P]",
		Short: "List the latest imports of provider usage reports",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			store, _, err := local.openLedger(ctx)
			if err != nil {
				return err
			}
			defer func() { _ = store.Engine().Close() }()
			list, err := usage.Imports(ctx, store, provider, 50)
			if err != nil {
				return err
			}
			for _, imp := range list {
				printImport(cmd.OutOrStdout(), imp)
			}
			return nil
		},
	}
	local.registerLedger(cmd.Flags())
	cmd.Flags().StringVar(&provider, "provider", "", "only this provider")
	return cmd
}

func printImport(w io.Writer, imp usage.Import) {
	fmt.Fprintf(w, "import %s  %s  %s by %s  %s  days %s to %s (exclusive)  %d rows  from %s\n",
		imp.ID, imp.At.Format(time.RFC3339), imp.Source, imp.Actor, imp.Provider, imp.FromDay, imp.ToDay, imp.Rows, imp.Origin)
}

// dayRange reads --from/--to days; the default is the last week and today.
func dayRange(from, to string) (time.Time, time.Time, error) {
	end, err := parseInstant("--to", to)
	if err != nil {
		return end, end, err
	}
	if end.IsZero() {
		end = time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 1)
	}
	start, err := parseInstant("--from", from)
	if start.IsZero() {
		start = end.AddDate(0, 0, -8)
	}
	return start, end, err
}

func reconcileCommand() *cobra.Command {
	var local localFlags
	var o reconcile.Options
	var from, to string
	var keys []string
	var check bool
	cmd := &cobra.Command{
		Use:   "reconcile [--from DAY --to DAY] [--provider P] [--tolerance PCT] [--key provider/service=KEY_ID]…",
		Short: "Compare the ledger with the imported provider usage reports, per day, provider and model",
		Long: `Print, per UTC day, provider and model (and API key with --key), the calls and
tokens in the ledger and in the provider's latest imported report, their drift
in percent and a state: within_tolerance, ledger_missing_calls,
ledger_extra_calls, tokens_differ, undetermined or not_imported. Anthropic's
report counts no requests: its calls are judged by their tokens.
--check exits with status 3 when a cell is not within tolerance.`,
		Args: cobra.NoArgs,
		// Drift is a finding, not a usage mistake.
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if o.From, o.To, err = dayRange(from, to); err != nil {
				return err
			}
			for _, k := range keys {
				ps, id, ok := strings.Cut(k, "=")
				p, svc, ok2 := strings.Cut(ps, "/")
				if !ok || !ok2 || id == "" {
					return fmt.Errorf("--key %q: want provider/service=api_key_id", k)
				}
				if o.Keys == nil {
					o.Keys = map[string]map[string]string{}
				}
				if o.Keys[p] == nil {
					o.Keys[p] = map[string]string{}
				}
				o.Keys[p][svc] = id
			}
			ctx := cmd.Context()
			store, _, err := local.openLedger(ctx)
			if err != nil {
				return err
			}
			defer func() { _ = store.Engine().Close() }()
			rep, err := reconcile.Reconcile(ctx, store, o)
			if err != nil {
				return err
			}
			printReconcile(cmd.OutOrStdout(), rep)
			if check && rep.States[reconcile.StateOK] != len(rep.Cells) {
				return errDrift
			}
			return nil
		},
	}
	local.registerLedger(cmd.Flags())
	fs := cmd.Flags()
	fs.StringVar(&from, "from", "", "first UTC day (default: 7 days before today)")
	fs.StringVar(&to, "to", "", "UTC day the report ends before (default: tomorrow)")
	fs.StringVar(&o.Provider, "provider", "", "only openai or anthropic")
	fs.Float64Var(&o.TolerancePercent, "tolerance", reconcile.DefaultTolerancePercent, "drift accepted, in percent")
	fs.StringArrayVar(&keys, "key", nil, "reconcile per API key: the key ID a service calls a provider with (openai/checkout=key_abc)")
	fs.BoolVar(&check, "check", false, "exit with status 3 unless every cell is within tolerance")
	return cmd
}

// errDrift makes main exit with status 3.
var errDrift = exitError{code: 3, msg: "reconcile: some cells are not within tolerance"}

type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return e.msg }

func printReconcile(w io.Writer, rep reconcile.Report) {
	fmt.Fprintf(w, "ledger against provider reports, %s to %s (exclusive), tolerance %g%%\n\n", rep.From, rep.To, rep.TolerancePercent)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "day\tprovider\tmodel\t"
	if rep.ByKey {
		head += "key\t"
	}
	fmt.Fprintln(tw, head+"ledger calls\tprovider calls\tcalls drift\tinput drift\toutput drift\tcached drift\tstate\t")
	for _, c := range rep.Cells {
		row := c.Day + "\t" + c.Provider + "\t" + c.Model + "\t"
		if rep.ByKey {
			row += c.APIKeyID + "\t"
		}
		var prov *int64
		if c.Reported != nil {
			prov = c.Reported.Requests
		}
		d := c.Drift
		fmt.Fprintln(tw, row+strings.Join([]string{countText(c.Ledger.Requests), countText(prov), driftText(d.Requests),
			driftText(d.InputTokens), driftText(d.OutputTokens), driftText(d.CacheReadTokens), c.State}, "\t")+"\t")
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
	for _, s := range reconcile.States {
		if n := rep.States[s]; n > 0 {
			fmt.Fprintf(w, "%s: %d\n", s, n)
		}
	}
}

func countText(p *int64) string {
	if p == nil {
		return "not reported"
	}
	return fmt.Sprint(*p)
}

func driftText(p *float64) string {
	if p == nil {
		return "—"
	}
	return fmt.Sprintf("%+.2f%%", *p)
}
