package conformance

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/docketlabs/docket/fakeprovider"
	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/ledger/pricing"
)

// rawDump is what the harness kept of a scenario's own telemetry, before
// the collector saw it.
type rawDump struct {
	Spans []struct {
		TraceID      string         `json:"trace_id"`
		SpanID       string         `json:"span_id"`
		ParentSpanID string         `json:"parent_span_id"`
		Name         string         `json:"name"`
		Scope        string         `json:"scope"`
		Attributes   map[string]any `json:"attributes"`
		Events       []struct {
			Name       string         `json:"name"`
			Attributes map[string]any `json:"attributes"`
		} `json:"events"`
	} `json:"spans"`
	Logs []rawLog `json:"logs"`
}

type rawLog struct {
	TraceID    string         `json:"trace_id"`
	EventName  string         `json:"event_name"`
	Body       any            `json:"body"`
	Attributes map[string]any `json:"attributes"`
}

// appScope is the harness's own span around each call: not the library's.
const appScope = "conformance-app"

// leaf is one scalar the library put on a span, event or log record of a
// call's trace; JSON strings are opened, so a value inside a raw response
// body (OpenInference's output.value) counts too.
type leaf struct {
	path string // keys joined by "/", lower case
	str  string
	num  *float64
}

// evidence is everything a library reported about one call.
type evidence struct {
	spans  int // library spans in the trace
	leaves []leaf
	text   string // every string, for content checks
}

func gather(raw *rawDump, traceID string) evidence {
	var ev evidence
	var b strings.Builder
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, vv := range x {
				walk(path+"/"+strings.ToLower(k), vv)
			}
		case []any:
			for i, vv := range x {
				walk(path+"/"+strconv.Itoa(i), vv)
			}
		case float64:
			f := x
			ev.leaves = append(ev.leaves, leaf{path: path, num: &f})
		case string:
			ev.leaves = append(ev.leaves, leaf{path: path, str: x})
			b.WriteString(x)
			b.WriteByte('\n')
			if t := strings.TrimSpace(x); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
				var inner any
				if json.Unmarshal([]byte(t), &inner) == nil {
					walk(path, inner)
				}
			}
		}
	}
	for _, s := range raw.Spans {
		if s.TraceID != traceID || s.Scope == appScope {
			continue
		}
		ev.spans++
		walk("", s.Attributes)
		for _, e := range s.Events {
			walk("/"+strings.ToLower(e.Name), e.Attributes)
		}
	}
	for _, l := range raw.Logs {
		if l.TraceID != traceID {
			continue
		}
		walk("", l.Attributes)
		walk("/body", l.Body)
	}
	ev.text = b.String()
	return ev
}

// requestOnlyModelPaths are the evidence paths of the keys the contract
// reads as the requested model and never as the response's, such as the
// AI SDK's ai.model.id (the model ID its caller passed, set before the
// request is sent): a value there repeats the request, whatever it equals.
var requestOnlyModelPaths = func() []string {
	paths := func(c conventions.Column) []string {
		var out []string
		for _, f := range append(slices.Clip(conventions.Families), conventions.GenAI) {
			for _, k := range f.Columns[c] {
				out = append(out, keyPath(k))
			}
		}
		for _, k := range conventions.Columns[c] {
			out = append(out, keyPath(k))
		}
		return out
	}
	response := paths(conventions.ColResponseModel)
	var out []string
	for _, p := range paths(conventions.ColRequestModel) {
		if !slices.Contains(response, p) {
			out = append(out, p)
		}
	}
	return out
}()

// keyPath is where gather puts a key's value.
func keyPath(k conventions.Key) string {
	p := "/" + strings.ToLower(k.Name)
	if k.Field != "" {
		p += "/" + strings.ToLower(k.Field)
	}
	return p
}

func (ev *evidence) hasString(match func(path, s string) bool) bool {
	return slices.ContainsFunc(ev.leaves, func(l leaf) bool { return l.num == nil && match(l.path, l.str) })
}

