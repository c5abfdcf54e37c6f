// Package extract builds ledger rows from collector data: a call row per LLM
// call span, an evidence row per span kept as evidence, and the links of log
// records' content references. The ledger exporter is its one user outside
// tests and the bench.
package extract

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/pricing"
)

// Limits on what a row keeps of one attribute value. Attributes can be
// megabytes; the ledger keeps identifiers and parameters, not payloads.
const (
	maxIDLen      = 512
	maxParamLen   = 256
	maxQueryLen   = 64 << 10
	maxListItems  = 64
	maxDocuments  = 256
	maxParamsKept = 32
)

// Extractor builds ledger rows from spans.
type Extractor struct {
	// DefaultTenant is used when the resource names no tenant in the
	// contract's attribute (conventions.TenantAttribute).
	DefaultTenant string
	// Prices prices the calls; nil leaves every cost unknown_model.
	Prices *pricing.Table
	// MaxClockSkew and MaxAge are how far after and before receipt a
	// span's timestamps are believed; zero leaves that side unchecked.
	MaxClockSkew, MaxAge time.Duration
}

// Kind is what a span becomes in the ledger.
type Kind uint8

const (
	KindNone Kind = iota
	KindCall
	KindEvidence
)

// Extract reads a span once and builds its row: a call row for a model
// call, an evidence row for a span that is evidence (wrappers, agents,
// steps, retrievals, database queries, spans with content references), or
// nothing. scope is the span's instrumentation scope name. A call whose
// span holds references beyond its four reference columns (unknown
// attributes, prompt templates, event payloads) comes with an evidence row
// of category content holding them, so the audited read path, deletion and
// legal holds reach them; otherwise the evidence row is empty.
func (x *Extractor) Extract(res pcommon.Resource, scope string, span ptrace.Span, ingestedAt time.Time) (ledger.Call, ledger.EvidenceSpan, Kind) {
	var r conventions.Reading
	r.Reset(scope, span.Attributes())
	role, op := r.Classify(span.Name())
	if role == conventions.RoleCall {
		c := x.call(res, &r, op, span, ingestedAt)
		return c, x.callContent(res, &c, span, ingestedAt), KindCall
	}
	if e, ok := x.evidence(res, &r, role, span, ingestedAt); ok {
		return ledger.Call{}, e, KindEvidence
	}
	return ledger.Call{}, ledger.EvidenceSpan{}, KindNone
}

// Call builds the ledger row of a span known to be a call, of no
// particular instrumentation scope.
func (x *Extractor) Call(res pcommon.Resource, span ptrace.Span, ingestedAt time.Time) ledger.Call {
	var r conventions.Reading
	r.Reset("", span.Attributes())
	_, op := r.Classify(span.Name())
	return x.call(res, &r, op, span, ingestedAt)
}

// Classify reports what a span is to the ledger, by the conventions
// contract.
func Classify(scope string, span ptrace.Span) conventions.Role {
	r := conventions.Read(scope, span.Attributes())
	role, _ := r.Classify(span.Name())
	return role
}

// evidenceCategory is the category of a span that is not an LLM call, or
// "" if the span is not evidence. Server, producer and consumer spans are
// the request path (conventions.RequestCategory): the exporter keeps them
// only for traces that hold an LLM call.
func evidenceCategory(r *conventions.Reading, role conventions.Role, attrs pcommon.Map, kind string) string {
	oiKind := ""
	if v, ok := r.Get(conventions.OpenInferenceKind); ok {
		oiKind = strings.ToUpper(v.AsString())
	}
	if op, ok := r.Get(conventions.OperationName); ok && op.AsString() == "retrieval" || has(attrs, conventions.RetrievalDocuments) || oiKind == "RETRIEVER" {
		return conventions.CategoryRetrieval
	}
	if has(attrs, conventions.DBSystemName) || has(attrs, conventions.DBSystem) || has(attrs, conventions.DBQueryText) || has(attrs, conventions.DBStatement) {
		return conventions.CategoryDB
	}
	if role == conventions.RoleNotCall || r.Has(conventions.OperationName) {
		return conventions.CategoryGenAI
	}
	return conventions.RequestCategory(kind)
}

// Tenant returns the tenant of a resource.
func (x *Extractor) Tenant(res pcommon.Resource) string {
	return conventions.Tenant(res.Attributes(), x.DefaultTenant)
}

// issues collects problems with attribute values for the row's
// attribute_issues column, so bad input is visible instead of silently
// repaired.
type issues []string

