package fakeprovider

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Model is one model snapshot the server serves.
type Model struct {
	// Snapshot is the name reported in responses, e.g. "gpt-4o-mini-2024-07-18".
	Snapshot string
	// Aliases are the request names answered by this snapshot, e.g. "gpt-4o-mini".
	// The snapshot name itself is always accepted too.
	Aliases []string
	// Reasoning models report completion_tokens_details.reasoning_tokens.
	Reasoning bool
}

// DefaultModels returns OpenAI and Anthropic model aliases with the
// snapshots they pointed to at the time of writing. Every API of the server
// serves every model.
func DefaultModels() []Model {
	return []Model{
		{Snapshot: "gpt-4o-mini-2024-07-18", Aliases: []string{"gpt-4o-mini"}},
		{Snapshot: "gpt-4o-2024-08-06", Aliases: []string{"gpt-4o"}},
		{Snapshot: "gpt-4.1-2025-04-14", Aliases: []string{"gpt-4.1"}},
		{Snapshot: "gpt-4.1-mini-2025-04-14", Aliases: []string{"gpt-4.1-mini"}},
		{Snapshot: "gpt-4.1-nano-2025-04-14", Aliases: []string{"gpt-4.1-nano"}},
		{Snapshot: "o3-mini-2025-01-31", Aliases: []string{"o3-mini"}, Reasoning: true},
		{Snapshot: "gpt-5-2025-08-07", Aliases: []string{"gpt-5"}, Reasoning: true},
		{Snapshot: "claude-3-5-haiku-20241022", Aliases: []string{"claude-3-5-haiku-latest"}},
		{Snapshot: "claude-sonnet-4-20250514", Aliases: []string{"claude-sonnet-4-0"}},
		{Snapshot: "claude-opus-4-1-20250805", Aliases: []string{"claude-opus-4-1"}},
		{Snapshot: "claude-sonnet-4-5-20250929", Aliases: []string{"claude-sonnet-4-5"}},
		// Embedding models name no dated snapshot.
		{Snapshot: "text-embedding-3-small"},
		{Snapshot: "text-embedding-3-large"},
	}
}

// Message is one input message, reduced to what a Responder needs whatever
// wire API it arrived by.
type Message struct {
	Role string // system, developer, user, assistant, tool, function
	Name string
	Text string // text parts joined by "\n"; other parts are not represented
}

// Params are the sampling parameters as sent; nil means not sent. Each API
// names them its own way (noted per field).
type Params struct {
	Temperature *float64
	TopP        *float64
	TopK        *int // Messages API only
	// MaxTokens: Chat Completions max_completion_tokens (or else
	// max_tokens), Responses max_output_tokens, Messages max_tokens.
	MaxTokens *int
	Seed      *int64   // Chat Completions only
	Stop      []string // Chat Completions stop, Messages stop_sequences
}

// Request is what a Responder sees of one request.
type Request struct {
	Model          Model  // the snapshot that answers
	RequestedModel string // the name the client asked for
	Messages       []Message
	Params         Params
	Tools          []Tool // the functions the request offers
	Choice         int    // which of the n choices is being produced, from 0
}

// Reply is what the model "says" for one choice. The server applies stop
// sequences and the token limit to Text afterwards, and counts the tokens.
type Reply struct {
	Text            string
	FinishReason    string // empty means "stop"
	ReasoningTokens int    // hidden tokens billed as output; only for reasoning models
	// ToolCalls are calls of offered tools; the server assigns their IDs
	// and answers with the API's tool-call finish reason.
	ToolCalls []ToolCall
}

// Responder produces the reply for one choice of a request. Returning an
// *APIError makes the server answer with that error (rate limit, overload,
// rejected parameter …); any other error becomes a generic 500.
type Responder func(ctx context.Context, req *Request) (Reply, error)

// words is the vocabulary of Deterministic's answers.
var words = strings.Fields(`the account plan billing support request your we can
update please check settings invoice team answer credit usage limit help
document policy refund days within after before review change access data
export report monthly annual customer service contact page option available
current next period payment method card receipt email address confirm reset
password security feature enabled default time zone language region storage quota`)

