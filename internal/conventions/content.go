package conventions

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/plog"
)

// ContentKey is an attribute that carries content. The attribute itself and
// its indexed forms (Name.N.content, Name.N.role, … as OpenLLMetry sends
// them) are one content item, stored under Kind and referenced by
// Name+RefSuffix. With a Leaf, only the indexed forms Name.N.Leaf are
// content: the rest of each indexed entry (a retrieved document's ID and
// score) stays as evidence. Exact keys own only the attribute itself: bare
// names such as "input" must not take "input.mime_type" along.
type ContentKey struct {
	Name, Kind, Leaf string
	Exact            bool
}

// RefSuffix ends the attribute that references a content item once the
// content processor has stored it.
const RefSuffix = "_ref"

// RefName is the attribute that references k's stored content.
func (k ContentKey) RefName() string { return k.Name + RefSuffix }

// IsRefName reports whether attr is the reference attribute of a content
// key (gen_ai.input.messages_ref, llm.tools_ref, …).
func IsRefName(attr string) bool {
	i, ok := contentIndex[attr]
	return ok && i < 0
}

// Owns reports whether attr is part of k's content item.
func (k ContentKey) Owns(attr string) bool {
	rest, ok := strings.CutPrefix(attr, k.Name)
	switch {
	case !ok:
		return false
	case rest == "":
		return true
	case k.Exact || rest[0] != '.':
		return false
	case k.Leaf == "":
		return true
	}
	rest = rest[1:]
	digits := 0
	for digits < len(rest) && rest[digits] >= '0' && rest[digits] <= '9' {
		digits++
	}
	if digits == 0 || digits == len(rest) || rest[digits] != '.' {
		return false
	}
	rest, ok = strings.CutPrefix(rest[digits+1:], k.Leaf)
	return ok && (rest == "" || rest[0] == '.')
}