// add records an issue. Entries are bounded in number, and quote at most
// a short, scrubbed prefix of the key: a hostile key (megabytes, NUL
// bytes, invalid UTF-8) must not make the row.
func (is *issues) add(kind, key string) {
	switch n := len(*is); {
	case n < conventions.MaxIssues-1:
		*is = append(*is, kind+":"+issueKey(key))
	case n == conventions.MaxIssues-1:
		*is = append(*is, conventions.IssueOverLimit+":attribute_issues")
	}
}

func issueKey(key string) string {
	key = strings.ReplaceAll(strings.ToValidUTF8(key, "\uFFFD"), "\x00", "")
	if len(key) > conventions.MaxIssueKeyLen {
		return cut(key, conventions.MaxIssueKeyLen) + "…"
	}
	return key
}

// cut shortens valid UTF-8 s to at most max bytes on a rune boundary.
func cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max]
}

// clean makes s storable: valid UTF-8, no NUL bytes, at most max bytes.
func (is *issues) clean(key, s string, max int) string {
	if !utf8.ValidString(s) {
		is.add("invalid_utf8", key)
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if strings.IndexByte(s, 0) >= 0 {
		is.add("nul_bytes", key)
		s = strings.ReplaceAll(s, "\x00", "")
	}
	if len(s) > max {
		is.add("truncated", key)
		s = cut(s, max)
	}
	return s
}

func (is *issues) str(attrs pcommon.Map, key string, max int) string {
	v, ok := attrs.Get(key)
	if !ok {
		return ""
	}
	return is.clean(key, v.AsString(), max)
}

func (is *issues) firstStr(attrs pcommon.Map, max int, keys ...string) string {
	for _, k := range keys {
		if s := is.str(attrs, k, max); s != "" {
			return s
		}
	}
	return ""
}

// lookup finds a column's value by the conventions contract, noting a JSON
// attribute that could not be read.
func (is *issues) lookup(r *conventions.Reading, c conventions.Column) (pcommon.Value, string, bool) {
	f, ok, bad := r.Lookup(c)
	if bad != "" {
		is.add("invalid_json", bad)
	}
	if !ok {
		return pcommon.Value{}, "", false
	}
	return f.Val(), f.Name(), true
}

func (is *issues) colStr(r *conventions.Reading, c conventions.Column, max int) string {
	v, key, ok := is.lookup(r, c)
	if !ok {
		return ""
	}
	return is.clean(key, v.AsString(), max)
}

func (is *issues) colInt(r *conventions.Reading, c conventions.Column) *int64 {
	v, key, ok := is.lookup(r, c)
	if !ok {
		return nil
	}
	return is.int64Value(v, key)
}

// tokens reads a token count: an integer in [0, MaxTokenCount], else NULL
// and an issue.
func (is *issues) tokens(r *conventions.Reading, c conventions.Column, name string) *int64 {
	return is.inRange(is.colInt(r, c), name, 0, conventions.MaxTokenCount)
}

func (is *issues) colFloat(r *conventions.Reading, c conventions.Column) *float64 {
	v, key, ok := is.lookup(r, c)
	if !ok {
		return nil
	}
	return is.float64Value(v, key)
}

// int64Attr reads an integer attribute (see int64Value).
func (is *issues) int64Attr(attrs pcommon.Map, key string) *int64 {
	v, ok := attrs.Get(key)
	if !ok {
		return nil
	}
	return is.int64Value(v, key)
}

// int64Value reads an integer that may arrive as int, integral double or
// decimal string. Anything else is an issue and NULL, never 0.
func (is *issues) int64Value(v pcommon.Value, key string) *int64 {
	switch v.Type() {
	case pcommon.ValueTypeInt:
		n := v.Int()
		return &n
	case pcommon.ValueTypeDouble:
		f := v.Double()
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			n := int64(f)
			return &n
		}
	case pcommon.ValueTypeStr:
		if n, err := strconv.ParseInt(strings.TrimSpace(v.Str()), 10, 64); err == nil {
			return &n
		}
	}
	is.add("not_an_integer", key)
	return nil
}

// inRange keeps n only within [lo, hi], the range of its column; outside it
// the value is an issue and NULL.
func (is *issues) inRange(n *int64, key string, lo, hi int64) *int64 {
	if n != nil && (*n < lo || *n > hi) {
		is.add(conventions.IssueOutOfRange, key)
		return nil
	}
	return n
}

