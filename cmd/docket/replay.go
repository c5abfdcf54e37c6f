package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"

	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/pricing"
	"github.com/docketlabs/docket/replay"
	"github.com/docketlabs/docket/replay/providers"
	"github.com/docketlabs/docket/replay/retirement"
)

func replayCommand() *cobra.Command {
	var local localFlags
	var remote remoteFlags
	var traceID, openaiAPI, otlpEndpoint string
	var callIDs []string
	var sample sampleFlags
	var asJSON, stream, sampledTokens bool
	opt := replay.Options{}
	cmd := &cobra.Command{
		Use:   "replay (--trace TRACE_ID | --call TRACE_ID:SPAN_ID... | --sample N --tenant T --from T --to T) --purpose TEXT [--n 20] [--json]",
		Short: "Send recorded calls again N times and report how often the original output comes back (from the local data, or a running Docket with --server)",
		Long: `Sends the stored input of each selected LLM call N times to the model
snapshot that originally answered, with the recorded parameters, and reports
the distribution of outputs against the original. The calls are those of one
trace (--trace), named ones (--call, repeatable), or a random sample of a
tenant's calls in a time range, optionally of one model (--sample with
--tenant, --from, --to, --model, --seed). Stored content is read through the
audited path with --purpose as the reason. Retired snapshots are not called.
Provider endpoints and keys come from OPENAI_BASE_URL, OPENAI_API_KEY,
ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY.

With --server (or a data directory a running Docket holds, and a token)
the run is one call's, started on that Docket with its providers and
bounds: --max-cost-usd is required there, and the flags it decides itself
are refused. Ctrl-C cancels the server's run.`,
		Args: cobra.NoArgs,
		// A denied read or an unreachable provider is not a usage mistake.
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sel, err := selection(traceID, callIDs, sample)
			if err != nil {
				return err
			}
			client, err := remote.client(&local, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if client != nil {
				return replayRemote(cmd, client, sel, opt, asJSON)
			}
			clients, err := replay.ClientsFromEnv(providers.API(openaiAPI), stream, os.Getenv)
			if err != nil {
				return fmt.Errorf("replay: %w", err)
			}
			lc, err := retirement.Default()
			if err != nil {
				return fmt.Errorf("replay: %w", err)
			}
			prices, err := pricing.Default()
			if err != nil {
				return fmt.Errorf("replay: %w", err)
			}
			ctx := cmd.Context()
			d, err := local.open(ctx)
			if err != nil {
				return err
			}
			defer d.close()
			r := &replay.Runner{Ledger: d.ledger, Reader: &access.Reader{Content: d.content, Ledger: d.ledger}, Retirements: lc, Clients: clients, Prices: prices,
				SampledTokens: sampledTokens}
			if otlpEndpoint != "" {
				exp, exporterErr := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(otlpEndpoint), otlptracegrpc.WithInsecure())
				if exporterErr != nil {
					return fmt.Errorf("replay: otlp exporter: %w", exporterErr)
				}
				r.Tracing = replay.NewTracing(exp)
			}
			rep, err := r.Replay(ctx, d.operator, sel, opt)
			if r.Tracing != nil {
				flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
				defer cancel()
				if ferr := r.Tracing.Shutdown(flushCtx); ferr != nil {
					err = errors.Join(err, fmt.Errorf("replay: send the replay spans (their ledger rows are written): %w", ferr))
				}
			}
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			return writeReplayText(cmd.OutOrStdout(), rep)
		},
	}
	local.register(cmd.Flags())
	remote.register(cmd.Flags())
	f := cmd.Flags()
	f.StringVar(&traceID, "trace", "", "trace ID (complaint ID) whose calls are replayed")
	f.StringArrayVar(&callIDs, "call", nil, "a call to replay, TRACE_ID:SPAN_ID (repeatable)")
	f.IntVar(&sample.size, "sample", 0, "replay a random sample of this many calls (with --tenant, --from, --to)")
	f.StringVar(&sample.tenant, "tenant", "", "tenant of the sample")
	f.StringVar(&sample.model, "model", "", "only calls of this response or request model in the sample")
	f.StringVar(&sample.from, "from", "", "sample calls that started at or after this time (RFC 3339 or a date)")
	f.StringVar(&sample.to, "to", "", "sample calls that started before this time (RFC 3339 or a date)")
	f.Uint64Var(&sample.seed, "seed", 1, "seed of the sample: the same seed draws the same calls")
	f.StringVar(&opt.Purpose, "purpose", "", "why the run reads stored content; recorded in the access log (required)")
	f.IntVar(&opt.N, "n", replay.DefaultN, "replays per call")
	f.IntVar(&opt.Concurrency, "concurrency", 4, "requests in flight at most")
	f.IntVar(&opt.MaxCalls, "max-calls", 0, "stop after this many replays in the run (0: no cap)")
	f.StringVar(&opt.MaxCostUSD, "max-cost-usd", "", "stop before the estimated cost of the run exceeds this many USD (empty: no cap)")
	f.StringVar(&openaiAPI, "openai-api", string(providers.ChatCompletions), "API for OpenAI calls: openai.chat_completions or openai.responses")
	f.BoolVar(&stream, "stream", false, "ask providers for streamed answers")
	f.BoolVar(&sampledTokens, "sampled-tokens", false, "ask OpenAI Chat Completions for the sampled tokens (logprobs) and count divergence in them")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON (it contains output text; with --server, the server's run status, which does not)")
	f.StringVar(&otlpEndpoint, "otlp-endpoint", "", "also send each replay as a span over OTLP/gRPC (plaintext) to this host:port, e.g. a collector; tenant in resource attribute "+replay.TenantAttribute)
	return cmd
}

