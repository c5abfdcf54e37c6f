// Package replay runs a distribution replay: each LLM call of a trace is
// sent again N times to the snapshot that originally answered, with the
// recorded input and sampling parameters, and the outputs are compared with
// the original. The building blocks live in the sub-packages (retirement,
// providers, genai, distribution); this package puts them together under
// the ledger's access rules and a budget, and records every result.
package replay

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/trace"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/pricing"
	"github.com/docketlabs/docket/replay/distribution"
	"github.com/docketlabs/docket/replay/genai"
	"github.com/docketlabs/docket/replay/providers"
	"github.com/docketlabs/docket/replay/retirement"
	"github.com/docketlabs/docket/replay/tokenizer"
)

// Options tune one replay run.
type Options struct {
	// N is how many times each call is sent again. 0 means 20.
	N int
	// Purpose is why the run reads stored content; it is the reason given
	// for every reveal and is put on record. Required.
	Purpose string
	// Concurrency bounds the requests in flight. 0 means 4.
	Concurrency int
	// MaxCalls caps the replays of the whole run; 0 means no cap. A replay
	// is one Send: its retries and the resend after a rejected parameter
	// are part of it.
	MaxCalls int
	// MaxCostUSD caps the estimated cost of the run, as a decimal number of
	// USD ("0.50"); empty means no cap. Each replay is estimated at the
	// cost of the original call (its recorded usage at today's price), so a
	// call whose cost is unknown is not replayed under a cost cap.
	MaxCostUSD string
	// Now is the clock for lifecycle checks, prices and records. Nil means
	// time.Now.
	Now func() time.Time
	// Progress, if set, is called when the run starts and after each
	// replay is recorded and each call is done; calls do not overlap.
	Progress func(Progress)
}

// Progress is how far a run is.
type Progress struct {
	RunID string `json:"run_id"`
	// Calls selected and done.
	Calls     int `json:"calls"`
	CallsDone int `json:"calls_done"`
	// Planned is N per selected call; Sent counts replays recorded (Failed
	// of them failed). A budget or an irreproducible call ends below Planned.
	Planned int `json:"planned"`
	Sent    int `json:"sent"`
	Failed  int `json:"failed"`
}

type progress struct {
	mu sync.Mutex
	fn func(Progress)
	Progress
}

func (p *progress) update(f func(*Progress)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(&p.Progress)
	if p.fn != nil {
		p.fn(p.Progress)
	}
}

func (p *progress) report()   { p.update(func(*Progress) {}) }
func (p *progress) callDone() { p.update(func(q *Progress) { q.CallsDone++ }) }

// DefaultN is the number of replays per call when Options.N is 0.
const DefaultN = 20

// MaxN bounds Options.N.
const MaxN = 10000

// Runner replays calls recorded in the ledger.
type Runner struct {
	Ledger *ledgerstore.Store
	// Reader is the only way stored content is read; the run's principal
	// and purpose are checked and recorded for every read.
	Reader *access.Reader
	// Retirements says which snapshots are retired. Nil means no snapshot is
	// known to be retired.
	Retirements *retirement.Table
	// Clients by gen_ai.provider.name ("openai", "anthropic").
	Clients map[string]*providers.Client
	// Prices estimate the cost of a replay; nil means unknown.
	Prices *pricing.Table
	// Tracing, if set, also sends each replay as an OTLP span.
	Tracing *Tracing
	// SampledTokens asks providers for the tokens they sample (OpenAI Chat
	// Completions logprobs); where they are sent, divergence in tokens is
	// counted in them rather than in the tokenizer's split.
	SampledTokens bool
}

// Result statuses.
const (
	// StatusReplayed: the call was sent again; see the distribution.
	StatusReplayed = "replayed"
	// StatusIrreproducible: the call cannot be replayed (retired snapshot,
	// content not retained or not in GenAI form); nothing was sent. The
	// reason starts with "irreproducible: ".
	StatusIrreproducible = "irreproducible"
	// StatusBudgetExhausted: the budget ran out before N replays; the
	// distribution covers those that were done.
	StatusBudgetExhausted = "budget_exhausted"
	// StatusSkipped: the call was not replayed for a reason of this run
	// (no client for its provider).
	StatusSkipped = "skipped"
	// StatusFailed: the first replay failed (after retries), so no more
	// were sent.
	StatusFailed = "failed"
	// StatusInterrupted: the run was cancelled or ran out of time while
	// this call was replayed; the distribution covers the replays done.
	StatusInterrupted = "interrupted"
)