func (is *issues) float64Value(v pcommon.Value, key string) *float64 {
	switch v.Type() {
	case pcommon.ValueTypeDouble:
		if f := v.Double(); !math.IsNaN(f) && !math.IsInf(f, 0) {
			return &f
		}
	case pcommon.ValueTypeInt:
		f := float64(v.Int())
		return &f
	case pcommon.ValueTypeStr:
		if f, err := strconv.ParseFloat(strings.TrimSpace(v.Str()), 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return &f
		}
	}
	is.add("not_a_number", key)
	return nil
}

// colList reads a string array (or a JSON array in a string, as some SDKs
// send slices; or one string).
func (is *issues) colList(r *conventions.Reading, c conventions.Column) []string {
	v, key, ok := is.lookup(r, c)
	if !ok {
		return []string{}
	}
	var raw []string
	switch v.Type() {
	case pcommon.ValueTypeSlice:
		s := v.Slice()
		for i := 0; i < s.Len(); i++ {
			raw = append(raw, s.At(i).AsString())
		}
	case pcommon.ValueTypeStr:
		if !strings.HasPrefix(v.Str(), "[") || json.Unmarshal([]byte(v.Str()), &raw) != nil {
			raw = []string{v.Str()}
		}
	default:
		raw = []string{v.AsString()}
	}
	if len(raw) > maxListItems {
		is.add("truncated", key)
		raw = raw[:maxListItems]
	}
	out := make([]string, len(raw))
	for i, s := range raw {
		out[i] = is.clean(key, s, maxParamLen)
	}
	return out
}

func has(attrs pcommon.Map, key string) bool {
	_, ok := attrs.Get(key)
	return ok
}

func statusOf(s ptrace.Status) string {
	switch s.Code() {
	case ptrace.StatusCodeOk:
		return ledger.StatusOK
	case ptrace.StatusCodeError:
		return ledger.StatusError
	}
	return ledger.StatusUnset
}

// spanBase is what every stored span shares.
type spanBase struct {
	tenant, traceID, spanID, parentSpanID, service, name string
	start, end                                           time.Time
}

func (x *Extractor) base(res pcommon.Resource, span ptrace.Span, ingestedAt time.Time, is *issues) spanBase {
	b := spanBase{
		tenant:  x.Tenant(res),
		traceID: span.TraceID().String(),
		spanID:  span.SpanID().String(),
		name:    is.clean("span.name", span.Name(), maxIDLen),
	}
	if !span.ParentSpanID().IsEmpty() {
		b.parentSpanID = span.ParentSpanID().String()
	}
	if span.TraceID().IsEmpty() || span.SpanID().IsEmpty() {
		if span.TraceID().IsEmpty() {
			is.add(conventions.IssueInvalidID, "trace_id")
		}
		if span.SpanID().IsEmpty() {
			is.add(conventions.IssueInvalidID, "span_id")
		}
		b.traceID, b.spanID = spanDigest(res, span)
		b.parentSpanID = ""
	}
	b.start, b.end = x.times(span, ingestedAt, is)
	x.overLimit(span, is)
	if v, ok := res.Attributes().Get(conventions.ServiceName); ok {
		b.service = is.clean(conventions.ServiceName, v.AsString(), maxIDLen)
	}
	return b
}

