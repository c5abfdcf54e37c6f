// Package spantest builds the OTLP spans tests send: a GenAI chat call or a
// database query. Keys come from the conventions contract, so a test says
// what it means and the spelling lives in one place.
package spantest

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
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
// leaves gen_ai.provider.name out (and model "" the model). IDs and times
// are the test's to set.
func Chat(spans ptrace.SpanSlice, provider, model string) ptrace.Span {
	return client(spans, "chat "+model, conventions.OperationName, "chat", conventions.ProviderName, provider, conventions.RequestModel, model)
}

// DB appends a database client span carrying query text to spans; system ""
// leaves db.system.name out (and query "" the text).
func DB(spans ptrace.SpanSlice, system, query string) ptrace.Span {
	return client(spans, "db query", conventions.DBSystemName, system, conventions.DBQueryText, query)
}

// Retrieval appends a client span of a retrieval from dataSource returning
// documents (the gen_ai.retrieval.documents JSON); "" leaves either out.
func Retrieval(spans ptrace.SpanSlice, dataSource, documents string) ptrace.Span {
	return client(spans, "retrieval "+dataSource, conventions.OperationName, "retrieval", conventions.DataSourceID, dataSource,
		conventions.RetrievalDocuments, documents)
}

// client appends a client span named name with the string attributes of
// keyValues (key, value, …), leaving out those whose value is "".
func client(spans ptrace.SpanSlice, name string, keyValues ...string) ptrace.Span {
	s := spans.AppendEmpty()
	s.SetName(name)
	s.SetKind(ptrace.SpanKindClient)
	for i := 0; i+1 < len(keyValues); i += 2 {
		if keyValues[i+1] != "" {
			s.Attributes().PutStr(keyValues[i], keyValues[i+1])
		}
	}
	return s
}

// At gives s its trace and span IDs and a duration of a second ending at end.
func At(s ptrace.Span, traceID pcommon.TraceID, spanID pcommon.SpanID, end time.Time) {
	s.SetTraceID(traceID)
	s.SetSpanID(spanID)
	s.SetStartTimestamp(pcommon.NewTimestampFromTime(end.Add(-time.Second)))
	s.SetEndTimestamp(pcommon.NewTimestampFromTime(end))
}

// Response sets the response model and ID of a call span; "" leaves either
// out.
func Response(s ptrace.Span, model, id string) {
	if model != "" {
		s.Attributes().PutStr(conventions.ResponseModel, model)
	}
	if id != "" {
		s.Attributes().PutStr(conventions.ResponseID, id)
	}
}

// Usage sets the input and output token counts of a call span.
func Usage(s ptrace.Span, input, output int64) {
	s.Attributes().PutInt(conventions.UsageInput, input)
	s.Attributes().PutInt(conventions.UsageOutput, output)
}
