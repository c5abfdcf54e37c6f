package conventions

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Deny by default: on GenAI telemetry (GenAIFamily), every attribute that is
// neither a content key nor metadata below is unknown and treated as
// content, whatever its name and value. Allow-lists of content keys leak
// with the next library; this list of metadata fails closed instead.
const (
	// UnknownKind is the kind the unknown attributes of one span, span
	// event or log record are stored under, as one item.
	UnknownKind = "unknown"
	// UnknownRef references that item.
	UnknownRef = "docket.content.unknown_ref"
	// UnknownKeys counts the attributes a record had treated as unknown
	// (stored or dropped).
	UnknownKeys = "docket.content.unknown_keys"
)

// MetadataKeys are attributes that are metadata on GenAI telemetry beyond
// those the ledger reads (every column key, family marker and kind key,
// which are metadata by construction): identities, timings, structural
// fields. A content key is content even if listed.
var MetadataKeys = []string{
	// GenAI conventions: identities and descriptors, not payloads.
	"gen_ai.agent.id", "gen_ai.agent.name", "gen_ai.conversation.id", "gen_ai.output.type",
	"gen_ai.tool.name", "gen_ai.tool.call.id", "gen_ai.tool.type", "gen_ai.token.type",
	"gen_ai.event.start_time", "gen_ai.event.end_time", "gen_ai.sdk.version",
	"gen_ai.environment", "gen_ai.application_name", "gen_ai.usage.cost",
	// OpenInference.
	"llm.model_name", "llm.provider", "llm.system", "llm.finish_reason", "embedding.model_name",
	"input.mime_type", "output.mime_type", "session.id", "user.id", "tool.name", "tool.id",
	// OpenLLMetry.
	"llm.request.type", "llm.is_streaming", "llm.response.finish_reason", "llm.response.stop_reason",
	"traceloop.span.kind", "traceloop.workflow.name", "traceloop.entity.name", "traceloop.entity.path",
	"traceloop.prompt.key", "traceloop.prompt.version", "traceloop.prompt.version_name", "traceloop.prompt.managed",
	// Vercel AI SDK.
	"ai.operationId", "ai.telemetry.functionId", "ai.response.id", "ai.response.model",
	"ai.response.finishReason", "ai.response.timestamp", "ai.response.msToFirstChunk",
	"ai.response.msToFinish", "ai.response.avgOutputTokensPerSecond",
	"ai.response.avgCompletionTokensPerSecond", "ai.stream.msToFirstChunk",
	"ai.toolCall.name", "ai.toolCall.id", "operation.name", "resource.name",
	// Langfuse, LangSmith, MLflow, ADK, Spring AI.
	"langfuse.observation.type", "langfuse.observation.level", "langfuse.observation.model.name",
	"langfuse.observation.usage_details", "langfuse.observation.cost_details",
	"langfuse.trace.name", "langfuse.environment", "langfuse.release", "langfuse.version",
	"langfuse.user.id", "langfuse.session.id",
	"langsmith.span.kind", "langsmith.trace.name", "langsmith.trace.session_id",
	"mlflow.spanType", "mlflow.chat.tokenUsage", "mlflow.traceRequestId", "mlflow.spanFunctionName",
	"gcp.vertex.agent.invocation_id", "gcp.vertex.agent.session_id", "gcp.vertex.agent.event_id",
	"spring.ai.kind",
	// Retrieved documents' source, IDs, versions and scores
	// (IsMetadataValue judges the entries).
	DataSourceID, RetrievalDocuments,
	// Structural fields of GenAI events and of exceptions (not their
	// messages, which may quote the input).
	"exception.type", "thread.id", "thread.name",
}

// MetadataPrefixes start attributes that are metadata on GenAI telemetry:
// usage counts and request parameters (the ledger's columns and
// request_params), resource-like and transport keys, Docket's own.
var MetadataPrefixes = []string{
	"gen_ai.usage.", "gen_ai.aggregated_usage.", "gen_ai.request.", "gen_ai.openai.",
	"llm.token_count.", "llm.usage.", "ai.usage.", "ai.model.", "anthropic.usage.",
	"service.", "http.", "url.", "server.", "client.", "network.", "db.", "rpc.",
	"error.", "otel.", "code.", "telemetry.", "user_agent.",
	"docket.",
}

// metadataKeys is MetadataKeys with every key the ledger reads.
var metadataKeys = func() map[string]bool {
	m := map[string]bool{}
	add := func(names ...string) {
		for _, n := range names {
			m[n] = true
		}
	}
	add(MetadataKeys...)
	add(ContentEventMetadata...)
	add(AggregateMarkers...)
	for _, ks := range Columns {
		for _, k := range ks {
			add(k.Name)
		}
	}
	for _, f := range append(Families, GenAI) {
		add(f.Markers...)
		add(f.NotCallMarkers...)
		add(f.UnpricedWrites...)
		if f.KindKey != "" {
			add(f.KindKey)
		}
		for _, ks := range f.Columns {
			for _, k := range ks {
				add(k.Name)
			}
		}
	}
	return m
}()

// IsMetadata reports whether an attribute of GenAI telemetry is metadata:
// listed, or under a metadata prefix, and not a content key.
func IsMetadata(attr string) bool {
	if IsContent(attr) {
		return false
	}
	if metadataKeys[attr] || leafSibling(attr) {
		return true
	}
	for _, p := range MetadataPrefixes {
		if strings.HasPrefix(attr, p) {
			return true
		}
	}
	return false
}

// genAIPrefix starts the attributes of the GenAI conventions; any of them
// makes a span GenAI telemetry of the GenAI family.
const genAIPrefix = "gen_ai."

// GenAIFamily reports whether a span or log record belongs to GenAI
// instrumentation, and the family's name: by instrumentation scope, then
// by any family's markers or kind key, then by any GenAI conventions
// attribute.
func GenAIFamily(scope string, attrs pcommon.Map) (string, bool) {
	var r Reading
	r.Reset(scope, attrs)
	if r.family < len(Families) {
		return Families[r.family].Name, true
	}
	for f, fam := range Families {
		if fam.KindKey != "" && r.hasID(uint16(table.kindKey[f])) {
			return fam.Name, true
		}
	}
	for k := range attrs.All() {
		if strings.HasPrefix(k, genAIPrefix) {
			return GenAI.Name, true
		}
	}
	return "", false
}

// IsGenAIEvent reports whether an event or log record name is one of the
// GenAI conventions'.
func IsGenAIEvent(name string) bool {
	_, ok := ContentEvents[name]
	return ok || strings.HasPrefix(name, genAIPrefix)
}

// leafSibling reports whether attr is part of an indexed entry of a content
// key with a Leaf that the leaf does not own: a retrieved document's ID,
// score and metadata, kept as evidence.
func leafSibling(attr string) bool {
	for name := attr; ; {
		dot := strings.LastIndexByte(name, '.')
		if dot < 0 {
			return false
		}
		name = name[:dot]
		if i, ok := contentIndex[name]; ok && i >= 0 && ContentKeys[i].Leaf != "" {
			return true
		}
	}
}