// call builds the ledger row of an LLM call span; op is the operation its
// family implies where gen_ai.operation.name is absent.
func (x *Extractor) call(res pcommon.Resource, r *conventions.Reading, op string, span ptrace.Span, ingestedAt time.Time) ledger.Call {
	attrs := span.Attributes()
	var is issues
	b := x.base(res, span, ingestedAt, &is)
	c := ledger.Call{
		Tenant: b.tenant, TraceID: b.traceID, SpanID: b.spanID, ParentSpanID: b.parentSpanID,
		ServiceName: b.service, SpanName: b.name, StartTime: b.start, EndTime: b.end,
		DurationMS:    durationMS(b.start, b.end),
		Operation:     is.colStr(r, conventions.ColOperation, maxIDLen),
		Provider:      conventions.NormalizeProvider(is.colStr(r, conventions.ColProvider, maxIDLen)),
		RequestModel:  is.colStr(r, conventions.ColRequestModel, maxIDLen),
		ResponseModel: is.colStr(r, conventions.ColResponseModel, maxIDLen),
		ResponseID:    is.colStr(r, conventions.ColResponseID, maxIDLen),
		FinishReasons: is.colList(r, conventions.ColFinishReasons),
		Status:        statusOf(span.Status()),
		ErrorType:     is.colStr(r, conventions.ColErrorType, maxIDLen),
		HTTPStatus:    is.inRange(is.colInt(r, conventions.ColHTTPStatus), "http_status", 100, 599),
		RetryAttempt:  is.inRange(is.colInt(r, conventions.ColRetryAttempt), "retry_attempt", 0, math.MaxUint32),
		Temperature:   is.colFloat(r, conventions.ColTemperature),
		TopP:          is.colFloat(r, conventions.ColTopP),
		TopK:          is.colFloat(r, conventions.ColTopK),
		MaxTokens:     is.tokens(r, conventions.ColMaxTokens, "max_tokens"),
		Seed:          is.colInt(r, conventions.ColSeed),
		EndUserRef:    is.colStr(r, conventions.ColEndUser, maxIDLen),
		IngestedAt:    ingestedAt,
	}
	if c.Operation == "" {
		c.Operation = op
	}
	c.StopSequences = []string{}
	if r.Has(conventions.RequestStop) || r.Has(conventions.InvocationParameters) {
		c.StopSequences = is.colList(r, conventions.ColStopSequences)
	}
	if f, ok, _ := r.Lookup(conventions.ColTTFT); ok {
		if t := is.float64Value(f.Val(), f.Name()); t != nil {
			ms := *t
			if f.Key.Unit == conventions.UnitSeconds {
				ms *= 1000
			}
			c.TTFTMS = &ms
		}
	}
	x.usage(r, &c, &is)
	c.RequestParams = requestParams(attrs, &is)
	contentColumns(span, &c, &is)
	c.Derive(x.Prices)
	if is == nil {
		is = issues{}
	}
	c.AttributeIssues = is
	return c
}

// usage reads the token counts and brings them to the ledger's inclusive
// form (cache tokens part of the input, reasoning part of the output) by
// the family's semantics; where those are unknown for a part the call
// reports, or a provider's automatic cache may have served cache reads the
// span does not count, the cost is left uncertain rather than guessed.
func (x *Extractor) usage(r *conventions.Reading, c *ledger.Call, is *issues) {
	c.InputTokens = is.tokens(r, conventions.ColInputTokens, "input_tokens")
	c.OutputTokens = is.tokens(r, conventions.ColOutputTokens, "output_tokens")
	c.CacheReadTokens = is.tokens(r, conventions.ColCacheReadTokens, "cache_read_tokens")
	c.CacheWriteTokens = is.tokens(r, conventions.ColCacheWriteTokens, "cache_write_tokens")
	c.ReasoningTokens = is.tokens(r, conventions.ColReasoningTokens, "reasoning_tokens")
	positive := func(p *int64) bool { return p != nil && *p > 0 }
	add := func(total *int64, parts ...*int64) {
		for _, p := range parts {
			if p != nil && *p > 0 {
				*total += *p
			}
		}
	}
	if c.InputTokens != nil && (positive(c.CacheReadTokens) || positive(c.CacheWriteTokens)) {
		switch r.CacheSemantics(c.Provider) {
		case conventions.Excluded:
			add(c.InputTokens, c.CacheReadTokens, c.CacheWriteTokens)
		case conventions.Unknown:
			c.MarkUsageUncertain(conventions.CostUncertainCache)
			is.add("uncertain_semantics", "input_tokens")
		}
	}
	if key, ok := r.UnpricedWrites(); ok {
		c.MarkUsageUncertain(conventions.CostUnpricedCacheWrite)
		is.add("unpriced", key)
	}
	if c.InputTokens != nil && conventions.CacheReadUnreported(c.Provider, c.Operation, *c.InputTokens, c.CacheReadTokens != nil) {
		c.MarkUsageUncertain(conventions.CostUnreportedCacheRead)
	}
	if c.OutputTokens != nil && positive(c.ReasoningTokens) {
		switch r.ReasoningSemantics(c.Provider) {
		case conventions.Excluded:
			add(c.OutputTokens, c.ReasoningTokens)
		case conventions.Unknown:
			c.MarkUsageUncertain(conventions.CostUncertainReasoning)
			is.add("uncertain_semantics", "output_tokens")
		}
	}
}