// ContentKeys are looked for on spans, span events and log records, per
// family (CONVENTIONS.md's survey). Allow-lists leak, so a family's whole
// namespace of payload keys is listed, not only the ones seen so far. An
// attribute belongs to the most specific key owning it.
var ContentKeys = []ContentKey{
	// OpenTelemetry GenAI, current and deprecated; Microsoft's additions.
	{Name: InputMessages, Kind: "input.messages"},
	{Name: OutputMessages, Kind: "output.messages"},
	{Name: SystemInstructions, Kind: "system_instructions"},
	{Name: ToolDefinitions, Kind: "tool.definitions"},
	{Name: "gen_ai.tool.call.arguments", Kind: "tool.call.arguments"},
	{Name: "gen_ai.tool.call.result", Kind: "tool.call.result"},
	{Name: Prompt, Kind: "prompt"},
	{Name: Completion, Kind: "completion"},
	{Name: "gen_ai.event.content", Kind: "event.content"},
	{Name: "gen_ai.agent.invocation_input", Kind: "agent.input"},
	{Name: "gen_ai.content.revised_prompt", Kind: "prompt"},
	{Name: "gen_ai.agent.actual_output", Kind: "agent.output"},
	{Name: "gen_ai.agent.human_input", Kind: "agent.input"},
	{Name: "gen_ai.agent.tools", Kind: "tool.definitions"},
	// OpenInference (Arize Phoenix and its instrumentations).
	{Name: InputValue, Kind: "input.value"},
	{Name: OutputValue, Kind: "output.value"},
	{Name: LLMInputMessages, Kind: "input.messages"},
	{Name: LLMOutputMessages, Kind: "output.messages"},
	{Name: "llm.prompts", Kind: "prompt"},
	{Name: "llm.prompt_template.template", Kind: "prompt_template"},
	{Name: "llm.prompt_template.variables", Kind: "prompt_template.variables"},
	{Name: LLMTools, Kind: "tool.definitions"},
	// The invocation parameters hold the tools and the Responses API's
	// instructions; their metadata is lifted out first (see Lifts).
	{Name: InvocationParameters, Kind: "invocation_parameters"},
	{Name: "embedding.embeddings", Kind: "embeddings"},
	{Name: "retrieval.documents", Kind: "retrieval.documents", Leaf: "document.content"},
	{Name: "reranker.input_documents", Kind: "reranker.documents", Leaf: "document.content"},
	{Name: "reranker.output_documents", Kind: "reranker.documents", Leaf: "document.content"},
	{Name: "reranker.query", Kind: "reranker.query"},
	// OpenLLMetry (Traceloop) beyond gen_ai.prompt and gen_ai.completion:
	// workflow and task inputs and outputs, managed prompt templates, the
	// functions offered to the model, MCP tool calls, and the documents and
	// vectors of its vector-database span events.
	{Name: "traceloop.entity.input", Kind: "entity.input"},
	{Name: "traceloop.entity.output", Kind: "entity.output"},
	{Name: "traceloop.prompt.template", Kind: "prompt_template"},
	{Name: "traceloop.prompt.template_variables", Kind: "prompt_template.variables"},
	{Name: LLMRequestFunctions, Kind: "tool.definitions"},
	{Name: "llm.completions", Kind: "completion"},
	{Name: "mcp.request.argument", Kind: "tool.call.arguments"},
	{Name: "mcp.response.value", Kind: "tool.call.result"},
	{Name: "db.query.result.document", Kind: "retrieval.documents"},
	{Name: "db.search.result.entity", Kind: "retrieval.documents"},
	{Name: "db.query.result.vector", Kind: "embeddings"},
	{Name: "db.query.embeddings.vector", Kind: "embeddings"},
	{Name: "db.search.embeddings.vector", Kind: "embeddings"},
	// Vercel AI SDK ai.* spans (≤ 6, and 7 with LegacyOpenTelemetry; 7's
	// opt-in extras). ai.response.id, .model, .finishReason and the timings
	// are metadata and stay.
	{Name: "ai.prompt", Kind: "prompt"},
	{Name: "ai.prompt.messages", Kind: "input.messages"},
	{Name: "ai.prompt.tools", Kind: "tool.definitions"},
	{Name: "ai.prompt.toolChoice", Kind: "tool.choice"},
	{Name: "ai.response.text", Kind: "output.messages"},
	{Name: "ai.response.toolCalls", Kind: "tool.call.arguments"},
	{Name: "ai.response.object", Kind: "output.messages"},
	{Name: "ai.response.reasoning", Kind: "output.reasoning"},
	{Name: "ai.response.providerMetadata", Kind: "provider_metadata"},
	{Name: "ai.response.files", Kind: "output.files"},
	{Name: "ai.result", Kind: "output.messages"},
	{Name: "ai.toolCall.args", Kind: "tool.call.arguments"},
	{Name: "ai.toolCall.result", Kind: "tool.call.result"},
	{Name: "ai.value", Kind: "embeddings.input"},
	{Name: "ai.values", Kind: "embeddings.input"},
	{Name: "ai.embedding", Kind: "embeddings"},
	{Name: "ai.embeddings", Kind: "embeddings"},
	{Name: "ai.documents", Kind: "retrieval.documents"},
	{Name: "ai.ranking", Kind: "retrieval.documents"},
	{Name: "ai.request.text", Kind: "prompt"},
	{Name: "ai.schema", Kind: "schema"},
	{Name: "ai.settings", Kind: "settings"},
	{Name: "ai.telemetry.metadata", Kind: "metadata"},
	{Name: "ai.request.headers", Kind: "request.headers"},
	// LangSmith OTel exporter.
	{Name: "gen_ai.request.extra_query", Kind: "request.extra"},
	{Name: "gen_ai.request.extra_body", Kind: "request.extra"},
	{Name: "gen_ai.serialized", Kind: "serialized"},
	{Name: "langsmith.metadata", Kind: "metadata"},
	// Langfuse SDK attributes.
	{Name: "langfuse.trace.input", Kind: "input.value"},
	{Name: "langfuse.trace.output", Kind: "output.value"},
	{Name: "langfuse.observation.input", Kind: "input.value"},
	{Name: "langfuse.observation.output", Kind: "output.value"},
	{Name: "langfuse.trace.metadata", Kind: "metadata"},
	{Name: "langfuse.observation.metadata", Kind: "metadata"},
	{Name: "langfuse.observation.model.parameters", Kind: "invocation_parameters"},
	// pydantic-ai / Logfire.
	{Name: "pydantic_ai.all_messages", Kind: "input.messages"},
	{Name: "final_result", Kind: "output.value", Exact: true},
	{Name: "tool_arguments", Kind: "tool.call.arguments", Exact: true},
	{Name: "tool_response", Kind: "tool.call.result", Exact: true},
	{Name: "events", Kind: "events", Exact: true},
	{Name: "all_messages_events", Kind: "events", Exact: true},
	{Name: "model_request_parameters", Kind: "invocation_parameters", Exact: true},
	{Name: "logfire.msg", Kind: "message", Exact: true},
	{Name: "metadata", Kind: "metadata"},
	// Google ADK.
	{Name: "gcp.vertex.agent.llm_request", Kind: "input.value"},
	{Name: "gcp.vertex.agent.llm_response", Kind: "output.value"},
	{Name: "gcp.vertex.agent.tool_call_args", Kind: "tool.call.arguments"},
	{Name: "gcp.vertex.agent.tool_response", Kind: "tool.call.result"},
	{Name: "gcp.vertex.agent.data", Kind: "data"},
	{Name: "http.request.body.content", Kind: "http.body"},
	{Name: "http.response.body.content", Kind: "http.body"},
	// MLflow.
	{Name: "mlflow.spanInputs", Kind: "input.value"},
	{Name: "mlflow.spanOutputs", Kind: "output.value"},
	{Name: "mlflow.chat.messages", Kind: "input.messages"},
	{Name: "mlflow.chat.tools", Kind: "tool.definitions"},
	// Strands Agents.
	{Name: "system_prompt", Kind: "system_instructions", Exact: true},
	// Spring AI.
	{Name: "spring.ai.chat.client.user.text", Kind: "prompt"},
	{Name: "spring.ai.chat.client.user.params", Kind: "prompt_template.variables"},
	{Name: "spring.ai.chat.client.system.text", Kind: "system_instructions"},
	{Name: "spring.ai.chat.client.system.params", Kind: "prompt_template.variables"},
	{Name: "spring.ai.tool.call.arguments", Kind: "tool.call.arguments"},
	{Name: "spring.ai.tool.call.result", Kind: "tool.call.result"},
	{Name: "spring.ai.tool.definition", Kind: "tool.definitions"},
	{Name: "db.vector.query.content", Kind: "retrieval.query"},
	{Name: "db.vector.query.response.documents", Kind: "retrieval.documents"},
	// LiteLLM OTel callback (its raw_gen_ai_request span's llm.{provider}.*
	// is read as content through the span name, see RawRequestSpan).
	{Name: "hidden_params", Kind: "metadata", Exact: true},
	{Name: "message.content", Kind: "message", Exact: true},
	// Others from Langfuse's ingester list.
	{Name: "genkit:input", Kind: "input.value"},
	{Name: "genkit:output", Kind: "output.value"},
	{Name: "input", Kind: "input.value", Exact: true},
	{Name: "output", Kind: "output.value", Exact: true},
	{Name: "prompt", Kind: "prompt", Exact: true},
}

