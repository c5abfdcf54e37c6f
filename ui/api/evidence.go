package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/decimal"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/lifecycle"
	"github.com/docketlabs/docket/ledger/views"
	"github.com/docketlabs/docket/replay"
	"github.com/docketlabs/docket/ui/auth"
)

func (a *api) search(r *http.Request, s auth.Session) (int, any, error) {
	from, err := timeParam(r, "from")
	if err != nil {
		return 0, nil, err
	}
	to, err := timeParam(r, "to")
	if err != nil {
		return 0, nil, err
	}
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	kind, results, err := views.Search(r.Context(), a.Ledger, r.URL.Query().Get("q"), from, to, s.Tenants(access.RoleViewer), limit)
	if err != nil {
		return 0, nil, err
	}
	if results == nil {
		results = []views.CallSummary{}
	}
	return http.StatusOK, map[string]any{"kind": kind, "results": results}, nil
}

// Evidence is the answer for one complaint (trace).
type Evidence struct {
	TraceID       string                `json:"trace_id"`
	Calls         []CallEvidence        `json:"calls"`
	EvidenceSpans []ledger.EvidenceSpan `json:"evidence_spans"`
	Timeline      []TimelineSpan        `json:"timeline"`
	Replays       []replay.Record       `json:"replays"`
	// Conflicts are rows received under a key of this trace with other
	// content; the rows shown are the first ones received.
	Conflicts []ledgerstore.Conflict `json:"conflicts"`
	Totals    Totals                 `json:"totals"`
	// CanReveal says whether the session may reveal content of every
	// tenant in this trace.
	CanReveal bool `json:"can_reveal"`
}

// CallEvidence is a ledger row with what the page needs to explain its
// content: each piece, whether it can be revealed, and if not, why.
type CallEvidence struct {
	ledger.Call
	Content []ContentItem        `json:"content"`
	State   *lifecycle.CallState `json:"state"`
}

// ContentItem is one stored piece of a call.
type ContentItem struct {
	Field     string `json:"field"`
	Ref       string `json:"ref"`
	Available bool   `json:"available"`
	WhyNot    string `json:"why_not,omitempty"`
}

// TimelineSpan places one span of the trace on the complaint's timeline.
type TimelineSpan struct {
	SpanID       string    `json:"span_id"`
	ParentSpanID string    `json:"parent_span_id"`
	Name         string    `json:"name"`
	Kind         string    `json:"kind"`
	ServiceName  string    `json:"service_name"`
	StartTime    time.Time `json:"start_time"`
	EndTime      time.Time `json:"end_time"`
	OffsetMS     float64   `json:"offset_ms"`
	DurationMS   float64   `json:"duration_ms"`
	Status       string    `json:"status"`
	// Detail sums up a request-path span: "POST /ask → 200",
	// "ask-jobs (kafka)".
	Detail string `json:"detail,omitempty"`
}

// Totals sum a trace's calls. Unknown parts are counted, never taken as
// zero: the UI prints "+?" when CostUnknownCalls > 0.
type Totals struct {
	Calls            int     `json:"calls"`
	CostUSD          *string `json:"cost_usd"`
	CostUnknownCalls int     `json:"cost_unknown_calls"`
	InputTokens      *int64  `json:"input_tokens"`
	OutputTokens     *int64  `json:"output_tokens"`
	Display          string  `json:"cost_display"`
}

