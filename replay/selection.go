package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/access"
)

// Selection names the calls of a run: exactly one of a trace, a list of
// calls, or a random sample.
type Selection struct {
	// TraceID selects every call of one trace (one complaint).
	TraceID string `json:"trace_id,omitempty"`
	// Calls selects calls by their IDs.
	Calls []CallID `json:"calls,omitempty"`
	// Sample selects a random sample.
	Sample *Sample `json:"sample,omitempty"`
}

// CallID names one ledger call by its trace and span.
type CallID struct {
	TraceID string `json:"trace_id"`
	SpanID  string `json:"span_id"`
}

// Sample is a random sample of one tenant's calls.
type Sample struct {
	Tenant string `json:"tenant"`
	// Model, if set, keeps calls whose response or request model it is.
	Model string `json:"model,omitempty"`
	// From and To bound the calls' start times: [From, To).
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// Size is how many calls at most.
	Size int `json:"size"`
	// Seed makes the sample repeatable: the same seed, the same calls.
	Seed uint64 `json:"seed"`
}

// MaxSelected bounds the calls of one run.
const MaxSelected = 1000

var spanIDPattern = regexp.MustCompile(`^[0-9a-f]{16}$`)

// ParseCallID reads TRACE_ID:SPAN_ID, as the UI shows a call.
func ParseCallID(s string) (CallID, error) {
	trace, span, ok := strings.Cut(strings.ToLower(strings.TrimSpace(s)), ":")
	if !ok || !ledger.ValidTraceID(trace) || !spanIDPattern.MatchString(span) {
		return CallID{}, errors.New("replay: a call ID is TRACE_ID:SPAN_ID (32 and 16 hex digits)")
	}
	return CallID{TraceID: trace, SpanID: span}, nil
}

func (s Selection) validate() error {
	set := 0
	if s.TraceID != "" {
		set++
		if !ledger.ValidTraceID(s.TraceID) {
			return errors.New("replay: trace ID must be 32 lower-case hex digits")
		}
	}
	if len(s.Calls) > 0 {
		set++
		if len(s.Calls) > MaxSelected {
			return fmt.Errorf("replay: at most %d calls a run", MaxSelected)
		}
		for _, c := range s.Calls {
			if !ledger.ValidTraceID(c.TraceID) || !spanIDPattern.MatchString(c.SpanID) {
				return errors.New("replay: a call ID is a 32-hex trace ID and a 16-hex span ID")
			}
		}
	}
	if s.Sample != nil {
		set++
		sm := s.Sample
		switch {
		case sm.Tenant == "":
			return errors.New("replay: a sample needs a tenant")
		case sm.Size < 1 || sm.Size > MaxSelected:
			return fmt.Errorf("replay: a sample has 1 to %d calls", MaxSelected)
		case sm.From.IsZero() || sm.To.IsZero() || !sm.From.Before(sm.To):
			return errors.New("replay: a sample needs a time range with from before to")
		}
	}
	if set != 1 {
		return errors.New("replay: select exactly one of a trace, call IDs or a sample")
	}
	return nil
}

// String describes the selection for reports, without content.
func (s Selection) String() string {
	switch {
	case s.TraceID != "":
		return "trace " + s.TraceID
	case len(s.Calls) > 0:
		return fmt.Sprintf("%d calls by ID", len(s.Calls))
	case s.Sample != nil:
		sm := s.Sample
		model := ""
		if sm.Model != "" {
			model = ", model " + sm.Model
		}
		return fmt.Sprintf("random sample of %d calls of tenant %s%s, %s to %s, seed %d", sm.Size, sm.Tenant, model,
			sm.From.UTC().Format(time.RFC3339), sm.To.UTC().Format(time.RFC3339), sm.Seed)
	}
	return "nothing"
}

// selectCalls reads the selected calls that p may see. Calls of tenants p
// is not granted are left out, as if they did not exist.
func (r *Runner) selectCalls(ctx context.Context, p access.Principal, s Selection) ([]ledger.Call, error) {
	var calls []ledger.Call
	var err error
	switch {
	case s.TraceID != "":
		calls, err = r.Ledger.CallsByTrace(ctx, s.TraceID)
	case len(s.Calls) > 0:
		traces, keys := make([]string, 0, len(s.Calls)), make([]string, 0, len(s.Calls))
		for _, c := range s.Calls {
			traces = append(traces, c.TraceID)
			keys = append(keys, c.TraceID+":"+c.SpanID)
		}
		tj, _ := json.Marshal(traces)
		kj, _ := json.Marshal(keys)
		calls, err = r.Ledger.QueryCalls(ctx, "replay_calls_by_id", map[string]any{"traces": string(tj), "keys": string(kj)})
	default:
		sm := s.Sample
		if !p.MayAccessTenant(sm.Tenant) {
			return nil, fmt.Errorf("replay: %w: tenant not granted", access.ErrDenied)
		}
		calls, err = r.Ledger.QueryCalls(ctx, "replay_sample_calls", map[string]any{"tenant": sm.Tenant, "from": sm.From,
			"to": sm.To, "model": sm.Model, "seed": sm.Seed, "size": uint64(sm.Size)})
	}
	if err != nil {
		return nil, fmt.Errorf("replay: read the selected calls: %w", err)
	}
	calls = slices.DeleteFunc(calls, func(c ledger.Call) bool { return !p.MayAccessTenant(c.Tenant) })
	if len(calls) == 0 {
		return nil, fmt.Errorf("replay: the ledger has no LLM call for %s in the tenants granted", s)
	}
	if len(s.Calls) > 0 && len(calls) < len(s.Calls) {
		return nil, fmt.Errorf("replay: %d of the %d call IDs are not in the ledger (or not in a granted tenant)", len(s.Calls)-len(calls), len(s.Calls))
	}
	return calls, nil
}
