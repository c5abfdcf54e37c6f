package api

import (
	"testing"

	"github.com/docketlabs/docket/ledger"
)

func TestRequestDetail(t *testing.T) {
	for _, tc := range []struct {
		attrs map[string]string
		want  string
	}{
		{map[string]string{"http.request.method": "POST", "http.route": "/ask", "http.response.status_code": "200"}, "POST /ask → 200"},
		{map[string]string{"http.method": "GET", "http.status_code": "404"}, "GET → 404"},
		{map[string]string{"messaging.system": "kafka", "messaging.destination.name": "ask-jobs"}, "ask-jobs (kafka)"},
		{map[string]string{"messaging.destination.name": "ask-jobs", "messaging.operation.type": "process"}, "ask-jobs"},
		{map[string]string{"rpc.system": "grpc", "rpc.service": "Support", "rpc.method": "Ask"}, "Support Ask"},
		{nil, ""},
	} {
		if got := requestDetail(ledger.EvidenceSpan{SpanAttributes: tc.attrs}); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.attrs, got, tc.want)
		}
	}
}