// hasCount reports whether a token count n appears under a key naming
// tokens or usage.
func (ev *evidence) hasCount(n int) bool {
	return slices.ContainsFunc(ev.leaves, func(l leaf) bool {
		if !strings.Contains(l.path, "token") && !strings.Contains(l.path, "usage") {
			return false
		}
		if l.num != nil {
			return *l.num == float64(n)
		}
		return l.str == strconv.Itoa(n)
	})
}

// canonicalFinish maps every API's and library's spelling of a finish
// reason to one word, so "end_turn", "stop" and Responses' "completed"
// compare equal, and "tool_calls", "tool-calls" and "tool_use" do.
func canonicalFinish(s string) string {
	switch strings.ToLower(s) {
	case "stop", "end_turn", "stop_sequence", "completed", "end":
		return "stop"
	case "tool_calls", "tool-calls", "tool_use", "function_call", "tool_call":
		return "tool_call"
	case "length", "max_tokens", "incomplete", "max_output_tokens":
		return "length"
	}
	return strings.ToLower(s)
}

// row is one ledger row as JSON (JSONEachRow: 64-bit integers as strings).
type row map[string]any

func (r row) str(k string) string {
	switch v := r[k].(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		return fmt.Sprint(v)
	}
}

// num returns a nullable numeric column as text, "NULL" when null.
func (r row) num(k string) string {
	switch v := r[k].(type) {
	case nil:
		return "NULL"
	case json.Number:
		return v.String()
	case string:
		return v
	default:
		return fmt.Sprint(v)
	}
}

func (r row) list(k string) []string {
	var out []string
	if xs, ok := r[k].([]any); ok {
		for _, x := range xs {
			out = append(out, fmt.Sprint(x))
		}
	}
	return out
}

// pickRow chooses, among several rows of one call, the outermost (whose
// parent is not another of them), then by span name: the same choice
// every run.
func pickRow(rows []row) row { return orderRows(rows)[0] }

// orderRows sorts a call's rows outermost first, then by span name.
func orderRows(rows []row) []row {
	ids := map[string]bool{}
	for _, r := range rows {
		ids[r.str("span_id")] = true
	}
	sorted := slices.Clone(rows)
	slices.SortFunc(sorted, func(a, b row) int {
		ai, bi := ids[a.str("parent_span_id")], ids[b.str("parent_span_id")]
		if ai != bi {
			if ai {
				return 1
			}
			return -1
		}
		return strings.Compare(a.str("span_name"), b.str("span_name"))
	})
	return sorted
}

// verdict compares one field: expected is the provider's value, observed
// the row's ("" or "NULL" for none), reported whether the library put the
// value anywhere on its telemetry, libraryValue whether the observed value
// is one the library itself put there.
func verdict(expected, observed string, reported, libraryValue bool, equal func(a, b string) bool) FieldResult {
	none := observed == "" || observed == "NULL"
	switch {
	case equal(observed, expected):
		return FieldResult{Status: statusOK}
	case reported:
		return FieldResult{Status: statusDefect, Observed: observed, Expected: expected}
	case none:
		return FieldResult{Status: statusGap, Observed: observed, Expected: expected}
	case libraryValue:
		// The library reported a wrong value and the row repeats it.
		return FieldResult{Status: statusGap, Observed: observed + " (the library's value)", Expected: expected}
	}
	return FieldResult{Status: statusDefect, Observed: observed, Expected: "not reported by the library: NULL"}
}

func same(a, b string) bool { return a == b }

// tokenVerdict: a count the provider gave as 0 may be stored as 0 or as
// not reported; any other count must be exact.
func tokenVerdict(n int, observed string, reported bool) FieldResult {
	if n == 0 {
		if observed == "0" || observed == "NULL" {
			return FieldResult{Status: statusOK}
		}
		return FieldResult{Status: statusDefect, Observed: observed, Expected: "0 or NULL"}
	}
	return verdict(strconv.Itoa(n), observed, reported, false, same)
}

