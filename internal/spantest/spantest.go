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

// Retrieval appends a client span of a retrieval from dataSource returning
// documents (the gen_ai.retrieval.documents JSON); "" leaves either out.
func Retrieval(spans ptrace.SpanSlice, dataSource, documents string) ptrace.Span {
	s := spans.AppendEmpty()
	s.SetName("retrieval " + dataSource)
	s.SetKind(ptrace.SpanKindClient)
	s.Attributes().PutStr(conventions.OperationName, "retrieval")
	if dataSource != "" {
		s.Attributes().PutStr(conventions.DataSourceID, dataSource)
	}
	if documents != "" {
		s.Attributes().PutStr(conventions.RetrievalDocuments, documents)
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
