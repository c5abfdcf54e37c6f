// Package ledger is the ledger's row model: the rows (calls, evidence
// spans, log content references), their status values and the columns
// derived from the others. Extraction from spans (ledger/extract), the
// RowBinary encoding (ledger/rowbinary) and the store (ledger/ledgerstore)
// build on it.
package ledger

import (
	"slices"
	"time"

	"github.com/docketlabs/docket/internal/conventions"
)

// Call is one ledger row: one LLM call span. JSON keys are the public column
// names (exports and the API use them). Pointers are NULL when the span did
// not report the value: unknown is never written as zero.
type Call struct {
	Tenant                string            `json:"tenant"`
	TraceID               string            `json:"trace_id"`
	SpanID                string            `json:"span_id"`
	ParentSpanID          string            `json:"parent_span_id"`
	ServiceName           string            `json:"service_name"`
	SpanName              string            `json:"span_name"`
	StartTime             time.Time         `json:"start_time"`
	EndTime               time.Time         `json:"end_time"`
	DurationMS            float64           `json:"duration_ms"`
	TTFTMS                *float64          `json:"ttft_ms"`
	Operation             string            `json:"operation"`
	Provider              string            `json:"provider"`
	RequestModel          string            `json:"request_model"`
	ResponseModel         string            `json:"response_model"`
	ResponseID            string            `json:"response_id"`
	InputTokens           *int64            `json:"input_tokens"`
	OutputTokens          *int64            `json:"output_tokens"`
	CacheReadTokens       *int64            `json:"cache_read_tokens"`
	CacheWriteTokens      *int64            `json:"cache_write_tokens"`
	ReasoningTokens       *int64            `json:"reasoning_tokens"`
	UsageSource           string            `json:"usage_source"`
	FinishReasons         []string          `json:"finish_reasons"`
	Status                string            `json:"status"`
	ErrorType             string            `json:"error_type"`
	ErrorClass            string            `json:"error_class"`
	HTTPStatus            *int64            `json:"http_status"`
	RetryAttempt          *int64            `json:"retry_attempt"`
	Temperature           *float64          `json:"temperature"`
	TopP                  *float64          `json:"top_p"`
	TopK                  *float64          `json:"top_k"`
	MaxTokens             *int64            `json:"max_tokens"`
	Seed                  *int64            `json:"seed"`
	StopSequences         []string          `json:"stop_sequences"`
	RequestParams         map[string]string `json:"request_params"`
	EndUserRef            string            `json:"end_user_ref"`
	InputRef              string            `json:"input_ref"`
	OutputRef             string            `json:"output_ref"`
	SystemInstructionsRef string            `json:"system_instructions_ref"`
	ToolDefinitionsRef    string            `json:"tool_definitions_ref"`
	ContentStatus         string            `json:"content_status"`
	ContentBytes          *int64            `json:"content_bytes"`
	CostUSD               *string           `json:"cost_usd"`
	CostStatus            string            `json:"cost_status"`
	PriceRef              string            `json:"price_ref"`
	AttributeIssues       []string          `json:"attribute_issues"`
	IngestedAt            time.Time         `json:"ingested_at"`
	// EvidenceSpanIDs are the other spans of the trace that describe the
	// same provider call (a second instrumentation, a wrapper repeating
	// it), merged into this row when read (the provider_calls view). Not
	// stored with the row.
	EvidenceSpanIDs []string `json:"evidence_span_ids,omitempty"`
	// MemberRefs are the content references of every span of the call
	// (each instrumentation may have stored its own copy of the prompt),
	// read with the merged row; the reference columns hold one of each.
	MemberRefs []string `json:"member_refs,omitempty"`

	// usageUncertain is the cost status of usage whose family's semantics
	// are unknown for a part the call reported ("" if none); Derive keeps
	// such a call unpriced.
	usageUncertain conventions.CostStatus
}

// MarkUsageUncertain records that the call's usage has a part whose
// family's semantics are unknown (status is the cost status that says
// which); Derive then keeps the call unpriced.
func (c *Call) MarkUsageUncertain(status conventions.CostStatus) { c.usageUncertain = status }