func providerOf(a fakeprovider.Answer) string {
	if a.API == "messages" {
		return "anthropic"
	}
	return "openai"
}

// checkCall fills the field verdicts of one call from the provider's
// answer, the library's evidence, the call's ledger rows and everything
// that left the collector (sink).
func checkCall(c *CallResult, truth fakeprovider.Answer, ev evidence, rows []row, sink string, prices *pricing.Table, canary string) {
	f := c.Fields
	na := FieldResult{Status: statusNA}
	if ev.spans == 0 {
		// The library traced nothing for this call: no row is right.
		for _, name := range fields[1:] {
			f[name] = FieldResult{Status: statusUntraced}
		}
		f["rows"] = FieldResult{Status: statusGap, Observed: "the library traced nothing"}
		if len(rows) != 0 {
			f["rows"] = FieldResult{Status: statusDefect, Observed: strconv.Itoa(len(rows)), Expected: "0 (the library traced nothing)"}
		}
		return
	}
	switch len(rows) {
	case 1:
		f["rows"] = FieldResult{Status: statusOK}
	default:
		f["rows"] = FieldResult{Status: statusDefect, Observed: strconv.Itoa(len(rows)), Expected: "1"}
	}
	if len(rows) == 0 {
		for _, name := range fields[1:] {
			f[name] = FieldResult{Status: statusNoRow}
		}
		return
	}
	r := pickRow(rows)
	provider := providerOf(truth)

	has := func(want string) bool { return ev.hasString(func(_, s string) bool { return s == want }) }
	f["provider"] = verdict(provider, r.str("provider"), ev.hasString(func(p, s string) bool {
		s = strings.ToLower(s)
		return (strings.Contains(p, "system") || strings.Contains(p, "provider")) && (s == provider || strings.HasPrefix(s, provider+"."))
	}), has(r.str("provider")), same)
	f["request_model"] = verdict(truth.RequestedModel, r.str("request_model"), has(truth.RequestedModel), has(r.str("request_model")), same)
	// Embedding models answer under the requested name: a response model is
	// reported only where it is not the request's.
	f["response_model"] = verdict(truth.Model, r.str("response_model"), ev.hasString(func(p, s string) bool {
		return s == truth.Model && !strings.Contains(p, "request") && !strings.HasPrefix(p, "/input.value") && !strings.Contains(p, "invocation_parameters") &&
			!slices.Contains(requestOnlyModelPaths, p)
	}), has(r.str("response_model")), same)
	if truth.ResponseID == "" {
		f["response_id"] = na
	} else {
		res := verdict(truth.ResponseID, r.str("response_id"), ev.hasString(func(_, s string) bool { return strings.Contains(s, truth.ResponseID) }), false, same)
		// IDs are new every run: name them, so the verdict repeats.
		res.Observed = describeID(res.Observed, truth.ResponseID)
		if res.Expected == truth.ResponseID {
			res.Expected = "the provider's response id"
		}
		f["response_id"] = res
	}

	u := truth.Usage
	if u == nil {
		// The provider sent no usage: unknown must stay unknown.
		for _, name := range []string{"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens"} {
			f[name] = verdict("NULL", r.num(name), false, false, same)
		}
		f["cost"] = verdict("NULL", r.num("cost_usd"), false, false, same)
	} else {
		// Anthropic reports input without cache tokens; a library that
		// passes the parts on has reported the inclusive count too.
		inputExcl := u.Input - u.CacheRead - u.CacheWrite
		inputReported := ev.hasCount(u.Input) ||
			(ev.hasCount(inputExcl) && (u.CacheRead == 0 || ev.hasCount(u.CacheRead)) && (u.CacheWrite == 0 || ev.hasCount(u.CacheWrite)))
		f["input_tokens"] = tokenVerdict(u.Input, r.num("input_tokens"), inputReported)
		if truth.API == "embeddings" {
			f["output_tokens"] = na
		} else {
			f["output_tokens"] = tokenVerdict(u.Output, r.num("output_tokens"), ev.hasCount(u.Output))
		}
		f["cache_read_tokens"] = tokenVerdict(u.CacheRead, r.num("cache_read_tokens"), ev.hasCount(u.CacheRead))
		if provider == "anthropic" {
			f["cache_write_tokens"] = tokenVerdict(u.CacheWrite, r.num("cache_write_tokens"), ev.hasCount(u.CacheWrite))
			f["reasoning_tokens"] = na
		} else {
			f["cache_write_tokens"] = na // OpenAI reports no cache writes
			if truth.API == "embeddings" {
				f["reasoning_tokens"] = na
			} else {
				f["reasoning_tokens"] = tokenVerdict(u.Reasoning, r.num("reasoning_tokens"), ev.hasCount(u.Reasoning))
			}
		}
		f["cost"] = costVerdict(truth, rows, f, prices)
	}

	if truth.API == "embeddings" {
		f["finish_reason"] = na
	} else {
		want := canonicalFinish(truth.FinishReason)
		got := r.list("finish_reasons")
		observed := strings.Join(got, ",")
		reported := ev.hasString(func(p, s string) bool {
			return (strings.Contains(p, "finish") || strings.Contains(p, "stop_reason") || strings.HasSuffix(p, "/status")) && canonicalFinish(s) == want
		})
		libraryValue := len(got) == 1 && has(got[0])
		res := verdict(truth.FinishReason, observed, reported, libraryValue, func(o, _ string) bool { return len(got) == 1 && canonicalFinish(got[0]) == want })
		f["finish_reason"] = res
	}

	if !truth.Stream {
		f["ttft"] = na
	} else {
		// Presence only: how long the first chunk took depends on the
		// machine's load, and a verdict must repeat from run to run.
		observed := "NULL"
		if v, err := strconv.ParseFloat(r.num("ttft_ms"), 64); err == nil {
			observed = "present"
			if v <= 0 {
				observed = "not positive"
			}
		}
		reported := slices.ContainsFunc(ev.leaves, func(l leaf) bool {
			return strings.Contains(l.path, "first") && (strings.Contains(l.path, "chunk") || strings.Contains(l.path, "token"))
		})
		f["ttft"] = verdict("present", observed, reported, false, same)
	}

	f["content"] = contentVerdict(truth, ev, rows, r, sink, canary)
}