// spanDigest keys a span whose IDs are missing by a hash of the whole span
// and its resource. Keyed by its IDs, every such span would share one key
// and first-write-wins would keep only the first; keyed so, each is a trace
// of its own and cannot join another call in provider_calls (which groups
// within a trace), while an identical resend still deduplicates.
func spanDigest(res pcommon.Resource, span ptrace.Span) (traceID, spanID string) {
	// fmt prints maps in key order, so the digest does not depend on the
	// order a sender happened to put the attributes in.
	events := make([]any, 0, span.Events().Len())
	for _, e := range span.Events().All() {
		events = append(events, []any{e.Name(), e.Timestamp(), e.Attributes().AsRaw()})
	}
	h := sha256.New()
	fmt.Fprintf(h, "%v", []any{res.Attributes().AsRaw(), span.Name(), span.Kind(), span.StartTimestamp(), span.EndTimestamp(),
		span.ParentSpanID(), span.Attributes().AsRaw(), events, span.Status().Code(), span.Status().Message()})
	sum := h.Sum(nil)
	return hex.EncodeToString(sum[:16]), hex.EncodeToString(sum[16:24])
}

// times reads a span's start and end. A timestamp outside the window
// around receipt (or beyond what the ledger's DateTime64 holds) is flagged
// and replaced: start by the receipt time, end by the start, so the row
// stays in a real partition and never shows a made-up date or duration as
// reported. An end before the start is flagged and set to the start.
func (x *Extractor) times(span ptrace.Span, ingestedAt time.Time, is *issues) (start, end time.Time) {
	start, ok := x.inWindow(span.StartTimestamp(), ingestedAt)
	if !ok {
		is.add(conventions.IssueOutOfWindow, "start_time")
		start = ingestedAt
	}
	end, ok = x.inWindow(span.EndTimestamp(), ingestedAt)
	switch {
	case !ok:
		is.add(conventions.IssueOutOfWindow, "end_time")
		end = start
	case end.Before(start):
		is.add(conventions.IssueEndBeforeStart, "end_time")
		end = start
	}
	return start, end
}

func (x *Extractor) inWindow(ts pcommon.Timestamp, now time.Time) (time.Time, bool) {
	if ts > math.MaxInt64 {
		return time.Time{}, false // would wrap to a negative time (1969)
	}
	t := ts.AsTime().UTC()
	if x.MaxClockSkew > 0 && t.After(now.Add(x.MaxClockSkew)) || x.MaxAge > 0 && t.Before(now.Add(-x.MaxAge)) {
		return time.Time{}, false
	}
	return t, true
}

// overLimit flags a span with more events or attributes than the ledger
// reads of one record; the ledger reads only the first of them.
func (x *Extractor) overLimit(span ptrace.Span, is *issues) {
	if span.Attributes().Len() > conventions.MaxAttributesPerRecord {
		is.add(conventions.IssueOverLimit, "attributes")
	}
	if span.Events().Len() > conventions.MaxEventsPerRecord {
		is.add(conventions.IssueOverLimit, "events")
	}
}

// eventsRead is how many of a span's events the ledger reads.
func eventsRead(span ptrace.Span) int {
	return min(span.Events().Len(), conventions.MaxEventsPerRecord)
}

// durationMS is end − start; times has made end ≥ start.
func durationMS(start, end time.Time) float64 {
	return float64(end.Sub(start)) / float64(time.Millisecond)
}

// paramColumns are the request parameters with columns of their own; the
// rest of gen_ai.request.* goes to the request_params map.
var paramColumns = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range conventions.ParamColumns {
		for _, k := range conventions.Columns[c] {
			m[k.Name] = true
		}
	}
	return m
}()

func requestParams(attrs pcommon.Map, is *issues) map[string]string {
	out := map[string]string{}
	dropped := false
	attrs.Range(func(k string, v pcommon.Value) bool {
		// docket.replay.* name the call a replay replays (package replay).
		replayLink := strings.HasPrefix(k, conventions.ReplayPrefix)
		if !replayLink && (!strings.HasPrefix(k, conventions.RequestPrefix) || paramColumns[k]) {
			return true
		}
		if len(out) == maxParamsKept {
			dropped = true
			return false
		}
		name := is.clean("request_param_key", strings.TrimPrefix(k, conventions.RequestPrefix), maxParamLen)
		out[name] = is.clean(k, v.AsString(), maxParamLen)
		return true
	})
	if dropped {
		is.add("truncated", "request_params")
	}
	return out
}

// IsContentAttribute reports whether an attribute carries content (a
// prompt, an answer, a document's text) rather than metadata: one the
// content processor moves to the store.
func IsContentAttribute(k string) bool { return conventions.IsContent(k) }

// Attribute names of the content processor's output.
const (
	AttrInputRef              = conventions.InputRef
	AttrOutputRef             = conventions.OutputRef
	AttrSystemInstructionsRef = conventions.SystemInstructionsRef
	AttrToolDefinitionsRef    = conventions.ToolDefinitionsRef
	AttrContentStatus         = conventions.ContentStatus
	AttrContentBytes          = conventions.ContentBytes
)