// Refs are the call's content references that are set, in column order
// (input, output, system instructions, tool definitions), then those of the
// other spans describing the same call.
func (c *Call) Refs() []string {
	refs := make([]string, 0, 4+len(c.MemberRefs))
	for _, r := range append([]string{c.InputRef, c.OutputRef, c.SystemInstructionsRef, c.ToolDefinitionsRef}, c.MemberRefs...) {
		if r != "" && !slices.Contains(refs, r) {
			refs = append(refs, r)
		}
	}
	return refs
}

// Document is one retrieved document of a retrieval span.
type Document struct {
	ID      string   `json:"id"`
	Version string   `json:"version"`
	Score   *float64 `json:"score"`
}

// EvidenceSpan is a span kept as evidence for the trace it belongs to: a
// database query (sanitized text only), a retrieval, or another GenAI step.
type EvidenceSpan struct {
	Tenant        string     `json:"tenant"`
	TraceID       string     `json:"trace_id"`
	SpanID        string     `json:"span_id"`
	ParentSpanID  string     `json:"parent_span_id"`
	ServiceName   string     `json:"service_name"`
	SpanName      string     `json:"span_name"`
	Kind          string     `json:"kind"`
	Category      string     `json:"category"`
	StartTime     time.Time  `json:"start_time"`
	EndTime       time.Time  `json:"end_time"`
	Status        string     `json:"status"`
	DBSystem      string     `json:"db_system"`
	DBOperation   string     `json:"db_operation"`
	DBCollection  string     `json:"db_collection"`
	DBQueryText   *string    `json:"db_query_text"`
	DBQueryStatus string     `json:"db_query_status"`
	DataSourceID  string     `json:"data_source_id"`
	Documents     []Document `json:"documents"`
	// ContentRefs are the references the content processor left on the
	// span and its events (tool-call arguments, document texts, workflow
	// inputs, content events): deletion requests and legal holds reach
	// that content through the calls of the same trace.
	ContentRefs []string `json:"content_refs"`
	// SpanAttributes are what the ledger keeps of a request-path span
	// (server, producer, consumer): route, method, status, messaging
	// system and destination — conventions.RequestKeys, nothing else.
	SpanAttributes  map[string]string `json:"span_attributes,omitempty"`
	AttributeIssues []string          `json:"attribute_issues"`
	IngestedAt      time.Time         `json:"ingested_at"`
}

// LogContentRef links a content reference left on a log record to the
// span whose context the record carried: the content belongs to that
// span's call (or, for a span that is not a call, to its trace).
type LogContentRef struct {
	Tenant    string `json:"tenant"`
	TraceID   string `json:"trace_id"`
	SpanID    string `json:"span_id"`
	Ref       string `json:"ref"`
	EventName string `json:"event_name"`
	// Time is the record's time (observed time when it has none, receipt
	// when neither is believable): content retention counts from it.
	Time       time.Time `json:"time"`
	IngestedAt time.Time `json:"ingested_at"`
}

// Values of Call.Status and EvidenceSpan.Status (the span status code).
const (
	StatusOK    = "ok"
	StatusError = "error"
	StatusUnset = "unset"
)

// Values of Call.UsageSource.
const (
	UsageReported = "reported"
	UsagePartial  = "partial"
	UsageMissing  = "missing"
)

// Values of Call.ContentStatus set by the ledger itself; the content
// processor sets the others (stored, not_captured, over_limit, …).
const (
	// ContentNone: the span carried no content and no reference.
	ContentNone = "none"
	// ContentOnSpan: content reached the ledger exporter still on the span
	// (no content processor ran). The ledger never stores it.
	ContentOnSpan = "on_span_not_stored"
)

// Values of EvidenceSpan.DBQueryStatus.
const (
	QuerySanitized = "sanitized"
	QueryPartial   = "partial"
	// QueryUnsanitized: the text did not carry the sanitizer's marker, so it
	// was not stored (it may hold literals).
	QueryUnsanitized = "not_stored_unsanitized"
	QueryAbsent      = "absent"
)