// describeID names an observed response ID relative to the provider's.
func describeID(observed, truth string) string {
	switch observed {
	case "", truth:
		return observed
	}
	return "another id"
}

// costVerdict: the ledger's cost of the call — the sum over its rows, so a
// duplicate priced twice counts twice — must be the price table applied to
// the provider's real usage. When the library left out a billed token
// class, the ledger cannot know the bill: that is the library's gap — if
// the ledger says so (no row `ok`, so no number passed off as the bill);
// a row `ok` at a price other than the bill is the ledger's defect.
func costVerdict(truth fakeprovider.Answer, rows []row, f map[string]FieldResult, prices *pricing.Table) FieldResult {
	u := truth.Usage
	op := "chat"
	usage := pricing.Usage{Input: new(int64(u.Input)), Output: new(int64(u.Output)), CacheRead: new(int64(u.CacheRead)), CacheWrite: new(int64(u.CacheWrite)), Reasoning: new(int64(u.Reasoning))}
	if truth.API == "embeddings" {
		op, usage.Output = pricing.OperationEmbeddings, nil
	}
	bill := prices.Cost(providerOf(truth), truth.Model, op, truth.Received, usage)
	expected := bill.String()
	if bill.Status != pricing.StatusOK {
		expected = string(bill.Status)
	}
	total, priced := new(big.Rat), 0
	var statuses []string
	// cacheReadUnknown: every row says the library gave no cache-read
	// count on a prompt the provider may have served from its cache; even
	// where the cache read nothing, the library did not say so.
	allOK, anyOK, cacheReadUnknown := true, false, len(rows) > 0
	for _, rr := range orderRows(rows) {
		cacheReadUnknown = cacheReadUnknown && rr.str("cost_status") == string(conventions.CostUnreportedCacheRead) && rr.num("cache_read_tokens") == "NULL"
		if c, ok := new(big.Rat).SetString(rr.num("cost_usd")); ok {
			total.Add(total, c)
			priced++
		}
		statuses = append(statuses, rr.str("cost_status"))
		rowOK := rr.str("cost_status") == string(pricing.StatusOK)
		allOK, anyOK = allOK && rowOK, anyOK || rowOK
	}
	observed := strings.Join(statuses, "+")
	if priced > 0 {
		observed = total.FloatString(12) + " " + observed
	}
	if priced > 1 {
		observed += fmt.Sprintf(" (%d rows priced)", priced)
	}
	if bill.Status == pricing.StatusOK && allOK && priced > 0 && sameDecimal(total.FloatString(12), expected) {
		return FieldResult{Status: statusOK}
	}
	for _, name := range []string{"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"} {
		if f[name].Status == statusGap && !anyOK {
			return FieldResult{Status: statusGap, Observed: observed, Expected: expected + " (" + name + " not reported)"}
		}
	}
	if cacheReadUnknown {
		return FieldResult{Status: statusGap, Observed: observed, Expected: expected + " (cache_read_tokens not reported)"}
	}
	return FieldResult{Status: statusDefect, Observed: observed, Expected: expected + " ok"}
}

