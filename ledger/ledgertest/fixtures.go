package ledgertest

import (
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger"
)

// Call is a chat call of tenant that started and ended now, with the empty
// lists and maps a stored row has; a test sets the fields it is about.
func Call(tenant, traceID, spanID string) ledger.Call {
	now := time.Now().UTC()
	return ledger.Call{Tenant: tenant, TraceID: traceID, SpanID: spanID, StartTime: now, EndTime: now, Operation: "chat",
		FinishReasons: []string{}, StopSequences: []string{}, RequestParams: map[string]string{}, AttributeIssues: []string{},
		IngestedAt: now}
}

// TraceID is a new random trace ID, so a test's rows are its own in a
// shared ledger.
func TraceID(t testing.TB) string { return randomHex(t, 16) }

// SpanID is a new random span ID.
func SpanID(t testing.TB) string { return randomHex(t, 8) }

func randomHex(t testing.TB, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// Evidence is a span of tenant's trace that is not a call, of category (a
// conventions.Category*), that started and ended now, with the empty lists
// a stored row has; a test sets the fields it is about.
func Evidence(tenant, traceID, spanID, category string) ledger.EvidenceSpan {
	now := time.Now().UTC()
	return ledger.EvidenceSpan{Tenant: tenant, TraceID: traceID, SpanID: spanID, Category: category, StartTime: now, EndTime: now,
		Documents: []ledger.Document{}, ContentRefs: []string{}, AttributeIssues: []string{}, IngestedAt: now}
}
