package api

import (
	"testing"

	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/ledger"
)

func TestRequestDetail(t *testing.T) {
	for _, tc := range []struct {
		attrs map[string]string
		want  string
	}{
		{map[string]string{conventions.HTTPRequestMethod: "POST", conventions.HTTPRoute: "/ask", conventions.HTTPResponseStatusCode: "200"}, "POST /ask → 200"},
		{map[string]string{conventions.HTTPMethodOld: "GET", conventions.HTTPStatusCodeOld: "404"}, "GET → 404"},
		{map[string]string{conventions.MessagingSystem: "kafka", conventions.MessagingDestination: "ask-jobs"}, "ask-jobs (kafka)"},
		{map[string]string{conventions.MessagingDestination: "ask-jobs", conventions.MessagingOperationType: "process"}, "ask-jobs"},
		{map[string]string{conventions.RPCSystem: "grpc", conventions.RPCService: "Support", conventions.RPCMethod: "Ask"}, "Support Ask"},
		{nil, ""},
	} {
		if got := requestDetail(ledger.EvidenceSpan{SpanAttributes: tc.attrs}); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.attrs, got, tc.want)
		}
	}
}
