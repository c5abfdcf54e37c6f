package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/pricing"
)

// The generated ledger: tenants of different sizes, each with a few services
// and a population of end users of whom a few are very active; traces of one
// to three calls, spread evenly over a month; models and response IDs in
// their providers' shapes; a few calls without usage, some with a model
// no price is known for, a few errors; evidence spans for some traces.

type weighted[T any] struct {
	v T
	w float64
}

func pick[T any](r *rand.Rand, items []weighted[T]) T {
	total := 0.0
	for _, it := range items {
		total += it.w
	}
	x := r.Float64() * total
	for _, it := range items {
		if x -= it.w; x < 0 {
			return it.v
		}
	}
	return items[len(items)-1].v
}

var tenants = []weighted[string]{
	{"acme", 35}, {"globex", 20}, {"initech", 15}, {"umbrella", 10},
	{"hooli", 8}, {"stark", 6}, {"wayne", 4}, {"wonka", 2},
}

var services = []string{"chat-api", "support-bot", "summarizer", "search", "agent-worker"}

type model struct {
	provider, request, response string
	// idPrefix and idLen shape the provider's response IDs.
	idPrefix string
	idLen    int
}

var models = []weighted[model]{
	{model{"openai", "gpt-4o-mini", "gpt-4o-mini-2024-07-18", "chatcmpl-", 29}, 40},
	{model{"openai", "gpt-4o", "gpt-4o-2024-08-06", "chatcmpl-", 29}, 20},
	{model{"anthropic", "claude-3-5-haiku-latest", "claude-3-5-haiku-20241022", "msg_01", 22}, 15},
	{model{"anthropic", "claude-3-haiku-20240307", "claude-3-haiku-20240307", "msg_01", 22}, 10},
	{model{"aws.bedrock", "us.anthropic.claude-sonnet-4-6", "us.anthropic.claude-sonnet-4-6", "msg_bdrk_01", 22}, 5},
	{model{"gcp.vertex_ai", "gemini-2.5-flash", "gemini-2.5-flash", "", 20}, 5},
	// A self-hosted model: no price, so its cost is unknown.
	{model{"vllm", "llama-3.1-8b-instruct", "meta-llama/Llama-3.1-8B-Instruct", "cmpl-", 32}, 5},
}

const (
	usersPerTenant = 20000
	alnum          = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
)

type generator struct {
	r      *rand.Rand
	prices *pricing.Table
	// users draws user numbers with a long tail: a few users make most calls.
	users     *rand.Zipf
	from      time.Time
	step      time.Duration
	trace     int
	ingested  time.Time
	buildTime time.Duration
}

func newGenerator(seed uint64, calls int, from, to time.Time) (*generator, error) {
	prices, err := pricing.Default()
	if err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	// Traces hold two calls on average.
	step := to.Sub(from) * 2 / time.Duration(max(calls, 2))
	return &generator{r: r, prices: prices, users: rand.NewZipf(r, 1.1, 1, usersPerTenant-1), from: from, step: step, ingested: to}, nil
}

func (g *generator) hex(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.r.Uint32())
	}
	return hex.EncodeToString(b)
}

func (g *generator) alnum(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alnum[g.r.IntN(len(alnum))]
	}
	return string(b)
}

// logNormal draws around median with the given spread (sigma of the log).
func (g *generator) logNormal(median, sigma float64) float64 {
	return median * math.Exp(g.r.NormFloat64()*sigma)
}

// next returns the calls and evidence spans of the next trace.
func (g *generator) next() ([]ledger.Call, []ledger.EvidenceSpan) {
	t0 := time.Now()
	defer func() { g.buildTime += time.Since(t0) }()
	tenant := pick(g.r, tenants)
	traceID := g.hex(16)
	rootSpan := g.hex(8)
	service := services[g.r.IntN(len(services))]
	start := g.from.Add(time.Duration(g.trace)*g.step + time.Duration(g.r.Int64N(int64(g.step))))
	g.trace++
	endUser := ""
	if g.r.Float64() < 0.9 {
		sum := sha256.Sum256(fmt.Appendf(nil, "%s/%d", tenant, g.users.Uint64()))
		endUser = "u_" + hex.EncodeToString(sum[:8])
	}
	var calls []ledger.Call
	n := 1 + g.r.IntN(3)
	at := start
	for range n {
		c := g.call(tenant, traceID, rootSpan, service, endUser, at)
		calls = append(calls, c)
		at = c.EndTime.Add(time.Duration(g.r.IntN(2000)) * time.Millisecond)
	}
	var spans []ledger.EvidenceSpan
	if g.r.Float64() < 0.4 {
		q := "SELECT id, title, body FROM articles WHERE tenant_id = ? AND id IN (?) ORDER BY updated_at DESC LIMIT ?"
		spans = append(spans, ledger.EvidenceSpan{
			Tenant: tenant, TraceID: traceID, SpanID: g.hex(8), ParentSpanID: rootSpan, ServiceName: service,
			SpanName: "SELECT articles", Kind: "client", Category: "db", StartTime: start.Add(-40 * time.Millisecond),
			EndTime: start.Add(-32 * time.Millisecond), Status: ledger.StatusUnset, DBSystem: "postgresql",
			DBOperation: "SELECT", DBCollection: "articles", DBQueryText: &q, DBQueryStatus: ledger.QuerySanitized,
			Documents: []ledger.Document{}, AttributeIssues: []string{}, IngestedAt: g.ingested,
		})
	}
	if g.r.Float64() < 0.3 {
		var docs []ledger.Document
		for range 3 + g.r.IntN(3) {
			score := g.r.Float64()
			docs = append(docs, ledger.Document{ID: "kb-" + g.hex(6), Version: fmt.Sprint(1 + g.r.IntN(9)), Score: &score})
		}
		spans = append(spans, ledger.EvidenceSpan{
			Tenant: tenant, TraceID: traceID, SpanID: g.hex(8), ParentSpanID: rootSpan, ServiceName: service,
			SpanName: "retrieval kb", Kind: "internal", Category: "retrieval", StartTime: start.Add(-30 * time.Millisecond),
			EndTime: start.Add(-5 * time.Millisecond), Status: ledger.StatusUnset, DBQueryStatus: ledger.QueryAbsent,
			DataSourceID: "kb-" + tenant, Documents: docs, AttributeIssues: []string{}, IngestedAt: g.ingested,
		})
	}
	return calls, spans
}

