package ledger

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/internal/contentkeys"
	"github.com/docketlabs/docket/internal/conventions"
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
	// TenantAttribute is the resource attribute naming the tenant.
	TenantAttribute string
	// DefaultTenant is used when the resource has no tenant attribute.
	DefaultTenant string
	// Prices prices the calls; nil leaves every cost unknown_model.
	Prices *pricing.Table
}

// inferenceOperations are the gen_ai.operation.name values of a model call.
// Agent, tool and retrieval spans wrap or feed calls but are not calls.
var inferenceOperations = map[string]bool{
	"chat": true, "text_completion": true, "generate_content": true, "embeddings": true,
	"completion": true, "create_embeddings": true,
}

var notCallOperations = map[string]bool{
	"execute_tool": true, "invoke_agent": true, "create_agent": true, "retrieval": true,
	"invoke_workflow": true,
}

// IsLLMCall reports whether a span is an LLM call per the GenAI conventions:
// an inference operation, an unknown operation that names a model, or a span
// of an older instrumentation that carries only gen_ai.system and a model.
func IsLLMCall(attrs pcommon.Map) bool {
	if openInferenceOperation(attrs) != "" {
		return true
	}
	hasModel := has(attrs, "gen_ai.request.model") || has(attrs, "gen_ai.response.model")
	if op, ok := attrs.Get("gen_ai.operation.name"); ok {
		name := op.AsString()
		if inferenceOperations[name] {
			return true
		}
		if notCallOperations[name] {
			return false
		}
		return hasModel
	}
	return has(attrs, "gen_ai.system") && (hasModel || has(attrs, "gen_ai.usage.input_tokens") || has(attrs, "gen_ai.usage.prompt_tokens"))
}

// openInferenceKind is a span's openinference.span.kind in upper case, or
// "" on a span of other conventions.
func openInferenceKind(attrs pcommon.Map) string {
	if v, ok := attrs.Get("openinference.span.kind"); ok {
		return strings.ToUpper(v.AsString())
	}
	return ""
}

// openInferenceOperation is the GenAI operation of an OpenInference model
// call span (openinference.span.kind LLM or EMBEDDING), or "".
func openInferenceOperation(attrs pcommon.Map) string {
	switch openInferenceKind(attrs) {
	case "LLM":
		return "chat"
	case "EMBEDDING":
		return "embeddings"
	}
	return ""
}

// maxInvocationParams bounds the JSON of llm.invocation_parameters read.
const maxInvocationParams = 64 << 10

// openInferenceParams fills the sampling columns the GenAI attributes left
// empty from OpenInference's llm.invocation_parameters: a JSON object of
// the parameters as the provider's API takes them.
func openInferenceParams(attrs pcommon.Map, c *Call, is *issues) {
	const key = "llm.invocation_parameters"
	v, ok := attrs.Get(key)
	if !ok {
		return
	}
	raw := v.AsString()
	if len(raw) > maxInvocationParams {
		is.add("truncated", key)
		return
	}
	var p struct {
		Temperature         *float64        `json:"temperature"`
		TopP                *float64        `json:"top_p"`
		TopK                *float64        `json:"top_k"`
		MaxTokens           *int64          `json:"max_tokens"`
		MaxCompletionTokens *int64          `json:"max_completion_tokens"`
		MaxOutputTokens     *int64          `json:"max_output_tokens"`
		Seed                *int64          `json:"seed"`
		Stop                json.RawMessage `json:"stop"`
	}
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		is.add("invalid_json", key)
		return
	}
	fill := func(dst **float64, v *float64) {
		if *dst == nil && v != nil && !math.IsNaN(*v) && !math.IsInf(*v, 0) {
			*dst = v
		}
	}
	fill(&c.Temperature, p.Temperature)
	fill(&c.TopP, p.TopP)
	fill(&c.TopK, p.TopK)
	for _, n := range []*int64{p.MaxTokens, p.MaxCompletionTokens, p.MaxOutputTokens} {
		if c.MaxTokens == nil && n != nil {
			c.MaxTokens = n
		}
	}
	if c.Seed == nil {
		c.Seed = p.Seed
	}
	if len(c.StopSequences) == 0 && len(p.Stop) > 0 {
		var one string
		var many []string
		switch {
		case json.Unmarshal(p.Stop, &one) == nil:
			c.StopSequences = []string{is.clean(key+".stop", one, maxParamLen)}
		case json.Unmarshal(p.Stop, &many) == nil:
			for _, s := range many {
				c.StopSequences = append(c.StopSequences, is.clean(key+".stop", s, maxParamLen))
			}
		}
	}
}