func (a *api) evidence(r *http.Request, s auth.Session) (int, any, error) {
	ctx := r.Context()
	id := r.PathValue("trace_id")
	if !ledger.ValidTraceID(id) {
		return 0, nil, httpError(http.StatusBadRequest, "trace_id must be 32 lowercase hex digits")
	}
	granted := s.Tenants(access.RoleViewer)
	calls, err := a.Ledger.CallsByTrace(ctx, id)
	if err != nil {
		return 0, nil, err
	}
	spans, err := a.Ledger.EvidenceByTrace(ctx, id)
	if err != nil {
		return 0, nil, err
	}
	calls = slices.DeleteFunc(calls, func(c ledger.Call) bool { return !auth.Covers(granted, c.Tenant) })
	spans = slices.DeleteFunc(spans, func(e ledger.EvidenceSpan) bool { return !auth.Covers(granted, e.Tenant) })
	if len(calls) == 0 && len(spans) == 0 {
		// The same answer whether the trace is unknown or in a tenant
		// not granted: existence is not disclosed.
		return 0, nil, httpError(http.StatusNotFound, "no evidence for this trace_id in your tenants")
	}
	ev := Evidence{TraceID: id, EvidenceSpans: spans, Calls: make([]CallEvidence, 0, len(calls)), CanReveal: true}
	if ev.EvidenceSpans == nil {
		ev.EvidenceSpans = []ledger.EvidenceSpan{}
	}
	tenants := traceTenants(calls, spans)
	views := make([]access.View, len(tenants))
	for i, t := range tenants {
		views[i] = access.View{Principal: s.Principal(t), Tenant: t}
		if !views[i].Principal.CanReveal() {
			ev.CanReveal = false
		}
	}
	if err = access.RecordView(ctx, a.Ledger, id, views...); err != nil {
		return 0, nil, err
	}
	states := map[string]lifecycle.CallState{}
	for _, v := range views {
		if a.Lifecycle == nil {
			break
		}
		list, callStatesErr := a.Lifecycle.CallStates(ctx, v.Principal, v.Tenant, calls)
		if callStatesErr != nil {
			return 0, nil, callStatesErr
		}
		for _, st := range list {
			states[v.Tenant+"/"+st.SpanID] = st
		}
	}
	for _, c := range calls {
		ce := CallEvidence{Call: c}
		if st, ok := states[c.Tenant+"/"+c.SpanID]; ok {
			ce.State = &st
		}
		ce.Content = contentItems(c, ce.State, a.Content != nil)
		ev.Calls = append(ev.Calls, ce)
	}
	// Replays and conflicts are of the calls and spans shown, so of their
	// tenants: read by (tenant, trace), not across every tenant.
	if ev.Replays, err = a.replays(ctx, id, granted, tenants); err != nil {
		return 0, nil, err
	}
	if ev.Conflicts, err = a.conflicts(ctx, id, granted, tenants); err != nil {
		return 0, nil, err
	}
	ev.Timeline = timeline(calls, spans)
	ev.Totals = totals(calls)
	return http.StatusOK, ev, nil
}