func (g *generator) call(tenant, traceID, parent, service, endUser string, start time.Time) ledger.Call {
	m := pick(g.r, models)
	dur := math.Round(min(g.logNormal(1200, 0.8), 120000)*1000) / 1000
	c := ledger.Call{
		Tenant: tenant, TraceID: traceID, SpanID: g.hex(8), ParentSpanID: parent, ServiceName: service,
		SpanName: "chat " + m.request, StartTime: start, EndTime: start.Add(time.Duration(dur * float64(time.Millisecond))),
		DurationMS: dur, Operation: "chat", Provider: m.provider, RequestModel: m.request, ResponseModel: m.response,
		ResponseID: m.idPrefix + g.alnum(m.idLen), FinishReasons: []string{"stop"}, Status: ledger.StatusUnset,
		StopSequences: []string{}, RequestParams: map[string]string{}, EndUserRef: endUser,
		ContentStatus: ledger.ContentNone, AttributeIssues: []string{}, IngestedAt: g.ingested,
	}
	if g.r.Float64() < 0.5 {
		ttft := dur * (0.1 + 0.3*g.r.Float64())
		c.TTFTMS = &ttft
	}
	temp, maxTokens := 0.2, int64(1024)
	c.Temperature, c.MaxTokens = &temp, &maxTokens
	switch x := g.r.Float64(); {
	case x < 0.03: // no usage reported
	case x < 0.04: // input only
		c.InputTokens = new(int64(g.logNormal(800, 0.9)) + 1)
	default:
		c.InputTokens = new(int64(g.logNormal(800, 0.9)) + 1)
		c.OutputTokens = new(int64(g.logNormal(200, 0.8)) + 1)
	}
	switch x := g.r.Float64(); {
	case x < 0.03:
		status := int64(429)
		c.Status, c.ErrorType, c.HTTPStatus, c.FinishReasons, c.OutputTokens = ledger.StatusError, "RateLimitError", &status, []string{}, nil
	case x < 0.40:
		c.Status = ledger.StatusOK
	}
	if g.r.Float64() < 0.9 {
		c.InputRef = "docket-content://" + tenant + "/input/" + g.hex(32)
		c.OutputRef = "docket-content://" + tenant + "/output/" + g.hex(32)
		c.ContentStatus = "stored"
		c.ContentBytes = new(int64(g.logNormal(6000, 1)))
	}
	c.Derive(g.prices)
	return c
}

// generate inserts calls and their traces' evidence spans in start order, in
// batches of batchSize calls, as the exporter's queue delivers them.
func generate(ctx context.Context, store *ledgerstore.Store, g *generator, calls, batchSize int) (traces, evidence int, insertTime time.Duration, err error) {
	batch := make([]ledger.Call, 0, batchSize+3)
	var spans []ledger.EvidenceSpan
	flush := func() error {
		t0 := time.Now()
		defer func() { insertTime += time.Since(t0) }()
		if err := store.InsertCalls(ctx, batch); err != nil {
			return err
		}
		evidence += len(spans)
		err := store.InsertEvidence(ctx, spans)
		batch, spans = batch[:0], spans[:0]
		return err
	}
	for done := 0; done < calls; {
		cs, es := g.next()
		cs = cs[:min(len(cs), calls-done)]
		batch, spans = append(batch, cs...), append(spans, es...)
		done += len(cs)
		traces++
		if len(batch) >= batchSize || done == calls {
			if err := flush(); err != nil {
				return traces, evidence, insertTime, err
			}
		}
	}
	return traces, evidence, insertTime, nil
}