// ContentEvents are the GenAI event names whose payload is content: the
// body of such a log record, and the attributes of such an event or log
// record other than the metadata kept, are moved to the store. The value is
// the kind the payload is stored under.
var ContentEvents = map[string]string{
	"gen_ai.system.message":                     "system.message",
	"gen_ai.user.message":                       "user.message",
	"gen_ai.assistant.message":                  "assistant.message",
	"gen_ai.tool.message":                       "tool.message",
	"gen_ai.choice":                             "choice",
	"gen_ai.client.inference.operation.details": "inference.operation.details",
	"gen_ai.content.prompt":                     "content.prompt",
	"gen_ai.content.completion":                 "content.completion",
	"memory.query":                              "memory.query",
	"memory.content":                            "memory.content",
}

// MetadataNamespaces prefix the attributes of a content event that are
// metadata and stay on the telemetry: the GenAI conventions' and Docket's
// own. Content keys among them are moved all the same.
var MetadataNamespaces = []string{"gen_ai.", "docket."}

// ContentEventMetadata are the structural fields of the message events
// that stay on the telemetry.
var ContentEventMetadata = []string{EventNameAttribute, "index", "finish_reason", "role", "id"}

// contentIndex maps each content key's name to its index in ContentKeys,
// and each key's reference (Name+RefSuffix) to -1: a reference is never
// content, even where it looks like an indexed form of a broader key
// (ai.prompt.messages_ref under ai.prompt).
var contentIndex = func() map[string]int {
	m := make(map[string]int, 2*len(ContentKeys))
	for i, k := range ContentKeys {
		m[k.Name] = i
	}
	for _, k := range ContentKeys {
		if _, ok := m[k.Name+RefSuffix]; !ok {
			m[k.Name+RefSuffix] = -1
		}
	}
	return m
}()

// ContentIndex returns the index in ContentKeys of the item an attribute
// belongs to, or -1: the longest key name that is the attribute or a dotted
// prefix of it and owns it.
func ContentIndex(attr string) int {
	if i, ok := contentIndex[attr]; ok && i < 0 {
		return -1
	}
	for name := attr; ; {
		if i, ok := contentIndex[name]; ok && i >= 0 && ContentKeys[i].Owns(attr) {
			return i
		}
		dot := strings.LastIndexByte(name, '.')
		if dot < 0 {
			return -1
		}
		name = name[:dot]
	}
}

// IsContent reports whether an attribute carries content (a prompt, an
// answer, a document's text) rather than metadata.
func IsContent(attr string) bool { return ContentIndex(attr) >= 0 }

// EventNameAttribute names a log record's event where the record's own
// event name field is empty (older SDKs).
const EventNameAttribute = "event.name"

// RecordEventName is a log record's event name: its field, else the
// attribute older SDKs set.
func RecordEventName(lr plog.LogRecord) string {
	if n := lr.EventName(); n != "" {
		return n
	}
	if v, ok := lr.Attributes().Get(EventNameAttribute); ok {
		return v.AsString()
	}
	return ""
}
