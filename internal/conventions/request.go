package conventions

import "strings"

// The user's request around the LLM calls of a trace: the server span that
// took the HTTP (or RPC) request, the producer span that put the job on a
// queue and the consumer span of the worker that ran it. They are evidence
// only for traces that hold an LLM call, and the ledger keeps only the
// attributes below of them: what was asked of which route, how, and with
// what outcome — never the URL with its query string, headers, bodies,
// client addresses or user agents, which carry personal data and secrets.
const (
	// Categories of evidence spans (the evidence_spans.category column) of
	// the request path; the page shows them as HTTP request → queue →
	// worker above the DB, retrieval and LLM spans.
	CategoryRequest = "request"
	CategoryQueue   = "queue"
	CategoryWorker  = "worker"
	// The other categories: a database query, a retrieval, and a GenAI
	// span that is not a call (a tool call, an agent step).
	CategoryDB        = "db"
	CategoryRetrieval = "retrieval"
	CategoryGenAI     = "genai"

	HTTPRequestMethod       = "http.request.method"
	HTTPRoute               = "http.route"
	HTTPResponseStatusCode  = "http.response.status_code"
	HTTPMethodOld           = "http.method"
	HTTPStatusCodeOld       = "http.status_code"
	RPCSystem               = "rpc.system"
	RPCService              = "rpc.service"
	RPCMethod               = "rpc.method"
	MessagingSystem         = "messaging.system"
	MessagingDestination    = "messaging.destination.name"
	MessagingDestTemplate   = "messaging.destination.template"
	MessagingOperationType  = "messaging.operation.type"
	MessagingOperationName  = "messaging.operation.name"
	MessagingConsumerGroup  = "messaging.consumer.group.name"
	MessagingOperationOld   = "messaging.operation"
	MessagingDestinationOld = "messaging.destination"
)

// RequestKeys are the only attributes kept of a request-path span (stored
// in evidence_spans.span_attributes, values cleaned and bounded like every
// other evidence value). Anything else on the span — url.full, url.query,
// url.path, http.request.header.*, http.response.header.*, bodies,
// client.address, user_agent.original — is not read.
var RequestKeys = []string{
	HTTPRequestMethod, HTTPRoute, HTTPResponseStatusCode, HTTPMethodOld, HTTPStatusCodeOld,
	RPCSystem, RPCService, RPCMethod,
	MessagingSystem, MessagingDestination, MessagingDestTemplate, MessagingOperationType,
	MessagingOperationName, MessagingConsumerGroup, MessagingOperationOld, MessagingDestinationOld,
}

// RequestCategory is the request-path category of a span of the given OTLP
// kind ("server", "producer", "consumer"; lowercase), or "".
func RequestCategory(kind string) string {
	switch kind {
	case "server":
		return CategoryRequest
	case "producer":
		return CategoryQueue
	case "consumer":
		return CategoryWorker
	}
	return ""
}

// IsRequestCategory reports whether category is one of the request path,
// kept only when its trace holds an LLM call.
func IsRequestCategory(category string) bool {
	return category == CategoryRequest || category == CategoryQueue || category == CategoryWorker
}

// StripQuery cuts a query string or fragment from a route or span name:
// a route is a template, and instrumentations that name a server span by
// the raw target would otherwise carry the query into the ledger.
func StripQuery(s string) string {
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		return s[:i]
	}
	return s
}