func sameDecimal(a, b string) bool {
	x, ok1 := new(big.Rat).SetString(a)
	y, ok2 := new(big.Rat).SetString(b)
	return ok1 && ok2 && x.Cmp(y) == 0
}

// referencedContent is the key of a row under which the test puts the
// content its references name in the content store (resolveContent).
const referencedContent = "\x00referenced_content"

// contentText is stored content as text, with the strings of JSON content
// decoded, so that text the canonical form escapes still matches.
func contentText(b []byte) string {
	var ev evidence
	var v any
	if json.Unmarshal(b, &v) == nil {
		ev = gather(&rawDump{Logs: []rawLog{{Body: v}}}, "")
	}
	return string(b) + "\n" + ev.text
}

// contentVerdict: whatever content the library captured must not leave the
// collector (exported spans and logs, the ledger row), and the row must
// reference it: the content its references name holds it.
func contentVerdict(truth fakeprovider.Answer, ev evidence, rows []row, r row, sink, canary string) FieldResult {
	answer := truth.Text
	if len(answer) > 40 {
		answer = answer[:40]
	}
	promptCaptured := strings.Contains(ev.text, canary)
	answerCaptured := answer != "" && strings.Contains(ev.text, answer)
	if !promptCaptured && !answerCaptured {
		return FieldResult{Status: statusGap, Observed: "no content captured"}
	}
	var problems []string
	if promptCaptured && strings.Contains(sink, canary) {
		problems = append(problems, "prompt leaves the collector")
	}
	if answerCaptured && strings.Contains(sink, answer) {
		problems = append(problems, "answer leaves the collector")
	}
	for _, rr := range rows {
		stored := maps.Clone(rr)
		delete(stored, referencedContent)
		b, _ := json.Marshal(stored)
		if strings.Contains(string(b), canary) || (answer != "" && strings.Contains(string(b), answer)) {
			problems = append(problems, "content in the ledger row")
			break
		}
	}
	if promptCaptured && !strings.Contains(r.str(referencedContent), canary) {
		problems = append(problems, "prompt not referenced by the row")
	}
	if answerCaptured && !strings.Contains(r.str(referencedContent), answer) {
		problems = append(problems, "answer not referenced by the row")
	}
	if len(problems) == 0 {
		return FieldResult{Status: statusOK}
	}
	return FieldResult{Status: statusDefect, Observed: strings.Join(problems, "; "), Expected: "moved to the content store, referenced by the row"}
}
