package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"

	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

type document struct {
	ID      string
	Version string
	Title   string
	Text    string
}

// retrieved is one search hit, in the shape of gen_ai.retrieval.documents:
// id and score as the conventions ask, plus the version, which an audit
// needs to know which text the model was shown.
type retrieved struct {
	ID      string  `json:"id"`
	Version string  `json:"version"`
	Score   float64 `json:"score"`
	doc     document
}

// knowledgeBase stands in for a vector store: an in-memory set of help
// articles ranked by word overlap with the question.
type knowledgeBase struct {
	id             string // gen_ai.data_source.id
	tracer         trace.Tracer
	docs           []document
	captureContent bool
}

var helpArticles = []document{
	{"doc-3", "v2", "Resetting your password", "To reset your password open the sign-in page, choose forgot password and follow the link we email you. Reset links expire after 30 minutes."},
	{"doc-5", "v1", "Two-factor authentication", "Enable two-factor authentication under security settings. You can use an authenticator app or a hardware security key."},
	{"doc-7", "v4", "Changing your billing plan", "Upgrade or downgrade your plan under billing settings. Changes take effect at the start of the next billing period; upgrades are prorated."},
	{"doc-9", "v1", "Refund policy", "Annual plans can be refunded within 14 days of purchase. Monthly plans are not refunded but can be cancelled at any time."},
	{"doc-12", "v3", "Exporting your data", "Export your data as CSV or JSON from the data export page. Large exports are prepared in the background and we email you a download link."},
	{"doc-14", "v2", "Storage quota", "Each plan includes a storage quota: free 5 GB, pro 100 GB, team 1 TB. Buy extra storage under billing settings."},
	{"doc-17", "v1", "Invoices and receipts", "Download invoices and receipts from the billing history page. Invoices show your company address and tax number if you add them."},
	{"doc-21", "v5", "Adding team members", "Team plan owners can invite members from the team page. Each member needs their own email address and counts as one seat."},
	{"doc-23", "v1", "Deleting your account", "Deleting your account removes your data after 30 days. Export your data first; deletion cannot be undone after that period."},
	{"doc-28", "v2", "Time zone and language", "Change your time zone and language in profile settings. Reports and invoices use the time zone of the account owner."},
}

func newKnowledgeBase(id string, tracer trace.Tracer, captureContent bool) *knowledgeBase {
	return &knowledgeBase{id: id, tracer: tracer, docs: helpArticles, captureContent: captureContent}
}

// search returns up to k articles that share words with the query, best first.
func (kb *knowledgeBase) search(ctx context.Context, query string, k int) ([]retrieved, error) {
	_, span := kb.tracer.Start(ctx, "retrieval "+kb.id,
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			semconv.GenAIOperationNameRetrieval,
			semconv.GenAIDataSourceID(kb.id),
			semconv.GenAIRequestTopK(float64(k)),
		))
	defer span.End()
	if kb.captureContent {
		span.SetAttributes(semconv.GenAIRetrievalQueryText(query))
	}
	if err := ctx.Err(); err != nil {
		span.SetStatus(codes.Error, err.Error())
		return nil, fmt.Errorf("retrieval: %w", err)
	}

	q := wordSet(query)
	var hits []retrieved
	for _, d := range kb.docs {
		if s := overlap(q, wordSet(d.Title+" "+d.Text)); s > 0 {
			hits = append(hits, retrieved{ID: d.ID, Version: d.Version, Score: s, doc: d})
		}
	}
	slices.SortStableFunc(hits, func(a, b retrieved) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	hits = hits[:min(k, len(hits))]
	if span.IsRecording() { // an unsampled span would drop the JSON
		span.SetAttributes(semconv.GenAIRetrievalDocumentsKey.String(mustJSON(hits)))
	}
	return hits, nil
}

// overlap is the cosine similarity of two word sets, rounded to 2 decimals.
func overlap(a, b map[string]bool) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	common := 0
	for w := range a {
		if b[w] {
			common++
		}
	}
	return math.Round(100*float64(common)/math.Sqrt(float64(len(a)*len(b)))) / 100
}

var stopWords = map[string]bool{
	"the": true, "and": true, "for": true, "you": true, "your": true, "can": true, "how": true,
	"what": true, "are": true, "our": true, "with": true, "from": true, "under": true, "after": true,
	"that": true, "this": true, "does": true, "into": true, "have": true, "each": true,
}

// wordSet returns the lower-cased words of s, without stop words, short
// words, and a trailing plural "s".
func wordSet(s string) map[string]bool {
	set := make(map[string]bool)
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) < 3 || stopWords[w] {
			continue
		}
		set[strings.TrimSuffix(w, "s")] = true
	}
	return set
}