// Report is the outcome of a run. It contains output text (in the
// distributions): it goes only to the principal who was allowed to reveal
// it.
type Report struct {
	RunID string `json:"run_id"`
	// TraceID is the replayed trace when the selection was one.
	TraceID string `json:"trace_id,omitempty"`
	// Selection says which calls the run replayed.
	Selection string    `json:"selection"`
	Actor     string    `json:"actor"`
	Purpose   string    `json:"purpose"`
	StartedAt time.Time `json:"started_at"`
	N         int       `json:"n"`
	// Replays counts Sends made in the run; Requests counts HTTP requests
	// (retries and resends included).
	Replays  int      `json:"replays"`
	Requests int      `json:"requests"`
	Results  []Result `json:"results"`
}

// Outcome is how the replays of one call went, in words and counts without
// content; the ledger keeps it with the distribution's summary.
type Outcome struct {
	Status string `json:"status"`
	// Reason explains a status other than replayed, in words without content.
	Reason string `json:"reason,omitempty"`
	// Lifecycle is the snapshot's state when it is not simply active:
	// "announced, retires on 2026-11-30".
	Lifecycle string `json:"lifecycle,omitempty"`
	Requested int    `json:"requested"`
	Completed int    `json:"completed"`
	Failed    int    `json:"failed"`
	Requests  int    `json:"requests"`
	// FirstError is the first failure of a replay (errors carry no content).
	FirstError   string                  `json:"first_error,omitempty"`
	ParamChanges []providers.ParamChange `json:"param_changes,omitempty"`
	// EstimatedCostPerReplay is the original call's cost at today's price,
	// "—" when unknown.
	EstimatedCostPerReplay string `json:"estimated_cost_per_replay"`
}

// Result is the replay of one call.
type Result struct {
	Tenant        string `json:"tenant"`
	TraceID       string `json:"trace_id"`
	SpanID        string `json:"span_id"`
	Provider      string `json:"provider"`
	ResponseModel string `json:"response_model"`
	Outcome
	Distribution *distribution.Report `json:"distribution,omitempty"`
}

// ReplayTrace replays every call of a trace on behalf of p.
func (r *Runner) ReplayTrace(ctx context.Context, p access.Principal, traceID string, opt Options) (Report, error) {
	return r.Replay(ctx, p, Selection{TraceID: traceID}, opt)
}

// Replay replays the selected calls on behalf of p. A reveal the access
// rules refuse ends the run with an error wrapping access.ErrDenied; the
// refusal is on record in the access log.
func (r *Runner) Replay(ctx context.Context, p access.Principal, sel Selection, opt Options) (Report, error) {
	opt, maxCost, err := opt.normalize()
	if err != nil {
		return Report{}, err
	}
	if err = sel.validate(); err != nil {
		return Report{}, err
	}
	calls, err := r.selectCalls(ctx, p, sel)
	if err != nil {
		return Report{}, err
	}
	runID, err := newRunID()
	if err != nil {
		return Report{}, err
	}
	if r.Tracing != nil {
		var run trace.Span
		ctx, run = r.Tracing.startRun(ctx, sel)
		defer run.End()
		runID = run.SpanContext().TraceID().String()
	}
	rep := Report{RunID: runID, TraceID: sel.TraceID, Selection: sel.String(), Actor: p.User, Purpose: opt.Purpose,
		StartedAt: opt.Now().UTC(), N: opt.N}
	b := &budget{maxCalls: opt.MaxCalls, maxCost: maxCost}
	if err := r.authorize(ctx, p, runID, calls, opt); err != nil {
		return Report{}, err
	}
	prog := &progress{fn: opt.Progress, Progress: Progress{RunID: runID, Calls: len(calls), Planned: len(calls) * opt.N}}
	prog.report()
	for _, c := range calls {
		res, err := r.replayCall(ctx, p, runID, c, opt, b, prog)
		if err == nil && ctx.Err() != nil {
			// Cancelled or out of time: what was sent is kept and the
			// call's result says it was cut short.
			err = ctx.Err()
			res.Status = StatusInterrupted
			res.Reason = fmt.Sprintf("the run was cancelled or ran out of time after %d of %d replays", res.Completed+res.Failed, opt.N)
		}
		if res.Status != "" {
			rep.Replays += res.Completed + res.Failed
			rep.Requests += res.Requests
			rep.Results = append(rep.Results, res)
			// Recorded as each call finishes, whatever ends the run later;
			// a cancelled run's own context can no longer write.
			if rerr := r.record(context.WithoutCancel(ctx), rep.RunID, rep.StartedAt, rep.Actor, rep.Purpose, res); rerr != nil {
				err = errors.Join(err, rerr)
			}
		}
		prog.callDone()
		if err != nil {
			return rep, fmt.Errorf("replay: %w", err)
		}
	}
	return rep, nil
}