// contentColumns reads the references the content processor left, from
// the span and, for the older forms that carry content on span events
// (gen_ai.content.prompt, gen_ai.client.inference.operation.details, …),
// from its events.
func contentColumns(span ptrace.Span, c *ledger.Call, is *issues) {
	attrs := span.Attributes()
	events := span.Events()
	fillRefs(c, attrs, is)
	for i := 0; i < eventsRead(span) && !hasAllRefs(c); i++ {
		fillRefs(c, events.At(i).Attributes(), is)
	}
	c.ContentStatus = is.str(attrs, AttrContentStatus, maxIDLen)
	c.ContentBytes = is.int64Attr(attrs, AttrContentBytes)
	if c.ContentStatus != "" {
		return
	}
	c.ContentStatus = ledger.ContentNone
	if hasContent(attrs) {
		c.ContentStatus = ledger.ContentOnSpan
	}
	for i := 0; i < eventsRead(span) && c.ContentStatus == ledger.ContentNone; i++ {
		if hasContent(events.At(i).Attributes()) {
			c.ContentStatus = ledger.ContentOnSpan
		}
	}
}

// fillRefs fills the references still empty from attrs, by the
// contract's keys for each reference column.
func fillRefs(c *ledger.Call, attrs pcommon.Map, is *issues) {
	k := conventions.RefKeys
	for _, f := range []struct {
		dst  *string
		keys []string
	}{
		{&c.InputRef, k.Input}, {&c.OutputRef, k.Output},
		{&c.SystemInstructionsRef, k.SystemInstructions}, {&c.ToolDefinitionsRef, k.ToolDefinitions},
	} {
		if *f.dst == "" {
			*f.dst = is.firstStr(attrs, maxIDLen, f.keys...)
		}
	}
}

func hasAllRefs(c *ledger.Call) bool {
	return c.InputRef != "" && c.OutputRef != "" && c.SystemInstructionsRef != "" && c.ToolDefinitionsRef != ""
}

// hasContent reports whether attrs still carry content.
func hasContent(attrs pcommon.Map) bool {
	found := false
	attrs.Range(func(k string, _ pcommon.Value) bool {
		found = IsContentAttribute(k)
		return !found
	})
	return found
}

// categoryContent is the evidence category of a span kept only for the
// content references on it.
const categoryContent = "content"

// maxContentRefs bounds the references kept of one span.
const maxContentRefs = 64

// contentRefs lists the content references on a span and its events: the
// values of *_ref attributes that are content store references, other
// than those in skip.
func contentRefs(span ptrace.Span, skip []string, is *issues) []string {
	refs := []string{}
	if !collectRefs(&refs, span.Attributes(), skip, is) {
		return refs
	}
	for i := 0; i < eventsRead(span); i++ {
		if !collectRefs(&refs, span.Events().At(i).Attributes(), skip, is) {
			break
		}
	}
	return refs
}

// collectRefs adds to refs the content references among attrs but those
// in skip, up to maxContentRefs; it reports false once that bound cut the
// list.
func collectRefs(refs *[]string, attrs pcommon.Map, skip []string, is *issues) bool {
	for k, v := range attrs.All() {
		if !strings.HasSuffix(k, conventions.RefSuffix) || v.Type() != pcommon.ValueTypeStr || slices.Contains(skip, v.Str()) {
			continue
		}
		if _, err := contentstore.ParseRef(v.Str()); err != nil {
			continue
		}
		switch {
		case slices.Contains(*refs, v.Str()):
		case len(*refs) == maxContentRefs:
			is.add("truncated", "content_refs")
			return false
		default:
			*refs = append(*refs, v.Str())
		}
	}
	return true
}