type sampleFlags struct {
	size          int
	tenant, model string
	from, to      string
	seed          uint64
}

// selection reads the one selection the flags make.
func selection(traceID string, callIDs []string, sf sampleFlags) (replay.Selection, error) {
	sel := replay.Selection{TraceID: traceID}
	for _, s := range callIDs {
		id, err := replay.ParseCallID(s)
		if err != nil {
			return sel, err
		}
		sel.Calls = append(sel.Calls, id)
	}
	if sf.size == 0 {
		return sel, nil
	}
	from, err := parseInstant("--from", sf.from)
	if err != nil {
		return sel, err
	}
	to, err := parseInstant("--to", sf.to)
	if err != nil {
		return sel, err
	}
	sel.Sample = &replay.Sample{Tenant: sf.tenant, Model: sf.model, From: from, To: to, Size: sf.size, Seed: sf.seed}
	return sel, nil
}

func writeReplayText(w io.Writer, rep replay.Report) error {
	ew := &errWriter{w: w}
	ew.printf("replay run %s of %s: N=%d, %d replays, %d requests\n", rep.RunID, rep.Selection, rep.N, rep.Replays, rep.Requests)
	for _, res := range rep.Results {
		ew.printf("\ncall %s:%s  %s %s  %s\n", res.TraceID, res.SpanID, res.Provider, res.ResponseModel, res.Status)
		if res.Reason != "" {
			ew.printf("  %s\n", res.Reason)
		}
		if res.Lifecycle != "" && res.Status != replay.StatusIrreproducible {
			ew.printf("  lifecycle: %s\n", res.Lifecycle)
		}
		if d := res.Distribution; d != nil {
			ew.printf("  exact match: %d/%d (%.0f%%)  distinct outputs: %d  estimated cost per replay: %s\n",
				d.ExactMatches, d.N, 100*d.ExactMatchRate, len(d.Variants), res.EstimatedCostPerReplay)
			if alt := d.MostCommonAlternative; alt != nil {
				ew.printf("  most common alternative (%d×) at character %d: %s\n", alt.Count, alt.At, alt.String())
			}
			for _, v := range d.Variants {
				if v.Divergence != nil {
					ew.printf("  first divergence of a %d× output: %s\n", v.Count, v.Divergence)
				}
			}
			if d.TokenNote != "" {
				ew.printf("  %s\n", d.TokenNote)
			}
		}
		if res.Failed > 0 {
			ew.printf("  %d replays failed; first error: %s\n", res.Failed, res.FirstError)
		}
		for _, ch := range res.ParamChanges {
			ew.printf("  parameter %s %s: %s\n", ch.Param, ch.Action, ch.Reason)
		}
	}
	return ew.err
}

// errWriter keeps the first write error, so a report is written without a
// check after every line.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