// ActionReplay is the access-log action of a replay run, one entry per
// trace replayed, written before anything is sent.
const ActionReplay = "replay"

// authorize records the run in the access log, per tenant and trace of the
// selected calls, with the purpose as reason, and refuses a principal who
// may not read the content a replay sends.
func (r *Runner) authorize(ctx context.Context, p access.Principal, runID string, calls []ledger.Call, opt Options) error {
	seen := map[[2]string]bool{}
	for _, c := range calls {
		key := [2]string{c.Tenant, c.TraceID}
		if seen[key] {
			continue
		}
		seen[key] = true
		eventID, err := newRunID()
		if err != nil {
			return err
		}
		e := ledgerstore.AccessEntry{EventID: eventID, At: opt.Now().UTC(), Actor: p.User, Role: string(p.Role),
			Action: ActionReplay, Tenant: c.Tenant, TraceID: c.TraceID, Reason: opt.Purpose, Outcome: access.OutcomeAllowed,
			Detail: fmt.Sprintf("run=%s n=%d max_calls=%d max_cost_usd=%s", runID, opt.N, opt.MaxCalls, opt.MaxCostUSD)}
		var denied error
		if !p.CanReveal() {
			e.Outcome, e.Detail = access.OutcomeDenied, access.DetailRole
			denied = fmt.Errorf("replay: %w: role %q may not replay calls: a replay sends their stored content", access.ErrDenied, p.Role)
		}
		if err := r.Ledger.InsertAccess(ctx, e); err != nil {
			return fmt.Errorf("replay: record the run in the access log (nothing sent): %w", err)
		}
		if denied != nil {
			return denied
		}
	}
	return nil
}