// Deterministic answers with text derived from a hash of the model snapshot,
// the input messages and the choice index: the same input always gets the
// same answer, and different inputs almost always get different ones.
// Reasoning models also report a hash-derived number of reasoning tokens.
// Offered tools, it calls the first with arguments that fit its schema
// until a tool result is the last message.
func Deterministic(_ context.Context, req *Request) (Reply, error) {
	rng := requestRand(req)
	if wantsToolCall(req) {
		t := req.Tools[0]
		return Reply{ToolCalls: []ToolCall{{Name: t.Name, Arguments: toolArguments(t.Parameters, rng.IntN)}}}, nil
	}
	var b strings.Builder
	sentences := 2 + rng.IntN(4)
	for s := range sentences {
		if s > 0 {
			b.WriteByte(' ')
		}
		n := 6 + rng.IntN(10)
		for w := range n {
			word := words[rng.IntN(len(words))]
			if w == 0 {
				word = strings.ToUpper(word[:1]) + word[1:]
			} else {
				b.WriteByte(' ')
			}
			b.WriteString(word)
		}
		b.WriteByte('.')
	}
	reply := Reply{Text: b.String()}
	if req.Model.Reasoning {
		reply.ReasoningTokens = 64 * (1 + rng.IntN(8))
	}
	return reply, nil
}

// requestRand returns a random source seeded from the request's snapshot,
// messages and choice index.
func requestRand(req *Request) *rand.Rand {
	h := sha256.New()
	writeInput(h, req)
	var choice [8]byte
	binary.BigEndian.PutUint64(choice[:], uint64(req.Choice))
	h.Write(choice[:])
	sum := h.Sum(nil)
	return rand.New(rand.NewPCG(binary.BigEndian.Uint64(sum[:8]), binary.BigEndian.Uint64(sum[8:16])))
}

// writeInput writes a request's snapshot and messages to h.
func writeInput(h interface{ Write([]byte) (int, error) }, req *Request) {
	writeField(h, req.Model.Snapshot)
	for _, m := range req.Messages {
		writeField(h, m.Role)
		writeField(h, m.Name)
		writeField(h, m.Text)
	}
}

// writeField writes s length-prefixed, so that field boundaries are part of
// the hash ("ab"+"c" and "a"+"bc" differ).
func writeField(h interface{ Write([]byte) (int, error) }, s string) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(s)))
	_, _ = h.Write(n[:])
	_, _ = h.Write([]byte(s))
}

// FailFraction returns a Responder that fails the given fraction of requests
// with errs, taken in turn, and hands the others to next. Which requests fail
// follows arrival order (with rate 0.25, every fourth), so runs repeat.
func FailFraction(rate float64, next Responder, errs ...*APIError) (Responder, error) {
	pick, err := newFraction(rate)
	if err != nil {
		return nil, fmt.Errorf("fakeprovider: FailFraction: %w", err)
	}
	return failWhen("FailFraction", pick.next, next, errs)
}

// FailFirst returns a Responder that fails the first k requests with errs,
// taken in turn, and hands every later one to next: a provider that is
// rate limiting or overloaded for a while, then recovers.
func FailFirst(k int, next Responder, errs ...*APIError) (Responder, error) {
	if k < 0 {
		return nil, errors.New("fakeprovider: FailFirst: k must not be negative")
	}
	var n atomic.Int64
	return failWhen("FailFirst", func() bool { return n.Add(1) <= int64(k) }, next, errs)
}

// failWhen fails the requests pick chooses, in arrival order.
func failWhen(name string, pick func() bool, next Responder, errs []*APIError) (Responder, error) {
	if len(errs) == 0 {
		return nil, fmt.Errorf("fakeprovider: %s needs at least one error", name)
	}
	if next == nil {
		return nil, fmt.Errorf("fakeprovider: %s needs a next Responder", name)
	}
	var failures atomic.Uint64
	return func(ctx context.Context, req *Request) (Reply, error) {
		// Choices of one request fail together: a provider fails requests, not choices.
		if req.Choice == 0 && pick() {
			return Reply{}, errs[(failures.Add(1)-1)%uint64(len(errs))]
		}
		return next(ctx, req)
	}, nil
}

