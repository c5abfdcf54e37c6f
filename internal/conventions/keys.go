// Package conventions is Docket's one contract with the instrumentation
// libraries: which spans are LLM calls and which only wrap, step or total
// them; where each ledger column's value lives, per family, with its unit
// and its token semantics; which attributes are content; the attributes
// Docket itself writes. The content processor, the ledger exporter, replay,
// the lifecycle and the UI all read it; no other package spells a key.
//
// Adding a family or a key is one entry in the tables below (families.go,
// columns.go, content.go) and a fixture in ledger/extract/testdata/families.
package conventions

// Keys of the OpenTelemetry GenAI conventions that Docket writes as well as
// reads (replay traces its own calls with them).
const (
	OperationName      = "gen_ai.operation.name"
	ProviderName       = "gen_ai.provider.name"
	System             = "gen_ai.system"
	RequestModel       = "gen_ai.request.model"
	ResponseModel      = "gen_ai.response.model"
	ResponseID         = "gen_ai.response.id"
	FinishReasons      = "gen_ai.response.finish_reasons"
	TimeToFirstChunk   = "gen_ai.response.time_to_first_chunk"
	UsageInput         = "gen_ai.usage.input_tokens"
	UsageOutput        = "gen_ai.usage.output_tokens"
	UsageCacheRead     = "gen_ai.usage.cache_read.input_tokens"
	UsageCacheCreation = "gen_ai.usage.cache_creation.input_tokens"
	UsageReasoning     = "gen_ai.usage.reasoning.output_tokens"
	RequestTemperature = "gen_ai.request.temperature"
	RequestTopP        = "gen_ai.request.top_p"
	RequestTopK        = "gen_ai.request.top_k"
	RequestMaxTokens   = "gen_ai.request.max_tokens"
	RequestSeed        = "gen_ai.request.seed"
	RequestStop        = "gen_ai.request.stop_sequences"
	RequestStream      = "gen_ai.request.stream"
	RequestPrefix      = "gen_ai.request."
	InputMessages      = "gen_ai.input.messages"
	OutputMessages     = "gen_ai.output.messages"
	SystemInstructions = "gen_ai.system_instructions"
	ToolDefinitions    = "gen_ai.tool.definitions"
	Prompt             = "gen_ai.prompt"
	Completion         = "gen_ai.completion"
	RetrievalDocuments = "gen_ai.retrieval.documents"
	DataSourceID       = "gen_ai.data_source.id"
	// Flattened message and tool lists (OpenInference, OpenLLMetry).
	LLMInputMessages    = "llm.input_messages"
	LLMOutputMessages   = "llm.output_messages"
	LLMTools            = "llm.tools"
	LLMRequestFunctions = "llm.request.functions"
	InputValue          = "input.value"
	OutputValue         = "output.value"
	// InvocationParameters is OpenInference's JSON object of the request's
	// parameters (model, sampling, tools, instructions).
	InvocationParameters = "llm.invocation_parameters"
	OpenInferenceKind    = "openinference.span.kind"
	ErrorType            = "error.type"
	EndUser              = "enduser.pseudo.id"
	ServiceName          = "service.name"
)

// Keys of the evidence spans (databases and retrievals).
const (
	DBSystemName     = "db.system.name"
	DBSystem         = "db.system"
	DBOperationName  = "db.operation.name"
	DBCollectionName = "db.collection.name"
	DBTable          = "db.sql.table"
	DBQueryText      = "db.query.text"
	DBStatement      = "db.statement"
	// OpenInference's flattened documents: Prefix N .document. field.
	OIDocumentsPrefix = "retrieval.documents."
	OIDocumentInfix   = ".document."
)

// Attributes Docket writes.
const (
	// The content processor's references and summary.
	InputRef              = InputMessages + RefSuffix
	OutputRef             = OutputMessages + RefSuffix
	SystemInstructionsRef = SystemInstructions + RefSuffix
	ToolDefinitionsRef    = ToolDefinitions + RefSuffix
	ContentStatus         = "docket.content.status"
	ContentBytes          = "docket.content.bytes"
	// ContentBodyRef references a content log record's body.
	ContentBodyRef = "docket.content.body_ref"
	// ContentAttributesRef references the non-metadata attributes of a
	// content event.
	ContentAttributesRef = "docket.content.attributes_ref"
	// ContentItemStatusPrefix + source explains a content item that was
	// not stored.
	ContentItemStatusPrefix = "docket.content.status."
	// QuerySanitization is set by the SQL sanitizer on every span whose
	// query text it rewrote.
	QuerySanitization = "db.query.sanitization"
	// ReplayPrefix names the call a replay replays.
	ReplayPrefix = "docket.replay."
)

// RefKeys are, per reference column of a call, the attributes the content
// processor leaves for it, best first: the GenAI conventions' keys, then
// OpenInference's, then the older ones OpenLLMetry and the AI SDK send
// (an embedding call's input is the texts it embeds: ai.values, ai.value).
var RefKeys = struct{ Input, Output, SystemInstructions, ToolDefinitions []string }{
	Input:              []string{InputRef, LLMInputMessages + RefSuffix, InputValue + RefSuffix, Prompt + RefSuffix, "ai.prompt.messages" + RefSuffix, "ai.prompt" + RefSuffix, "ai.values" + RefSuffix, "ai.value" + RefSuffix},
	Output:             []string{OutputRef, LLMOutputMessages + RefSuffix, OutputValue + RefSuffix, Completion + RefSuffix, "ai.response.text" + RefSuffix, "ai.response.object" + RefSuffix},
	SystemInstructions: []string{SystemInstructionsRef},
	ToolDefinitions:    []string{ToolDefinitionsRef, LLMTools + RefSuffix, LLMRequestFunctions + RefSuffix, "ai.prompt.tools" + RefSuffix},
}