func traceTenants(calls []ledger.Call, spans []ledger.EvidenceSpan) []string {
	var out []string
	for _, c := range calls {
		out = append(out, c.Tenant)
	}
	for _, e := range spans {
		out = append(out, e.Tenant)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (a *api) replays(ctx context.Context, traceID string, granted, tenants []string) ([]replay.Record, error) {
	recs, err := replay.Records(ctx, a.Ledger, traceID, tenants...)
	if err != nil {
		return nil, err
	}
	recs = slices.DeleteFunc(recs, func(r replay.Record) bool { return !auth.Covers(granted, r.Tenant) })
	if recs == nil {
		recs = []replay.Record{}
	}
	return recs, nil
}

// contentItems lists a call's pieces of content and why each one cannot
// be revealed, if it cannot.
func contentItems(c ledger.Call, st *lifecycle.CallState, storeConfigured bool) []ContentItem {
	fields := []struct{ name, ref string }{
		{"input", c.InputRef}, {"output", c.OutputRef},
		{"system_instructions", c.SystemInstructionsRef}, {"tool_definitions", c.ToolDefinitionsRef},
	}
	// The rest of the call's set (Refs): content its other spans, span
	// events and log records carried, revealable like the four columns.
	for _, ref := range c.Refs() {
		if !slices.ContainsFunc(fields, func(f struct{ name, ref string }) bool { return f.ref == ref }) {
			fields = append(fields, struct{ name, ref string }{"linked", ref})
		}
	}
	var items []ContentItem
	for _, f := range fields {
		if f.ref == "" && (f.name == "system_instructions" || f.name == "tool_definitions") {
			continue // most calls have none; absence is not worth a line
		}
		it := ContentItem{Field: f.name, Ref: f.ref}
		switch {
		case f.ref == "":
			it.WhyNot = notStoredReason(c.ContentStatus)
		case !storeConfigured:
			it.WhyNot = "no content store is configured for this UI"
		default:
			it.WhyNot = goneReason(st, f.ref)
		}
		it.Available = it.WhyNot == ""
		items = append(items, it)
	}
	return items
}

func notStoredReason(status string) string {
	switch status {
	case "", ledger.ContentNone:
		return "the span carried no content"
	case ledger.ContentOnSpan:
		return "content arrived on the span without a content processor and was not stored"
	case "not_captured":
		return "not captured (capture is off for this tenant or service)"
	case "over_limit", "over_quota":
		return "not stored: over the content store's " + strings.TrimPrefix(status, "over_")
	case "store_unavailable":
		return "not stored: the content store was unavailable when the call arrived"
	}
	return "not stored (" + status + ")"
}

// goneReason says why a stored object is no longer available, from its
// recorded lifecycle events; "" if it should still be there.
func goneReason(st *lifecycle.CallState, ref string) string {
	if st == nil {
		return ""
	}
	for _, obj := range st.Objects {
		if obj.Ref != ref {
			continue
		}
		for i := len(obj.Events) - 1; i >= 0; i-- {
			e := obj.Events[i]
			switch e.Event {
			case lifecycle.EventDeleted:
				return fmt.Sprintf("deleted on request at %s (job %s)", e.At.UTC().Format(time.RFC3339), e.JobID)
			case lifecycle.EventExpired:
				return fmt.Sprintf("expired at %s (retention)", e.At.UTC().Format(time.RFC3339))
			}
		}
	}
	return ""
}

func timeline(calls []ledger.Call, spans []ledger.EvidenceSpan) []TimelineSpan {
	out := make([]TimelineSpan, 0, len(calls)+len(spans))
	for _, c := range calls {
		out = append(out, TimelineSpan{SpanID: c.SpanID, ParentSpanID: c.ParentSpanID, Name: c.SpanName, Kind: "llm",
			ServiceName: c.ServiceName, StartTime: c.StartTime, EndTime: c.EndTime, Status: c.Status})
	}
	for _, e := range spans {
		out = append(out, TimelineSpan{SpanID: e.SpanID, ParentSpanID: e.ParentSpanID, Name: e.SpanName, Kind: e.Category,
			ServiceName: e.ServiceName, StartTime: e.StartTime, EndTime: e.EndTime, Status: e.Status, Detail: requestDetail(e)})
	}
	slices.SortFunc(out, func(x, y TimelineSpan) int { return x.StartTime.Compare(y.StartTime) })
	if len(out) == 0 {
		return out
	}
	t0 := out[0].StartTime
	for i := range out {
		out[i].OffsetMS = float64(out[i].StartTime.Sub(t0).Microseconds()) / 1000
		out[i].DurationMS = float64(out[i].EndTime.Sub(out[i].StartTime).Microseconds()) / 1000
	}
	return out
}

func totals(calls []ledger.Call) Totals {
	t := Totals{Calls: len(calls)}
	var sum decimal.Sum
	known := false
	for _, c := range calls {
		if c.CostUSD != nil && sum.Add([]byte(*c.CostUSD)) == nil {
			known = true
		} else {
			t.CostUnknownCalls++
		}
		t.InputTokens = addKnown(t.InputTokens, c.InputTokens)
		t.OutputTokens = addKnown(t.OutputTokens, c.OutputTokens)
	}
	if known {
		s := sum.String()
		t.CostUSD = &s
	}
	t.Display = views.FormatCost(t.CostUSD, uint64(t.CostUnknownCalls))
	return t
}

func addKnown(sum, v *int64) *int64 {
	if v == nil {
		return sum
	}
	n := *v
	if sum != nil {
		n += *sum
	}
	return &n
}

func (a *api) reveal(r *http.Request, s auth.Session) (int, any, error) {
	var body struct {
		TraceID string `json:"trace_id"`
		Ref     string `json:"ref"`
		Reason  string `json:"reason"`
	}
	if err := decode(r, &body); err != nil {
		return 0, nil, err
	}
	// A malformed ref names no tenant; the attempt is still recorded
	// (and refused) by the reader, like every other.
	var tenant string
	if ref, err := contentstore.ParseRef(body.Ref); err == nil {
		tenant = ref.Tenant
	}
	content, err := a.reader.Reveal(r.Context(), s.Principal(tenant),
		access.RevealRequest{Tenant: tenant, TraceID: body.TraceID, Ref: body.Ref, Reason: body.Reason})
	if errors.Is(err, access.ErrNoContentStore) {
		return 0, nil, httpError(http.StatusServiceUnavailable, "no content store is configured for this UI")
	}
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]string{"ref": body.Ref, "content_type": contentType(content), "content": string(content)}, nil
}

func contentType(b []byte) string {
	if t := strings.TrimSpace(string(b[:min(len(b), 1)])); t == "{" || t == "[" {
		return "application/json"
	}
	return "text/plain"
}

// requestDetail sums up what the ledger kept of a request-path span, "" for
// other spans.
func requestDetail(e ledger.EvidenceSpan) string {
	a := e.SpanAttributes
	first := func(keys ...string) string {
		for _, k := range keys {
			if v := a[k]; v != "" {
				return v
			}
		}
		return ""
	}
	var parts []string
	add := func(s string) {
		if s != "" {
			parts = append(parts, s)
		}
	}
	add(first(conventions.HTTPRequestMethod, conventions.HTTPMethodOld))
	add(first(conventions.HTTPRoute))
	add(strings.TrimSpace(first(conventions.RPCService) + " " + first(conventions.RPCMethod)))
	if code := first(conventions.HTTPResponseStatusCode, conventions.HTTPStatusCodeOld); code != "" {
		add("→ " + code)
	}
	if dest := first(conventions.MessagingDestination, conventions.MessagingDestTemplate, conventions.MessagingDestinationOld); dest != "" {
		if sys := first(conventions.MessagingSystem, conventions.RPCSystem); sys != "" {
			dest += " (" + sys + ")"
		}
		add(dest)
	}
	return strings.Join(parts, " ")
}