// LogRefs are the rows linking the content references on a log record to
// the span whose context it carries (ok), or, for a record without a span
// context, the references nothing links (ok false): the lifecycle reports
// their objects as unreferenced.
func (x *Extractor) LogRefs(res pcommon.Resource, lr plog.LogRecord, ingestedAt time.Time) (rows []ledger.LogContentRef, ok bool) {
	refs := []string{}
	var is issues
	collectRefs(&refs, lr.Attributes(), nil, &is)
	if len(refs) == 0 {
		return nil, true
	}
	if lr.TraceID().IsEmpty() || lr.SpanID().IsEmpty() {
		return nil, false
	}
	t := lr.Timestamp().AsTime()
	if lr.Timestamp() == 0 {
		t = lr.ObservedTimestamp().AsTime()
	}
	if lr.Timestamp() == 0 && lr.ObservedTimestamp() == 0 || x.MaxClockSkew > 0 && t.After(ingestedAt.Add(x.MaxClockSkew)) ||
		x.MaxAge > 0 && t.Before(ingestedAt.Add(-x.MaxAge)) {
		// Retention counts from this time: one not believed is receipt.
		t = ingestedAt
	}
	base := ledger.LogContentRef{Tenant: x.Tenant(res), TraceID: lr.TraceID().String(), SpanID: lr.SpanID().String(),
		EventName: is.clean(conventions.EventNameAttribute, conventions.RecordEventName(lr), maxIDLen), Time: t.UTC(), IngestedAt: ingestedAt}
	for _, r := range refs {
		row := base
		row.Ref = r
		rows = append(rows, row)
	}
	return rows, true
}

// evidence builds the evidence row of a non-call span, or reports false if
// the span is not evidence.
func (x *Extractor) evidence(res pcommon.Resource, r *conventions.Reading, role conventions.Role, span ptrace.Span, ingestedAt time.Time) (ledger.EvidenceSpan, bool) {
	attrs := span.Attributes()
	var is issues
	refs := contentRefs(span, nil, &is)
	category := evidenceCategory(r, role, attrs, spanKind(span))
	switch {
	case category != "":
	case len(refs) > 0:
		category = categoryContent
	default:
		return ledger.EvidenceSpan{}, false
	}
	return x.evidenceRow(res, span, category, refs, is, ingestedAt), true
}

// callContent is the content evidence row of a call span: the references
// on it that none of the call's reference columns holds.
func (x *Extractor) callContent(res pcommon.Resource, c *ledger.Call, span ptrace.Span, ingestedAt time.Time) ledger.EvidenceSpan {
	var is issues
	refs := contentRefs(span, c.Refs(), &is)
	if len(refs) == 0 {
		return ledger.EvidenceSpan{}
	}
	return x.evidenceRow(res, span, categoryContent, refs, is, ingestedAt)
}

func (x *Extractor) evidenceRow(res pcommon.Resource, span ptrace.Span, category string, refs []string, is issues, ingestedAt time.Time) ledger.EvidenceSpan {
	attrs := span.Attributes()
	b := x.base(res, span, ingestedAt, &is)
	e := ledger.EvidenceSpan{
		Tenant: b.tenant, TraceID: b.traceID, SpanID: b.spanID, ParentSpanID: b.parentSpanID,
		ServiceName: b.service, SpanName: b.name, Kind: spanKind(span),
		Category: category, StartTime: b.start, EndTime: b.end, Status: statusOf(span.Status()),
		DBSystem:     is.firstStr(attrs, maxIDLen, conventions.DBSystemName, conventions.DBSystem),
		DBOperation:  is.str(attrs, conventions.DBOperationName, maxIDLen),
		DBCollection: is.firstStr(attrs, maxIDLen, conventions.DBCollectionName, conventions.DBTable),
		DataSourceID: is.str(attrs, conventions.DataSourceID, maxIDLen),
		Documents:    documents(attrs, &is),
		ContentRefs:  refs,
		IngestedAt:   ingestedAt,
	}
	e.DBQueryText, e.DBQueryStatus = queryText(attrs, &is)
	if conventions.IsRequestCategory(category) {
		e.SpanName = conventions.StripQuery(e.SpanName)
		e.SpanAttributes = requestAttributes(attrs, &is)
	}
	if is == nil {
		is = issues{}
	}
	e.AttributeIssues = is
	return e
}

// AttrQuerySanitization is set by the SQL sanitizer on every span whose query
// text it rewrote. The ledger stores query text only under this marker, so
// text that may still hold literals never reaches storage.
const AttrQuerySanitization = conventions.QuerySanitization

func queryText(attrs pcommon.Map, is *issues) (*string, string) {
	key := conventions.DBQueryText
	v, ok := attrs.Get(key)
	if !ok {
		key = conventions.DBStatement
		if v, ok = attrs.Get(key); !ok {
			return nil, ledger.QueryAbsent
		}
	}
	var mark string
	if m, ok := attrs.Get(AttrQuerySanitization); ok {
		mark = m.AsString()
	}
	var status string
	switch mark {
	case "full":
		status = ledger.QuerySanitized
	case "partial":
		status = ledger.QueryPartial
	default:
		return nil, ledger.QueryUnsanitized
	}
	s := is.clean(key, v.AsString(), maxQueryLen)
	return &s, status
}