// paramSent reports, per Params field name, whether a request sent it.
var paramSent = map[string]func(Params) bool{
	"temperature": func(p Params) bool { return p.Temperature != nil },
	"top_p":       func(p Params) bool { return p.TopP != nil },
	"top_k":       func(p Params) bool { return p.TopK != nil },
	"max_tokens":  func(p Params) bool { return p.MaxTokens != nil },
	"seed":        func(p Params) bool { return p.Seed != nil },
	"stop":        func(p Params) bool { return len(p.Stop) > 0 },
}

// RejectParams returns a Responder that rejects every request sending one
// of params with UnsupportedParameter — as newer models reject temperature
// — and hands the others to next. Names are those of Params fields:
// temperature, top_p, top_k, max_tokens, seed, stop. When a request sends
// several, the first of params is named, as a provider reports the first
// problem it finds.
func RejectParams(next Responder, params ...string) (Responder, error) {
	if next == nil {
		return nil, errors.New("fakeprovider: RejectParams needs a next Responder")
	}
	for _, p := range params {
		if paramSent[p] == nil {
			return nil, fmt.Errorf("fakeprovider: RejectParams: unknown parameter %q", p)
		}
	}
	return func(ctx context.Context, req *Request) (Reply, error) {
		for _, p := range params {
			if paramSent[p](req.Params) {
				return Reply{}, UnsupportedParameter(p)
			}
		}
		return next(ctx, req)
	}, nil
}

// Output is one possible answer of a Sampled Responder, with its weight.
type Output struct {
	Text   string
	Weight int
}

// maxDecks bounds the inputs a Sampled Responder remembers; when full it
// starts over, as a fresh server would.
const maxDecks = 1 << 16

// Sampled returns a Responder with a known distribution of outputs: the
// requests for one input (snapshot and messages) are dealt from a deck that
// holds each output Weight times, shuffled with seed, and dealt anew when
// empty. Every run of sum(Weight) requests for one input therefore gets each
// output exactly Weight times, in an order that looks random — so a test
// knows the exact truth a measured distribution must equal, whatever the
// concurrency. Several choices of one request are dealt in turn.
func Sampled(seed uint64, outputs ...Output) (Responder, error) {
	if len(outputs) == 0 {
		return nil, errors.New("fakeprovider: Sampled needs at least one output")
	}
	var cards []int // output indexes, each Weight times
	for i, o := range outputs {
		if o.Weight < 0 {
			return nil, fmt.Errorf("fakeprovider: Sampled: output %d has a negative weight", i)
		}
		for range o.Weight {
			cards = append(cards, i)
		}
	}
	if len(cards) == 0 {
		return nil, errors.New("fakeprovider: Sampled: the weights sum to zero")
	}
	type deck struct {
		rng  *rand.Rand
		left []int
	}
	var mu sync.Mutex
	decks := map[[sha256.Size]byte]*deck{}
	return func(_ context.Context, req *Request) (Reply, error) {
		key := inputKey(req)
		mu.Lock()
		defer mu.Unlock()
		d := decks[key]
		if d == nil {
			if len(decks) >= maxDecks {
				clear(decks)
			}
			d = &deck{rng: rand.New(rand.NewPCG(seed, binary.BigEndian.Uint64(key[:8])))}
			decks[key] = d
		}
		if len(d.left) == 0 {
			d.left = slices.Clone(cards)
			d.rng.Shuffle(len(d.left), func(i, j int) { d.left[i], d.left[j] = d.left[j], d.left[i] })
		}
		card := d.left[0]
		d.left = d.left[1:]
		return Reply{Text: outputs[card].Text}, nil
	}, nil
}

// inputKey identifies a request's input: snapshot and messages.
func inputKey(req *Request) [sha256.Size]byte {
	h := sha256.New()
	writeInput(h, req)
	var key [sha256.Size]byte
	h.Sum(key[:0])
	return key
}

// fraction picks an exact fraction of events in arrival order: event n is
// picked when floor(n*rate) grows, so any run of 1/rate events has one.
type fraction struct {
	rate float64
	n    atomic.Uint64
}

func newFraction(rate float64) (*fraction, error) {
	if math.IsNaN(rate) || rate < 0 || rate > 1 {
		return nil, fmt.Errorf("rate %v is outside [0, 1]", rate)
	}
	return &fraction{rate: rate}, nil
}

func (f *fraction) next() bool {
	n := f.n.Add(1)
	return uint64(float64(n)*f.rate) > uint64(float64(n-1)*f.rate)
}
