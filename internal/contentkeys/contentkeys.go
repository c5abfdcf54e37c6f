// Package contentkeys names the span, span event and log record attributes
// that carry GenAI content (prompts, answers, tool arguments, documents'
// texts) in the conventions Docket reads: OpenTelemetry GenAI, OpenInference
// and OpenLLMetry. The content processor moves exactly these to the content
// store; the ledger recognises content left on a call by the same list.
package contentkeys

import (
	"slices"
	"strings"
)

// Key is an attribute that carries content. The attribute itself and its
// indexed forms (Name.N.content, Name.N.role, … as OpenLLMetry sends them)
// are one content item, stored under Kind and referenced by Name+"_ref".
// With a Leaf, only the indexed forms Name.N.Leaf are content: the rest of
// each indexed entry (a retrieved document's ID and score) stays as
// evidence.
type Key struct {
	Name, Kind, Leaf string
}

// Owns reports whether attr is part of k's content item.
func (k Key) Owns(attr string) bool {
	rest, ok := strings.CutPrefix(attr, k.Name)
	switch {
	case !ok:
		return false
	case rest == "":
		return true
	case rest[0] != '.':
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

// Keys are looked for on spans, span events and log records.
var Keys = []Key{
	{"gen_ai.input.messages", "input.messages", ""},
	{"gen_ai.output.messages", "output.messages", ""},
	{"gen_ai.system_instructions", "system_instructions", ""},
	{"gen_ai.tool.definitions", "tool.definitions", ""},
	{"gen_ai.tool.call.arguments", "tool.call.arguments", ""},
	{"gen_ai.tool.call.result", "tool.call.result", ""},
	{"gen_ai.prompt", "prompt", ""},
	{"gen_ai.completion", "completion", ""},
	// OpenInference (Arize Phoenix and its instrumentations).
	{"input.value", "input.value", ""},
	{"output.value", "output.value", ""},
	{"llm.input_messages", "input.messages", ""},
	{"llm.output_messages", "output.messages", ""},
	{"llm.prompts", "prompt", ""},
	{"llm.prompt_template.template", "prompt_template", ""},
	{"llm.prompt_template.variables", "prompt_template.variables", ""},
	{"llm.tools", "tool.definitions", ""},
	{"embedding.embeddings", "embeddings", ""},
	{"retrieval.documents", "retrieval.documents", "document.content"},
	{"reranker.input_documents", "reranker.documents", "document.content"},
	{"reranker.output_documents", "reranker.documents", "document.content"},
	{"reranker.query", "reranker.query", ""},
	// OpenLLMetry (Traceloop) beyond gen_ai.prompt and gen_ai.completion:
	// workflow and task inputs and outputs, managed prompt templates, the
	// functions offered to the model, MCP tool calls, and the documents and
	// vectors of its vector-database span events.
	{"traceloop.entity.input", "entity.input", ""},
	{"traceloop.entity.output", "entity.output", ""},
	{"traceloop.prompt.template", "prompt_template", ""},
	{"traceloop.prompt.template_variables", "prompt_template.variables", ""},
	{"llm.request.functions", "tool.definitions", ""},
	{"mcp.request.argument", "tool.call.arguments", ""},
	{"mcp.response.value", "tool.call.result", ""},
	{"db.query.result.document", "retrieval.documents", ""},
	{"db.search.result.entity", "retrieval.documents", ""},
	{"db.query.result.vector", "embeddings", ""},
	{"db.query.embeddings.vector", "embeddings", ""},
	{"db.search.embeddings.vector", "embeddings", ""},
}

// prefixes are the namespaces of Keys: most attributes are in none of them
// and are passed over at once.
var prefixes = []string{"gen_ai.", "input.", "output.", "llm.", "embedding.", "retrieval.", "reranker.",
	"traceloop.", "mcp.", "db."}

// Index returns the index in Keys of the item an attribute belongs to, or
// -1.
func Index(attr string) int {
	if !slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(attr, p) }) {
		return -1
	}
	for i, k := range Keys {
		if k.Owns(attr) {
			return i
		}
	}
	return -1
}

// RefSuffix makes a content key's name into the name of the reference left
// in its place; every reference attribute ends with it.
const RefSuffix = "_ref"

// RefName is the attribute that references k's stored content.
func (k Key) RefName() string { return k.Name + RefSuffix }

var refNames = func() map[string]bool {
	m := make(map[string]bool, len(Keys))
	for _, k := range Keys {
		m[k.RefName()] = true
	}
	return m
}()

// IsRefName reports whether attr is the reference attribute of a content
// key (gen_ai.input.messages_ref, llm.tools_ref, …).
func IsRefName(attr string) bool {
	return strings.HasSuffix(attr, RefSuffix) && refNames[attr]
}
