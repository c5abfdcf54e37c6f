package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/replay"
	"github.com/docketlabs/docket/replay/distribution"
	"github.com/docketlabs/docket/replay/runs"
	"github.com/docketlabs/docket/ui/apiclient"
)

// replayServerOwned are the replay flags a running Docket decides itself:
// its runs replay one call, with its own providers and bounds.
var replayServerOwned = []struct{ flag, why string }{
	{"sample", "the server replays one call per run: pass it with --call or --trace"},
	{"tenant", "the server takes the call's tenant"},
	{"model", "the server replays one call per run"},
	{"from", "the server replays one call per run"},
	{"to", "the server replays one call per run"},
	{"seed", "the server replays one call per run"},
	{"concurrency", "the server bounds the requests in flight"},
	{"max-calls", "the server runs N replays at most; bound the run with --n and --max-cost-usd"},
	{"openai-api", "the server's ui config (replay.openai_api) chooses the API"},
	{"stream", "the server's ui config chooses how its providers answer"},
	{"sampled-tokens", "the server's ui config (replay.sampled_tokens) decides"},
	{"otlp-endpoint", "the server records the run in its own ledger"},
}

// replayPoll is how often the run's status is read.
const replayPoll = 500 * time.Millisecond

// replayRemote replays one call on a running Docket: it starts the run
// through the API, shows progress on stderr while it polls, cancels the
// server's run on an interrupt, and prints the result as the embedded
// mode does.
func replayRemote(cmd *cobra.Command, c *apiclient.Client, sel replay.Selection, opt replay.Options, asJSON bool) error {
	for _, o := range replayServerOwned {
		if f := cmd.Flag(o.flag); f != nil && f.Changed {
			return fmt.Errorf("--%s does not apply through a running docket: %s", o.flag, o.why)
		}
	}
	if len(sel.Calls) > 1 || (len(sel.Calls) == 1 && sel.TraceID != "") {
		return errors.New("replay: a running docket replays one call per run: give one --call TRACE_ID:SPAN_ID, or --trace of a trace with one call")
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stderr := cmd.ErrOrStderr()
	limits, err := c.ReplayLimits(ctx)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	if !limits.Enabled {
		return errors.New("replay: the running docket does not offer replay: enable the replay block of its ui config")
	}
	if opt.MaxCostUSD == "" {
		return fmt.Errorf("replay: --max-cost-usd is required through a running docket (at most %s there)", limits.MaxCostUSD)
	}
	call, err := remoteCall(ctx, c, sel)
	if err != nil {
		return err
	}
	st, err := c.StartReplay(ctx, apiclient.ReplayRequest{TraceID: call.TraceID, SpanID: call.SpanID, N: opt.N, MaxCostUSD: opt.MaxCostUSD, Reason: opt.Purpose})
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	fmt.Fprintf(stderr, "replay: run %s of call %s:%s started on the server (N=%d, budget %s USD, ends by %s)\n",
		st.ID, call.TraceID, call.SpanID, st.N, st.MaxCostUSD, st.Deadline.Format(time.RFC3339))
	st, err = followReplay(ctx, c, st, stderr)
	if err != nil {
		return err
	}
	if st.State != runs.StateDone {
		return fmt.Errorf("replay: the server's run %s %s: %s", st.ID, st.State, st.Error)
	}
	if asJSON {
		// The server sends no output text: its run status is the report.
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	return writeReplayText(cmd.OutOrStdout(), remoteReport(st, call, opt.Purpose))
}

// remoteCall is the selected call as the server's ledger has it.
func remoteCall(ctx context.Context, c *apiclient.Client, sel replay.Selection) (ledger.Call, error) {
	traceID, spanID := sel.TraceID, ""
	if len(sel.Calls) == 1 {
		traceID, spanID = sel.Calls[0].TraceID, sel.Calls[0].SpanID
	}
	if traceID == "" {
		return ledger.Call{}, errors.New("replay: give --trace or one --call through a running docket")
	}
	var ev struct {
		Calls []ledger.Call `json:"calls"`
	}
	if err := c.Get(ctx, "/api/v1/evidence/"+traceID, &ev); err != nil {
		return ledger.Call{}, fmt.Errorf("replay: %w", err)
	}
	if spanID == "" {
		if len(ev.Calls) != 1 {
			ids := make([]string, len(ev.Calls))
			for i, call := range ev.Calls {
				ids[i] = call.TraceID + ":" + call.SpanID
			}
			return ledger.Call{}, fmt.Errorf("replay: trace %s has %d calls and a running docket replays one per run: pick one with --call (%s)",
				traceID, len(ev.Calls), strings.Join(ids, ", "))
		}
		return ev.Calls[0], nil
	}
	for _, call := range ev.Calls {
		if call.SpanID == spanID {
			return call, nil
		}
	}
	return ledger.Call{}, fmt.Errorf("replay: no call %s:%s in your tenants", traceID, spanID)
}

// followReplay polls run st until it ends, telling its progress. On an
// interrupt, or when the status cannot be read, it cancels the server's
// run, so that nothing goes on paying unwatched.
func followReplay(ctx context.Context, c *apiclient.Client, st runs.Status, stderr io.Writer) (runs.Status, error) {
	t := time.NewTicker(replayPoll)
	defer t.Stop()
	var shown replay.Progress
	for {
		if st.Progress != shown {
			shown = st.Progress
			fmt.Fprintf(stderr, "replay: %d of %d replays done, %d failed\n", shown.Sent, shown.Planned, shown.Failed)
		}
		if st.State != runs.StateRunning {
			return st, nil
		}
		var err error
		select {
		case <-ctx.Done():
			err = fmt.Errorf("interrupted: %w", ctx.Err())
		case <-t.C:
			var next runs.Status
			if next, err = c.Replay(ctx, st.ID); err == nil {
				st = next
				continue
			}
		}
		return st, errors.Join(fmt.Errorf("replay: %w", err), cancelReplay(ctx, c, st.ID, stderr))
	}
}

// cancelReplay cancels run id and waits a little for it to record what it
// did.
func cancelReplay(ctx context.Context, c *apiclient.Client, id string, stderr io.Writer) error {
	ctx, done := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer done()
	fmt.Fprintf(stderr, "replay: cancelling run %s on the server\n", id)
	st, err := c.CancelReplay(ctx, id)
	for err == nil && st.State == runs.StateRunning {
		select {
		case <-ctx.Done():
			return fmt.Errorf("replay: run %s is still running on the server after its cancellation", id)
		case <-time.After(replayPoll):
		}
		st, err = c.Replay(ctx, id)
	}
	if err != nil {
		return fmt.Errorf("replay: cancel run %s on the server: %w", id, err)
	}
	fmt.Fprintf(stderr, "replay: run %s %s on the server after %d of %d replays; those are recorded\n", id, st.State, st.Progress.Sent, st.Progress.Planned)
	return nil
}

// remoteReport is the server's run as the embedded mode reports one. The
// server sends its summary of the distribution, without output text, so
// the report has no most common alternative.
func remoteReport(st runs.Status, call ledger.Call, purpose string) replay.Report {
	rep := replay.Report{RunID: st.Progress.RunID, Selection: replay.Selection{Calls: []replay.CallID{{TraceID: st.TraceID, SpanID: st.SpanID}}}.String(),
		Actor: st.Actor, Purpose: purpose, StartedAt: st.StartedAt, N: st.N}
	s := st.Result
	if s == nil {
		return rep
	}
	res := replay.Result{Tenant: call.Tenant, TraceID: st.TraceID, SpanID: st.SpanID, Provider: call.Provider, ResponseModel: call.ResponseModel, Outcome: s.Outcome}
	if s.ExactMatchRate != nil {
		d := &distribution.Report{ExactMatchRate: *s.ExactMatchRate, Variants: []distribution.Variant{}, Tokenizer: s.Tokenizer, TokenNote: s.TokenNote}
		for _, v := range s.Variants {
			d.N += v.Count
			if v.Matches {
				d.ExactMatches += v.Count
			}
			d.Variants = append(d.Variants, distribution.Variant{Count: v.Count, Matches: v.Matches, Divergence: v.Divergence})
		}
		res.Distribution = d
	}
	rep.Replays, rep.Requests = res.Completed+res.Failed, res.Requests
	rep.Results = []replay.Result{res}
	return rep
}