func (o Options) normalize() (Options, *pricing.PicoUSD, error) {
	o.Purpose = strings.TrimSpace(o.Purpose)
	if o.Purpose == "" {
		return o, nil, errors.New("replay: a purpose is required: it is the reason recorded for reading stored content")
	}
	if len(o.Purpose) > access.MaxReasonLen || !utf8.ValidString(o.Purpose) {
		return o, nil, fmt.Errorf("replay: the purpose must be UTF-8 text of at most %d bytes", access.MaxReasonLen)
	}
	if o.N == 0 {
		o.N = DefaultN
	}
	if o.Concurrency == 0 {
		o.Concurrency = 4
	}
	if o.N < 0 || o.N > MaxN || o.Concurrency < 0 || o.MaxCalls < 0 {
		return o, nil, fmt.Errorf("replay: N must be 1 to %d; concurrency and the call cap must not be negative", MaxN)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxCostUSD == "" {
		return o, nil, nil
	}
	c, err := ParseUSD(o.MaxCostUSD)
	if err != nil {
		return o, nil, err
	}
	return o, &c, nil
}

// ParseUSD reads a non-negative decimal amount of USD, exactly.
func ParseUSD(s string) (pricing.PicoUSD, error) {
	if len(s) > 32 {
		return 0, errors.New("replay: cost cap is too long")
	}
	v, ok := new(big.Rat).SetString(s)
	if !ok || v.Sign() < 0 || strings.ContainsAny(s, "/eE") {
		return 0, errors.New("replay: cost cap must be a non-negative decimal number of USD, e.g. 0.50")
	}
	v.Mul(v, big.NewRat(1_000_000_000_000, 1))
	if !v.IsInt() || v.Num().Cmp(big.NewInt(int64(pricing.MaxCost))) > 0 {
		return 0, errors.New("replay: cost cap must have at most 12 fractional digits and be below 1,000,000 USD")
	}
	return pricing.PicoUSD(v.Num().Int64()), nil
}

func (r *Runner) replayCall(ctx context.Context, p access.Principal, runID string, c ledger.Call, opt Options, b *budget, prog *progress) (Result, error) {
	res := Result{Tenant: c.Tenant, TraceID: c.TraceID, SpanID: c.SpanID, Provider: c.Provider, ResponseModel: c.ResponseModel,
		Outcome: Outcome{Requested: opt.N, EstimatedCostPerReplay: "—"}}
	now := opt.Now()
	if r.Retirements != nil {
		switch st := r.Retirements.Status(c.Provider, c.ResponseModel, now); st.State {
		case retirement.Retired:
			res.Status, res.Reason, res.Lifecycle = StatusIrreproducible, "irreproducible: model "+st.String(), st.String()
			return res, nil
		case retirement.Announced:
			res.Lifecycle = st.String()
		}
	}
	client := r.Clients[c.Provider]
	if client == nil {
		res.Status, res.Reason = StatusSkipped, fmt.Sprintf("no client configured for provider %q", label(c.Provider))
		return res, nil
	}
	req, missing, err := r.request(ctx, p, c, opt.Purpose)
	if err != nil {
		return res, err
	}
	if missing != "" {
		res.Status, res.Reason = StatusIrreproducible, missing
		return res, nil
	}
	original, missing, err := r.original(ctx, p, c, opt.Purpose)
	if err != nil {
		return res, err
	}
	if missing != "" {
		res.Status, res.Reason = StatusIrreproducible, missing
		return res, nil
	}

	var estimate *pricing.PicoUSD
	costStatus := pricing.StatusUnknownModel
	if r.Prices != nil {
		cost := r.Prices.Cost(c.Provider, c.ResponseModel, c.Operation, now,
			pricing.Usage{Input: c.InputTokens, Output: c.OutputTokens, CacheRead: c.CacheReadTokens, CacheWrite: c.CacheWriteTokens, Reasoning: c.ReasoningTokens})
		estimate, costStatus = cost.USD, cost.Status
		res.EstimatedCostPerReplay = cost.Display()
	}
	if b.maxCost != nil && estimate == nil {
		res.Status = StatusBudgetExhausted
		res.Reason = fmt.Sprintf("a cost cap is set and the cost of a replay cannot be estimated (%s)", costStatus)
		return res, nil
	}

	// Each replay is paid for when it is sent, so its row is written as soon
	// as it is back: an error later in the run loses none. A row that
	// cannot be written stops the run.
	sendCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var writeErr error
	record := func(req providers.Request, out providers.Result, err error, start, end time.Time) {
		row := replayCall(runID, c, req, out, err, start, end, r.Prices)
		if r.Tracing != nil {
			r.Tracing.emit(ctx, &row, err)
		}
		if werr := r.Ledger.InsertCalls(context.WithoutCancel(ctx), []ledger.Call{row}); werr != nil && writeErr == nil {
			writeErr = fmt.Errorf("write a replay call to the ledger: %w", werr)
			stop(writeErr)
		}
		prog.update(func(q *Progress) {
			q.Sent++
			if err != nil {
				q.Failed++
			}
		})
	}
	req.Logprobs = r.SampledTokens
	outputs, sampled, exhausted := r.sendN(sendCtx, client, req, opt, b, estimate, &res, record)
	if writeErr != nil {
		return res, writeErr
	}
	res.Completed = len(outputs)
	switch {
	case exhausted:
		res.Status = StatusBudgetExhausted
		res.Reason = fmt.Sprintf("budget exhausted after %d of %d replays", res.Completed+res.Failed, opt.N)
	case res.Completed == 0:
		res.Status, res.Reason = StatusFailed, "the first replay failed; no more were sent"
	default:
		res.Status = StatusReplayed
	}
	if res.Completed > 0 {
		tok, note := tokenizer.For(c.Provider, c.ResponseModel)
		d := distribution.Analyze(original, outputs, distribution.Options{Tokenizer: tok, NoTokenizer: note, Sampled: sampled})
		res.Distribution = &d
	}
	return res, nil
}

// request builds the request from the stored input, system instructions
// and tool definitions. missing says why the call cannot be replayed.
func (r *Runner) request(ctx context.Context, p access.Principal, c ledger.Call, purpose string) (req providers.Request, missing string, err error) {
	req = providers.Request{Model: c.ResponseModel, Params: providers.Params{Temperature: c.Temperature, TopP: c.TopP, TopK: c.TopK,
		MaxTokens: c.MaxTokens, Seed: c.Seed, StopSequences: c.StopSequences}}
	if req.Model == "" {
		return req, "irreproducible: the response model was not recorded", nil
	}
	raw, missing, err := r.reveal(ctx, p, c, c.InputRef, "input", purpose)
	if err != nil || missing != "" {
		return req, missing, err
	}
	if req.Messages, err = genai.ParseMessages(raw); err != nil {
		return req, "irreproducible: stored input is not in the GenAI message format", nil
	}
	if c.SystemInstructionsRef != "" {
		raw, missing, err := r.reveal(ctx, p, c, c.SystemInstructionsRef, "system instructions", purpose)
		if err != nil || missing != "" {
			return req, missing, err
		}
		if req.System, err = genai.ParseParts(raw); err != nil {
			return req, "irreproducible: stored system instructions are not in the GenAI format", nil
		}
	}
	if c.ToolDefinitionsRef != "" {
		raw, missing, err := r.reveal(ctx, p, c, c.ToolDefinitionsRef, "tool definitions", purpose)
		if err != nil || missing != "" {
			return req, missing, err
		}
		if req.Tools, err = genai.ParseToolDefinitions(raw); err != nil {
			return req, "irreproducible: stored tool definitions are not in the GenAI format", nil
		}
	}
	return req, "", nil
}

// original returns the text of the first recorded output message.
func (r *Runner) original(ctx context.Context, p access.Principal, c ledger.Call, purpose string) (text, missing string, err error) {
	raw, missing, err := r.reveal(ctx, p, c, c.OutputRef, "original output", purpose)
	if err != nil || missing != "" {
		return "", missing, err
	}
	msgs, err := genai.ParseMessages(raw)
	if err != nil {
		return "", "irreproducible: stored original output is not in the GenAI message format", nil
	}
	return msgs[0].Text(), "", nil
}

// reveal reads one stored object through the access rules. Content that
// was never stored or is gone gives a reason, not an error.
func (r *Runner) reveal(ctx context.Context, p access.Principal, c ledger.Call, ref, what, purpose string) ([]byte, string, error) {
	if ref == "" {
		status := c.ContentStatus
		if status == "" {
			status = "content status not recorded"
		}
		return nil, fmt.Sprintf("irreproducible: %s not retained (%s)", what, label(status)), nil
	}
	b, err := r.Reader.Reveal(ctx, p, access.RevealRequest{Tenant: c.Tenant, TraceID: c.TraceID, Ref: ref, Reason: purpose})
	switch {
	case errors.Is(err, contentstore.ErrNotFound):
		return nil, fmt.Sprintf("irreproducible: %s not retained (deleted from the content store)", what), nil
	case err != nil:
		return nil, "", fmt.Errorf("read %s of span %s: %w", what, label(c.SpanID), err)
	}
	return b, "", nil
}

// sendN sends req up to opt.N times, within the budget; record is called,
// under the lock, for every replay sent. The first replay goes alone: a
// parameter the provider rejects is then left out of the others instead
// of being rejected again by each, and if it fails, the others are not
// sent.
func (r *Runner) sendN(ctx context.Context, client *providers.Client, req providers.Request, opt Options, b *budget, estimate *pricing.PicoUSD, res *Result,
	record func(providers.Request, providers.Result, error, time.Time, time.Time)) (outputs []string, sampled [][]string, exhausted bool) {
	texts := make([]string, opt.N)
	tokens := make([][]string, opt.N)
	done := make([]bool, opt.N)
	var mu sync.Mutex
	send := func(i int, req providers.Request) providers.Result {
		start := time.Now()
		out, err := client.Send(ctx, req)
		end := time.Now()
		mu.Lock()
		defer mu.Unlock()
		record(req, out, err, start, end)
		res.Requests += out.Attempts
		res.ParamChanges = mergeChanges(res.ParamChanges, out.ParamChanges)
		if err != nil {
			res.Failed++
			if res.FirstError == "" {
				res.FirstError = err.Error()
			}
			return out
		}
		texts[i], tokens[i], done[i] = out.Text(), out.Tokens, true
		return out
	}

	if !b.take(estimate) {
		return nil, nil, true
	}
	first := send(0, req)
	if !done[0] {
		// Retries are behind it: the others would fail the same way.
		return nil, nil, false
	}
	for _, ch := range first.ParamChanges {
		if ch.Action == providers.ChangeDropped {
			req.Params = withoutParam(req.Params, ch.Param)
		}
	}
	sem := make(chan struct{}, max(opt.Concurrency, 1))
	var wg sync.WaitGroup
loop:
	for i := 1; i < opt.N; i++ {
		if !b.take(estimate) {
			exhausted = true
			break
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			b.give(estimate)
			break loop
		}
		wg.Go(func() {
			defer func() { <-sem }()
			send(i, req)
		})
	}
	wg.Wait()
	for i, ok := range done {
		if ok {
			outputs, sampled = append(outputs, texts[i]), append(sampled, tokens[i])
		}
	}
	return outputs, sampled, exhausted
}

func withoutParam(p providers.Params, name string) providers.Params {
	switch name {
	case providers.ParamTemperature:
		p.Temperature = nil
	case providers.ParamTopP:
		p.TopP = nil
	case providers.ParamTopK:
		p.TopK = nil
	case providers.ParamMaxTokens:
		p.MaxTokens = nil
	case providers.ParamSeed:
		p.Seed = nil
	case providers.ParamStopSequences:
		p.StopSequences = nil
	}
	return p
}

// mergeChanges adds the changes not listed yet (by parameter and action).
func mergeChanges(have, add []providers.ParamChange) []providers.ParamChange {
	for _, ch := range add {
		seen := false
		for _, h := range have {
			if h.Param == ch.Param && h.Action == ch.Action {
				seen = true
				break
			}
		}
		if !seen {
			have = append(have, ch)
		}
	}
	return have
}

// budget is shared by the replays of a run: a replay is taken from it
// before it is sent, so concurrent replays never exceed it.
type budget struct {
	mu       sync.Mutex
	maxCalls int              // 0: no cap
	maxCost  *pricing.PicoUSD // nil: no cap
	calls    int
	cost     pricing.PicoUSD
}

func (b *budget) take(estimate *pricing.PicoUSD) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.maxCalls > 0 && b.calls >= b.maxCalls {
		return false
	}
	if b.maxCost != nil {
		if estimate == nil || *estimate > *b.maxCost-b.cost {
			return false
		}
		b.cost += *estimate
	}
	b.calls++
	return true
}

// give returns a replay that was taken but not sent.
func (b *budget) give(estimate *pricing.PicoUSD) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls--
	if b.maxCost != nil && estimate != nil {
		b.cost -= *estimate
	}
}

func newRunID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("replay: run ID: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// label returns s for a message if it looks like an identifier, so that
// a stored value that is not one never reaches a report or an error.
func label(s string) string {
	if s == "" || len(s) > 64 {
		return "unknown"
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-:/", r)) {
			return "unknown"
		}
	}
	return s
}
