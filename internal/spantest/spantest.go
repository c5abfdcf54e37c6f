// Package spantest builds the OTLP spans tests send: a GenAI chat call or a
// database query. Keys come from the conventions contract, so a test says
// what it means and the spelling lives in one place.
package spantest

import (
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/docketlabs/docket/internal/conventions"
)

// Traces is trace data with one resource carrying resource (values as
// pcommon.Map.FromRaw takes them) and one scope, whose spans are the
// returned slice.
func Traces(resource map[string]any) (ptrace.Traces, ptrace.SpanSlice) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	// FromRaw fails only on a value type it does not know, which a test
	// does not pass.
	if err := rs.Resource().Attributes().FromRaw(resource); err != nil {
		panic("spantest: " + err.Error())
	}
	return td, rs.ScopeSpans().AppendEmpty().Spans()
}

// Chat appends a client span of a chat call on model to spans; provider ""
// leaves gen_ai.provider.name out. IDs and times are the test's to set.
func Chat(spans ptrace.SpanSlice, provider, model string) ptrace.Span {
	s := spans.AppendEmpty()
	s.SetName("chat " + model)
	s.SetKind(ptrace.SpanKindClient)
	s.Attributes().PutStr(conventions.OperationName, "chat")
	if provider != "" {
		s.Attributes().PutStr(conventions.ProviderName, provider)
	}
	s.Attributes().PutStr(conventions.RequestModel, model)
	return s
}

// DB appends a database client span carrying query text to spans; system ""
// leaves db.system.name out.
func DB(spans ptrace.SpanSlice, system, query string) ptrace.Span {
	s := spans.AppendEmpty()
	s.SetName("db query")
	s.SetKind(ptrace.SpanKindClient)
	if system != "" {
		s.Attributes().PutStr(conventions.DBSystemName, system)
	}
	s.Attributes().PutStr(conventions.DBQueryText, query)
	return s
}
