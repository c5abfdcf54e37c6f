package conventions

// Family is one instrumentation library's way of describing LLM calls.
type Family struct {
	Name string
	// Source names the documentation or source the entry was written from.
	Source string
	// Scopes are instrumentation scope name prefixes that identify the
	// family; Markers are attributes whose presence does. Scopes are
	// checked first, then markers in table order.
	Scopes  []string
	Markers []string
	// KindKey is the attribute saying what a span is; Kinds maps its
	// values (compared case-insensitively) to the GenAI operation of a call,
	// or to "" for a span that is never one (a wrapper, agent, step, tool or
	// retrieval). Values not listed fall to the GenAI rule (IsCallSpan).
	KindKey string
	Kinds   map[string]string
	// NotCallMarkers are attributes that make a span never a call (an
	// agent run carrying its calls' total usage).
	NotCallMarkers []string
	// Columns are read before the defaults of Columns.
	Columns map[Column][]Key
	// UnpricedWrites count cache writes billed at a rate the price table
	// does not have (Anthropic's one-hour cache); a call reporting any is
	// not priced.
	UnpricedWrites []string
	// CacheInInput: whether the input count includes cache reads and
	// writes. ReasoningInOutput: whether the output count includes
	// reasoning tokens.
	CacheInInput, ReasoningInOutput TokenRule
}

// NotCallSpanNames are spans that repeat a call's request and are never a
// call themselves (LiteLLM's raw request child).
var NotCallSpanNames = []string{"raw_gen_ai_request"}

// Operations of the GenAI conventions (and the older names still sent)
// that are model calls.
var CallOperations = map[string]bool{
	"chat": true, "text_completion": true, "generate_content": true, "embeddings": true,
	"completion": true, "create_embeddings": true,
	// Semantic Kernel's names.
	"chat.completions": true, "text.completions": true,
}

// NotCallOperations are never a call, whatever they carry: tools, agents
// and their steps (whose usage repeats their calls'), retrievals, workflows.
var NotCallOperations = map[string]bool{
	"execute_tool": true, "invoke_agent": true, "create_agent": true, "retrieval": true,
	"invoke_workflow": true, "agent_step": true, "framework": true,
}

// AggregateMarkers mark spans that total their children's usage: never a
// call, never priced (pydantic-ai's agent totals, pydantic-ai#5523).
var AggregateMarkers = []string{"gen_ai.aggregated_usage.input_tokens", "gen_ai.aggregated_usage.output_tokens"}

var byProvider = func(def Semantics, p map[string]Semantics) TokenRule {
	return TokenRule{Default: def, ByProvider: p}
}

// GenAI is the family of spans that follow the OpenTelemetry GenAI
// conventions (current and deprecated) and of every span no other family
// claims: @opentelemetry/instrumentation-openai, the OTel Python
// instrumentations, AI SDK 7's @ai-sdk/otel, Semantic Kernel.
var GenAI = Family{
	Name:   "otel-genai",
	Source: "semantic-conventions-genai docs/gen-ai/gen-ai-spans.md; @ai-sdk/otel 1.0 dist/index.js",
}

