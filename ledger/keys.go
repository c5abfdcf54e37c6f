package ledger

import (
	"regexp"
	"strings"
)

// CallKey is a call's row key: (tenant, trace_id, span_id).
func CallKey(c *Call) string { return c.Tenant + "\x00" + c.TraceID + "\x00" + c.SpanID }

// SplitCallKey returns the parts of a CallKey.
func SplitCallKey(k string) (tenant, traceID, spanID string) {
	tenant, rest, _ := strings.Cut(k, "\x00")
	traceID, spanID, _ = strings.Cut(rest, "\x00")
	return tenant, traceID, spanID
}

var traceIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// ValidTraceID reports whether id is a trace ID as the ledger stores it
// (32 lowercase hex digits, not all zero).
func ValidTraceID(id string) bool {
	return traceIDPattern.MatchString(id) && id != "00000000000000000000000000000000"
}