// Evidence category of a span that is not an LLM call, or "" if the span is
// not evidence.
func evidenceCategory(attrs pcommon.Map) string {
	oiKind := openInferenceKind(attrs)
	if op, ok := attrs.Get("gen_ai.operation.name"); ok && op.AsString() == "retrieval" || has(attrs, "gen_ai.retrieval.documents") || oiKind == "RETRIEVER" {
		return "retrieval"
	}
	if has(attrs, "db.system.name") || has(attrs, "db.system") || has(attrs, "db.query.text") || has(attrs, "db.statement") {
		return "db"
	}
	if has(attrs, "gen_ai.operation.name") || oiKind != "" {
		return "genai"
	}
	return ""
}

// Tenant returns the tenant of a resource.
func (x *Extractor) Tenant(res pcommon.Resource) string {
	return conventions.Tenant(res.Attributes(), x.TenantAttribute, x.DefaultTenant)
}

// issues collects problems with attribute values for the row's
// attribute_issues column, so bad input is visible instead of silently
// repaired.
type issues []string

func (is *issues) add(kind, key string) { *is = append(*is, kind+":"+key) }

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
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
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

// int64Attr reads an integer that may arrive as int, integral double or
// decimal string. Anything else is an issue and NULL, never 0.
func (is *issues) int64Attr(attrs pcommon.Map, keys ...string) *int64 {
	for _, key := range keys {
		v, ok := attrs.Get(key)
		if !ok {
			continue
		}
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
	return nil
}

// inRange keeps n only within [lo, hi], the range of its column; outside it
// the value is an issue and NULL.
func (is *issues) inRange(n *int64, key string, lo, hi int64) *int64 {
	if n != nil && (*n < lo || *n > hi) {
		is.add("out_of_range", key)
		return nil
	}
	return n
}

func (is *issues) float64Attr(attrs pcommon.Map, key string) *float64 {
	v, ok := attrs.Get(key)
	if !ok {
		return nil
	}
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

// strList reads a string array attribute (or a JSON array in a string, as
// some SDKs send slices).
func (is *issues) strList(attrs pcommon.Map, key string) []string {
	v, ok := attrs.Get(key)
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
		if err := json.Unmarshal([]byte(v.Str()), &raw); err != nil {
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
		return StatusOK
	case ptrace.StatusCodeError:
		return StatusError
	}
	return StatusUnset
}

// spanBase is what every stored span shares.
type spanBase struct {
	tenant, traceID, spanID, parentSpanID, service, name string
	start, end                                           time.Time
}

func (x *Extractor) base(res pcommon.Resource, span ptrace.Span, is *issues) spanBase {
	b := spanBase{
		tenant:  x.Tenant(res),
		traceID: span.TraceID().String(),
		spanID:  span.SpanID().String(),
		name:    is.clean("span.name", span.Name(), maxIDLen),
		start:   span.StartTimestamp().AsTime().UTC(),
		end:     span.EndTimestamp().AsTime().UTC(),
	}
	if !span.ParentSpanID().IsEmpty() {
		b.parentSpanID = span.ParentSpanID().String()
	}
	if v, ok := res.Attributes().Get("service.name"); ok {
		b.service = is.clean("service.name", v.AsString(), maxIDLen)
	}
	return b
}

// Call builds the ledger row of an LLM call span.
func (x *Extractor) Call(res pcommon.Resource, span ptrace.Span, ingestedAt time.Time) Call {
	attrs := span.Attributes()
	var is issues
	b := x.base(res, span, &is)
	c := Call{
		Tenant: b.tenant, TraceID: b.traceID, SpanID: b.spanID, ParentSpanID: b.parentSpanID,
		ServiceName: b.service, SpanName: b.name, StartTime: b.start, EndTime: b.end,
		DurationMS:    durationMS(b.start, b.end),
		Operation:     is.str(attrs, "gen_ai.operation.name", maxIDLen),
		Provider:      is.firstStr(attrs, maxIDLen, "gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system"),
		RequestModel:  is.firstStr(attrs, maxIDLen, "gen_ai.request.model", "llm.model_name"),
		ResponseModel: is.firstStr(attrs, maxIDLen, "gen_ai.response.model", "llm.model_name"),
		ResponseID:    is.str(attrs, "gen_ai.response.id", maxIDLen),
		FinishReasons: is.strList(attrs, "gen_ai.response.finish_reasons"),
		Status:        statusOf(span.Status()),
		ErrorType:     is.str(attrs, "error.type", maxIDLen),
		HTTPStatus:    is.inRange(is.int64Attr(attrs, "http.response.status_code", "http.status_code"), "http.response.status_code", 100, 599),
		RetryAttempt:  is.inRange(is.int64Attr(attrs, "http.request.resend_count", "gen_ai.request.retry_attempt"), "http.request.resend_count", 0, math.MaxUint32),
		Temperature:   is.float64Attr(attrs, "gen_ai.request.temperature"),
		TopP:          is.float64Attr(attrs, "gen_ai.request.top_p"),
		TopK:          is.float64Attr(attrs, "gen_ai.request.top_k"),
		MaxTokens:     is.int64Attr(attrs, "gen_ai.request.max_tokens"),
		Seed:          is.int64Attr(attrs, "gen_ai.request.seed"),
		StopSequences: is.strList(attrs, "gen_ai.request.stop_sequences"),
		EndUserRef:    is.str(attrs, "enduser.pseudo.id", maxIDLen),
		IngestedAt:    ingestedAt,
	}
	if c.Operation == "" && has(attrs, "gen_ai.system") {
		c.Operation = is.str(attrs, "llm.request.type", maxIDLen)
	}
	if c.Operation == "" {
		c.Operation = openInferenceOperation(attrs)
	}
	openInferenceParams(attrs, &c, &is)
	if ttft := is.float64Attr(attrs, "gen_ai.response.time_to_first_chunk"); ttft != nil {
		ms := *ttft * 1000
		c.TTFTMS = &ms
	}
	c.InputTokens = is.int64Attr(attrs, "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt")
	c.OutputTokens = is.int64Attr(attrs, "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.token_count.completion")
	c.CacheReadTokens = is.int64Attr(attrs, "gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens",
		"llm.token_count.prompt_details.cache_read")
	c.CacheWriteTokens = is.int64Attr(attrs, "gen_ai.usage.cache_creation.input_tokens", "gen_ai.usage.cache_creation_input_tokens",
		"llm.token_count.prompt_details.cache_write")
	c.ReasoningTokens = is.int64Attr(attrs, "gen_ai.usage.reasoning.output_tokens", "llm.token_count.completion_details.reasoning")
	c.RequestParams = requestParams(attrs, &is)
	contentColumns(span, &c, &is)
	c.Derive(x.Prices)
	if is == nil {
		is = issues{}
	}
	c.AttributeIssues = is
	return c
}

func durationMS(start, end time.Time) float64 {
	if end.Before(start) {
		return 0
	}
	return float64(end.Sub(start)) / float64(time.Millisecond)
}

// Request parameters with columns of their own; the rest of gen_ai.request.*
// goes to the request_params map.
var paramColumns = map[string]bool{
	"gen_ai.request.model": true, "gen_ai.request.temperature": true, "gen_ai.request.top_p": true,
	"gen_ai.request.top_k": true, "gen_ai.request.max_tokens": true, "gen_ai.request.seed": true,
	"gen_ai.request.stop_sequences": true, "gen_ai.request.retry_attempt": true,
}

func requestParams(attrs pcommon.Map, is *issues) map[string]string {
	out := map[string]string{}
	dropped := false
	attrs.Range(func(k string, v pcommon.Value) bool {
		// docket.replay.* name the call a replay replays (package replay).
		replayLink := strings.HasPrefix(k, "docket.replay.")
		if !replayLink && (!strings.HasPrefix(k, "gen_ai.request.") || paramColumns[k]) {
			return true
		}
		if len(out) == maxParamsKept {
			dropped = true
			return false
		}
		name := is.clean("request_param_key", strings.TrimPrefix(k, "gen_ai.request."), maxParamLen)
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
func IsContentAttribute(k string) bool { return contentkeys.Index(k) >= 0 }

// Attribute names of the content processor's output.
const (
	AttrInputRef              = "gen_ai.input.messages_ref"
	AttrOutputRef             = "gen_ai.output.messages_ref"
	AttrSystemInstructionsRef = "gen_ai.system_instructions_ref"
	AttrToolDefinitionsRef    = "gen_ai.tool.definitions_ref"
	AttrContentStatus         = "docket.content.status"
	AttrContentBytes          = "docket.content.bytes"
)

// contentColumns reads the references the content processor left, from
// the span and, for the older forms that carry content on span events
// (gen_ai.content.prompt, gen_ai.client.inference.operation.details, …),
// from its events.
func contentColumns(span ptrace.Span, c *Call, is *issues) {
	attrs := span.Attributes()
	events := span.Events()
	c.fillRefs(attrs, is)
	for i := 0; i < events.Len() && !c.hasAllRefs(); i++ {
		c.fillRefs(events.At(i).Attributes(), is)
	}
	c.ContentStatus = is.str(attrs, AttrContentStatus, maxIDLen)
	c.ContentBytes = is.int64Attr(attrs, AttrContentBytes)
	if c.ContentStatus != "" {
		return
	}
	c.ContentStatus = ContentNone
	if hasContent(attrs) {
		c.ContentStatus = ContentOnSpan
	}
	for i := 0; i < events.Len() && c.ContentStatus == ContentNone; i++ {
		if hasContent(events.At(i).Attributes()) {
			c.ContentStatus = ContentOnSpan
		}
	}
}

// fillRefs fills the references still empty from attrs: the GenAI
// conventions' keys first, then OpenInference's, then the older ones
// OpenLLMetry sends, as the content processor references them.
func (c *Call) fillRefs(attrs pcommon.Map, is *issues) {
	for _, f := range []struct {
		dst  *string
		keys []string
	}{
		{&c.InputRef, []string{AttrInputRef, "llm.input_messages_ref", "input.value_ref", "gen_ai.prompt_ref"}},
		{&c.OutputRef, []string{AttrOutputRef, "llm.output_messages_ref", "output.value_ref", "gen_ai.completion_ref"}},
		{&c.SystemInstructionsRef, []string{AttrSystemInstructionsRef}},
		{&c.ToolDefinitionsRef, []string{AttrToolDefinitionsRef, "llm.tools_ref", "llm.request.functions_ref"}},
	} {
		if *f.dst == "" {
			*f.dst = is.firstStr(attrs, maxIDLen, f.keys...)
		}
	}
}

func (c *Call) hasAllRefs() bool {
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
// values of *_ref attributes that are content store references.
func contentRefs(span ptrace.Span, is *issues) []string {
	refs := []string{}
	collect := func(attrs pcommon.Map) bool {
		for k, v := range attrs.All() {
			if !strings.HasSuffix(k, "_ref") || v.Type() != pcommon.ValueTypeStr {
				continue
			}
			if _, err := contentstore.ParseRef(v.Str()); err != nil {
				continue
			}
			switch {
			case slices.Contains(refs, v.Str()):
			case len(refs) == maxContentRefs:
				is.add("truncated", "content_refs")
				return false
			default:
				refs = append(refs, v.Str())
			}
		}
		return true
	}
	if !collect(span.Attributes()) {
		return refs
	}
	for i := 0; i < span.Events().Len(); i++ {
		if !collect(span.Events().At(i).Attributes()) {
			break
		}
	}
	return refs
}

// Evidence builds the evidence row of a non-call span, or reports false if
// the span is not evidence.
func (x *Extractor) Evidence(res pcommon.Resource, span ptrace.Span, ingestedAt time.Time) (EvidenceSpan, bool) {
	attrs := span.Attributes()
	var is issues
	refs := contentRefs(span, &is)
	category := evidenceCategory(attrs)
	switch {
	case category != "":
	case len(refs) > 0:
		category = categoryContent
	default:
		return EvidenceSpan{}, false
	}
	b := x.base(res, span, &is)
	e := EvidenceSpan{
		Tenant: b.tenant, TraceID: b.traceID, SpanID: b.spanID, ParentSpanID: b.parentSpanID,
		ServiceName: b.service, SpanName: b.name, Kind: strings.ToLower(span.Kind().String()),
		Category: category, StartTime: b.start, EndTime: b.end, Status: statusOf(span.Status()),
		DBSystem:     is.firstStr(attrs, maxIDLen, "db.system.name", "db.system"),
		DBOperation:  is.str(attrs, "db.operation.name", maxIDLen),
		DBCollection: is.firstStr(attrs, maxIDLen, "db.collection.name", "db.sql.table"),
		DataSourceID: is.str(attrs, "gen_ai.data_source.id", maxIDLen),
		Documents:    documents(attrs, &is),
		ContentRefs:  refs,
		IngestedAt:   ingestedAt,
	}
	e.DBQueryText, e.DBQueryStatus = queryText(attrs, &is)
	if is == nil {
		is = issues{}
	}
	e.AttributeIssues = is
	return e, true
}

// AttrQuerySanitization is set by the SQL sanitizer on every span whose query
// text it rewrote. The ledger stores query text only under this marker, so
// text that may still hold literals never reaches storage.
const AttrQuerySanitization = "db.query.sanitization"

func queryText(attrs pcommon.Map, is *issues) (*string, string) {
	key := "db.query.text"
	v, ok := attrs.Get(key)
	if !ok {
		key = "db.statement"
		if v, ok = attrs.Get(key); !ok {
			return nil, QueryAbsent
		}
	}
	var mark string
	if m, ok := attrs.Get(AttrQuerySanitization); ok {
		mark = m.AsString()
	}
	var status string
	switch mark {
	case "full":
		status = QuerySanitized
	case "partial":
		status = QueryPartial
	default:
		return nil, QueryUnsanitized
	}
	s := is.clean(key, v.AsString(), maxQueryLen)
	return &s, status
}

// documents reads gen_ai.retrieval.documents: a JSON array (in a string) or
// an array of maps. The version travels as an extra "version" property.
func documents(attrs pcommon.Map, is *issues) []Document {
	const key = "gen_ai.retrieval.documents"
	v, ok := attrs.Get(key)
	if !ok {
		return openInferenceDocuments(attrs, is)
	}
	var raw []map[string]any
	switch v.Type() {
	case pcommon.ValueTypeStr:
		if err := json.Unmarshal([]byte(v.Str()), &raw); err != nil {
			is.add("invalid_json", key)
			return []Document{}
		}
	case pcommon.ValueTypeSlice:
		for _, item := range v.Slice().AsRaw() {
			if m, ok := item.(map[string]any); ok {
				raw = append(raw, m)
			}
		}
	default:
		is.add("unsupported_type", key)
		return []Document{}
	}
	if len(raw) > maxDocuments {
		is.add("truncated", key)
		raw = raw[:maxDocuments]
	}
	out := make([]Document, 0, len(raw))
	for _, m := range raw {
		d := Document{ID: is.clean(key+".id", anyString(m["id"]), maxIDLen), Version: is.clean(key+".version", anyString(m["version"]), maxIDLen)}
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
func openInferenceDocuments(attrs pcommon.Map, is *issues) []Document {
	const prefix = "retrieval.documents."
	byIndex := map[int]*Document{}
	for k, v := range attrs.All() {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		idx, field, ok := strings.Cut(rest, ".document.")
		n, err := strconv.Atoi(idx)
		if !ok || err != nil || n < 0 {
			continue
		}
		if byIndex[n] == nil {
			if len(byIndex) == maxDocuments {
				is.add("truncated", "retrieval.documents")
				continue
			}
			byIndex[n] = &Document{}
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
	out := make([]Document, 0, len(idxs))
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