// Families other than GenAI, in detection order.
var Families = []Family{
	{
		Name:           "anthropic-sdk",
		Source:         "@anthropic-ai/sdk 0.137.0 src/lib/internal/tracing/attributes.ts",
		Scopes:         []string{"com.anthropic.sdk"},
		Columns:        map[Column][]Key{ColFinishReasons: keys("anthropic.message.stop_reason"), ColCacheWriteTokens: keys("gen_ai.usage.cache_write.input_tokens")},
		UnpricedWrites: []string{"anthropic.usage.cache_creation.ephemeral_1h_input_tokens"},
	},
	{
		Name:    "vercel-ai",
		Source:  "ai-sdk.dev telemetry docs; ai 6.0 dist/index.js",
		Scopes:  []string{"ai"},
		Markers: []string{"ai.operationId"},
		KindKey: "ai.operationId",
		Kinds: map[string]string{
			"ai.generatetext.dogenerate": "chat", "ai.streamtext.dostream": "chat",
			"ai.generateobject.dogenerate": "chat", "ai.streamobject.dostream": "chat",
			"ai.embed.doembed": "embeddings", "ai.embedmany.doembed": "embeddings",
			"ai.generatetext": "", "ai.streamtext": "", "ai.generateobject": "", "ai.streamobject": "",
			"ai.embed": "", "ai.embedmany": "", "ai.toolcall": "", "ai.rerank": "",
		},
		Columns: map[Column][]Key{
			ColProvider:         keys("ai.model.provider"),
			ColRequestModel:     keys("ai.model.id"),
			ColResponseModel:    keys("ai.response.model"),
			ColResponseID:       keys("ai.response.id"),
			ColFinishReasons:    keys("ai.response.finishReason"),
			ColTTFT:             {{Name: "ai.response.msToFirstChunk", Unit: UnitMilliseconds}, {Name: "ai.stream.msToFirstChunk", Unit: UnitMilliseconds}},
			ColInputTokens:      keys("ai.usage.inputTokens", "ai.usage.promptTokens", "ai.usage.tokens"),
			ColOutputTokens:     keys("ai.usage.outputTokens", "ai.usage.completionTokens"),
			ColCacheReadTokens:  keys("ai.usage.inputTokenDetails.cacheReadTokens", "ai.usage.cachedInputTokens"),
			ColCacheWriteTokens: keys("ai.usage.inputTokenDetails.cacheWriteTokens"),
			ColReasoningTokens:  keys("ai.usage.outputTokenDetails.reasoningTokens", "ai.usage.reasoningTokens"),
			ColTemperature:      keys("ai.settings.temperature"),
			ColMaxTokens:        keys("ai.settings.maxOutputTokens", "ai.settings.maxTokens"),
		},
	},
	{
		Name:    "openinference",
		Source:  "openinference semantic conventions (spec/semantic_conventions.md); @arizeai/openinference-instrumentation-openai 4.2",
		Markers: []string{OpenInferenceKind},
		KindKey: OpenInferenceKind,
		Kinds: map[string]string{
			"llm": "chat", "embedding": "embeddings",
			"chain": "", "agent": "", "tool": "", "retriever": "", "reranker": "", "guardrail": "", "evaluator": "", "prompt": "",
		},
		Columns: map[Column][]Key{
			ColProvider:      keys("llm.provider", "llm.system"),
			ColRequestModel:  {{Name: InvocationParameters, Field: "model"}, k("embedding.model_name"), k("llm.model_name")},
			ColResponseModel: {{Name: OutputValue, Field: "model"}, k("embedding.model_name"), {Name: "llm.model_name", NotStreamed: true}},
			ColResponseID:    {{Name: OutputValue, Field: "id"}},
			// A Responses API answer has no finish reason; its status
			// (completed, incomplete, failed) is the closest, and is what
			// the ledger records for Responses calls of other families.
			ColFinishReasons:    {k("llm.finish_reason"), {Name: OutputValue, Field: "status"}},
			ColInputTokens:      keys("llm.token_count.prompt"),
			ColOutputTokens:     keys("llm.token_count.completion"),
			ColCacheReadTokens:  keys("llm.token_count.prompt_details.cache_read"),
			ColCacheWriteTokens: keys("llm.token_count.prompt_details.cache_write"),
			ColReasoningTokens:  keys("llm.token_count.completion_details.reasoning"),
			ColTemperature:      {{Name: InvocationParameters, Field: "temperature"}},
			ColTopP:             {{Name: InvocationParameters, Field: "top_p"}},
			ColTopK:             {{Name: InvocationParameters, Field: "top_k"}},
			ColMaxTokens:        {{Name: InvocationParameters, Field: "max_tokens"}, {Name: InvocationParameters, Field: "max_completion_tokens"}, {Name: InvocationParameters, Field: "max_output_tokens"}},
			ColSeed:             {{Name: InvocationParameters, Field: "seed"}},
			ColStopSequences:    {{Name: InvocationParameters, Field: "stop"}},
			ColStream:           {{Name: InvocationParameters, Field: "stream"}},
		},
	},
	{
		// JavaScript: Anthropic's own input_tokens, without cache tokens,
		// next to cache_read/creation (instrumentation-anthropic 0.27
		// _endSpan).
		Name:         "openllmetry-js",
		Source:       "@traceloop/instrumentation-anthropic 0.27.0, -openai 0.27.0 dist/index.js",
		Scopes:       []string{"@traceloop/"},
		Columns:      map[Column][]Key{ColInputTokens: keys("llm.usage.prompt_tokens"), ColOutputTokens: keys("llm.usage.completion_tokens")},
		CacheInInput: byProvider(Included, map[string]Semantics{"anthropic": Excluded}),
	},
	{
		// Python OpenLLMetry: how its Anthropic input count treats cache
		// tokens has changed between releases; unknown.
		Name:    "openllmetry-py",
		Source:  "traceloop/openllmetry packages/opentelemetry-instrumentation-*",
		Markers: []string{"llm.usage.total_tokens", "traceloop.span.kind", "traceloop.workflow.name"},
		KindKey: "traceloop.span.kind",
		// A task may be LangChain's model call; it falls to the GenAI rule.
		Kinds:        map[string]string{"workflow": "", "agent": "", "tool": ""},
		Columns:      map[Column][]Key{ColInputTokens: keys("llm.usage.prompt_tokens"), ColOutputTokens: keys("llm.usage.completion_tokens")},
		CacheInInput: byProvider(Included, map[string]Semantics{"anthropic": Unknown}),
	},
	{
		Name:    "langsmith",
		Source:  "langsmith-sdk python/langsmith/_internal/otel/_otel_exporter.py",
		Markers: []string{"langsmith.span.kind"},
		KindKey: "langsmith.span.kind",
		Kinds:   map[string]string{"llm": "chat", "embedding": "embeddings", "chain": "", "tool": "", "retriever": "", "prompt": "", "parser": ""},
	},
	{
		// Langfuse's usage_details are whatever the caller reported.
		Name:    "langfuse",
		Source:  "langfuse packages/shared/src/server/otel/attributes.ts",
		Markers: []string{"langfuse.observation.type"},
		KindKey: "langfuse.observation.type",
		Kinds: map[string]string{"generation": "chat", "embedding": "embeddings",
			"span": "", "event": "", "agent": "", "tool": "", "chain": "", "retriever": "", "evaluator": "", "guardrail": ""},
		Columns: map[Column][]Key{
			ColRequestModel: keys("langfuse.observation.model.name"),
			ColInputTokens:  {{Name: "langfuse.observation.usage_details", Field: "input"}},
			ColOutputTokens: {{Name: "langfuse.observation.usage_details", Field: "output"}},
		},
		CacheInInput:      byProvider(Unknown, nil),
		ReasoningInOutput: byProvider(Unknown, nil),
	},
	{
		Name:    "pydantic-ai",
		Source:  "pydantic-ai pydantic_ai/models/instrumented.py, docs/logfire.md instrumentation versions",
		Scopes:  []string{"pydantic-ai", "pydantic_ai"},
		Markers: []string{"pydantic_ai.all_messages", "model_request_parameters"},
		// v1 agent runs carry their calls' total usage as gen_ai.usage.*.
		NotCallMarkers: []string{"agent_name"},
	},
	{
		// Gemini's candidates count leaves thoughts out; ADK's own
		// attributes do not say which count they pass. Its event ID is
		// ADK's, not the provider's response ID.
		Name:              "google-adk",
		Source:            "google/adk-python src/google/adk/telemetry/tracing.py",
		Scopes:            []string{"gcp.vertex.agent"},
		Markers:           []string{"gcp.vertex.agent.llm_request", "gcp.vertex.agent.llm_response", "gcp.vertex.agent.invocation_id"},
		ReasoningInOutput: byProvider(Unknown, nil),
	},
	{
		// Strands passes the model provider's usage (Bedrock's inputTokens
		// leave cache tokens out, others' do not).
		Name:    "strands",
		Source:  "strands-agents/sdk-python src/strands/telemetry/tracer.py",
		Scopes:  []string{"strands"},
		Markers: []string{"gen_ai.event.start_time"},
		Columns: map[Column][]Key{
			ColCacheWriteTokens: keys("gen_ai.usage.cache_write_input_tokens"),
		},
		CacheInInput: byProvider(Unknown, nil),
	},
	{
		Name:         "spring-ai",
		Source:       "Spring AI reference: observability (spring.ai.kind, gen_ai.*)",
		Scopes:       []string{"org.springframework.ai", "spring-ai"},
		Markers:      []string{"spring.ai.kind"},
		KindKey:      "spring.ai.kind",
		Kinds:        map[string]string{"chat_client": "", "advisor": "", "tool_call": "", "vector_store": "", "embedding_model": "embeddings", "chat_model": "chat"},
		CacheInInput: byProvider(Included, map[string]Semantics{"anthropic": Unknown}),
	},
	{
		Name:   "semantic-kernel",
		Source: "microsoft/semantic-kernel dotnet/src/InternalUtilities/src/Diagnostics/ModelDiagnostics.cs",
		Scopes: []string{"Microsoft.SemanticKernel"},
	},
	{
		// LiteLLM reports OpenAI-shaped usage for every provider: prompt
		// tokens include cache tokens. Its raw_gen_ai_request child span
		// only repeats the request.
		Name:    "litellm",
		Source:  "BerriAI/litellm litellm/integrations/opentelemetry.py",
		Scopes:  []string{"litellm"},
		Markers: []string{"llm.is_streaming", "hidden_params"},
	},
	{
		Name:    "mlflow",
		Source:  "mlflow mlflow/tracing/constant.py (SpanAttributeKey, TokenUsageKey)",
		Markers: []string{"mlflow.spanType"},
		KindKey: "mlflow.spanType",
		// MLflow writes its attributes JSON-encoded: the kind is "\"LLM\"".
		Kinds: map[string]string{`"llm"`: "chat", `"chat_model"`: "chat", `"embedding"`: "embeddings",
			`"chain"`: "", `"agent"`: "", `"tool"`: "", `"retriever"`: "", `"reranker"`: "", `"parser"`: "", `"unknown"`: "",
			"llm": "chat", "chat_model": "chat", "embedding": "embeddings", "chain": "", "agent": "", "tool": "", "retriever": ""},
		Columns: map[Column][]Key{
			ColRequestModel: {{Name: "mlflow.spanInputs", Field: "model"}},
			ColInputTokens:  {{Name: "mlflow.chat.tokenUsage", Field: "input_tokens"}},
			ColOutputTokens: {{Name: "mlflow.chat.tokenUsage", Field: "output_tokens"}},
		},
		CacheInInput: byProvider(Included, map[string]Semantics{"anthropic": Unknown}),
	},
	{
		// OpenLIT passes each provider's own usage.
		Name:         "openlit",
		Source:       "openlit sdk/python/src/openlit/semcov/__init__.py",
		Scopes:       []string{"openlit"},
		Markers:      []string{"gen_ai.sdk.version"},
		CacheInInput: byProvider(Included, map[string]Semantics{"anthropic": Unknown}),
	},
}