// documents reads gen_ai.retrieval.documents: a JSON array (in a string) or
// an array of maps. The version travels as an extra "version" property.
func documents(attrs pcommon.Map, is *issues) []ledger.Document {
	const key = conventions.RetrievalDocuments
	v, ok := attrs.Get(key)
	if !ok {
		return openInferenceDocuments(attrs, is)
	}
	var raw []map[string]any
	switch v.Type() {
	case pcommon.ValueTypeStr:
		if err := json.Unmarshal([]byte(v.Str()), &raw); err != nil {
			is.add("invalid_json", key)
			return []ledger.Document{}
		}
	case pcommon.ValueTypeSlice:
		for _, item := range v.Slice().AsRaw() {
			if m, ok := item.(map[string]any); ok {
				raw = append(raw, m)
			}
		}
	default:
		is.add("unsupported_type", key)
		return []ledger.Document{}
	}
	if len(raw) > maxDocuments {
		is.add("truncated", key)
		raw = raw[:maxDocuments]
	}
	out := make([]ledger.Document, 0, len(raw))
	for _, m := range raw {
		d := ledger.Document{ID: is.clean(key+".id", anyString(m["id"]), maxIDLen), Version: is.clean(key+".version", anyString(m["version"]), maxIDLen)}
		if f, ok := m["score"].(float64); ok && !math.IsNaN(f) && !math.IsInf(f, 0) {
			d.Score = &f
		}
		out = append(out, d)
	}
	return out
}

// openInferenceDocuments reads OpenInference's flattened documents:
// retrieval.documents.N.document.id, .score and .metadata (a JSON object
// whose "version" is the document version). Their content is not read.
func openInferenceDocuments(attrs pcommon.Map, is *issues) []ledger.Document {
	const prefix = conventions.OIDocumentsPrefix
	byIndex := map[int]*ledger.Document{}
	for k, v := range attrs.All() {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		idx, field, ok := strings.Cut(rest, conventions.OIDocumentInfix)
		n, err := strconv.Atoi(idx)
		if !ok || err != nil || n < 0 {
			continue
		}
		if byIndex[n] == nil {
			if len(byIndex) == maxDocuments {
				is.add("truncated", "retrieval.documents")
				continue
			}
			byIndex[n] = &ledger.Document{}
		}
		d := byIndex[n]
		switch field {
		case "id":
			d.ID = is.clean(k, v.AsString(), maxIDLen)
		case "score":
			if f, ok := finite(v); ok {
				d.Score = &f
			}
		case "metadata":
			var meta map[string]any
			if json.Unmarshal([]byte(v.AsString()), &meta) == nil {
				d.Version = is.clean(k, anyString(meta["version"]), maxIDLen)
			}
		}
	}
	idxs := make([]int, 0, len(byIndex))
	for n := range byIndex {
		idxs = append(idxs, n)
	}
	slices.Sort(idxs)
	out := make([]ledger.Document, 0, len(idxs))
	for _, n := range idxs {
		out = append(out, *byIndex[n])
	}
	return out
}

func finite(v pcommon.Value) (float64, bool) {
	var f float64
	switch v.Type() {
	case pcommon.ValueTypeDouble:
		f = v.Double()
	case pcommon.ValueTypeInt:
		f = float64(v.Int())
	default:
		return 0, false
	}
	return f, !math.IsNaN(f) && !math.IsInf(f, 0)
}

func anyString(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// spanKind is the span's OTLP kind in lowercase ("server", "consumer", …).
func spanKind(span ptrace.Span) string {
	if s, ok := spanKindNames[span.Kind()]; ok {
		return s
	}
	return strings.ToLower(span.Kind().String())
}

// spanKindNames are the OTLP kinds in lowercase, made once rather than for
// every span.
var spanKindNames = func() map[ptrace.SpanKind]string {
	m := map[ptrace.SpanKind]string{}
	for k := ptrace.SpanKindUnspecified; k <= ptrace.SpanKindConsumer; k++ {
		m[k] = strings.ToLower(k.String())
	}
	return m
}()

// requestAttributes keeps of a request-path span only the keys the
// contract lists (conventions.RequestKeys), a route without any query.
func requestAttributes(attrs pcommon.Map, is *issues) map[string]string {
	out := map[string]string{}
	for _, k := range conventions.RequestKeys {
		v := is.str(attrs, k, maxParamLen)
		if k == conventions.HTTPRoute {
			v = conventions.StripQuery(v)
		}
		if v != "" {
			out[k] = v
		}
	}
	return out
}
