package fakeprovider

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
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

// DefaultModels returns OpenAI model aliases with the snapshots they pointed
// to at the time of writing.
func DefaultModels() []Model {
	return []Model{
		{Snapshot: "gpt-4o-mini-2024-07-18", Aliases: []string{"gpt-4o-mini"}},
		{Snapshot: "gpt-4o-2024-08-06", Aliases: []string{"gpt-4o"}},
		{Snapshot: "gpt-4.1-2025-04-14", Aliases: []string{"gpt-4.1"}},
		{Snapshot: "gpt-4.1-mini-2025-04-14", Aliases: []string{"gpt-4.1-mini"}},
		{Snapshot: "gpt-4.1-nano-2025-04-14", Aliases: []string{"gpt-4.1-nano"}},
		{Snapshot: "o3-mini-2025-01-31", Aliases: []string{"o3-mini"}, Reasoning: true},
	}
}

// Message is one input message, reduced to what a Responder needs whatever
// wire API it arrived by.
type Message struct {
	Role string // system, developer, user, assistant, tool, function
	Name string
	Text string // text parts joined by "\n"; other parts are not represented
}

// Params are the sampling parameters as sent; nil means not sent.
type Params struct {
	Temperature *float64
	TopP        *float64
	MaxTokens   *int // max_completion_tokens, or else max_tokens
	Seed        *int64
	Stop        []string
}

// Request is what a Responder sees of one request.
type Request struct {
	Model          Model  // the snapshot that answers
	RequestedModel string // the name the client asked for
	Messages       []Message
	Params         Params
	Choice         int // which of the n choices is being produced, from 0
}

// Reply is what the model "says" for one choice. The server applies stop
// sequences and the token limit to Text afterwards, and counts the tokens.
type Reply struct {
	Text            string
	FinishReason    string // empty means "stop"
	ReasoningTokens int    // hidden tokens billed as output; only for reasoning models
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
func Deterministic(_ context.Context, req *Request) (Reply, error) {
	rng := requestRand(req)
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
	writeField(h, req.Model.Snapshot)
	for _, m := range req.Messages {
		writeField(h, m.Role)
		writeField(h, m.Name)
		writeField(h, m.Text)
	}
	var choice [8]byte
	binary.BigEndian.PutUint64(choice[:], uint64(req.Choice))
	h.Write(choice[:])
	sum := h.Sum(nil)
	return rand.New(rand.NewPCG(binary.BigEndian.Uint64(sum[:8]), binary.BigEndian.Uint64(sum[8:16])))
}

// writeField writes s length-prefixed, so that field boundaries are part of
// the hash ("ab"+"c" and "a"+"bc" differ).
func writeField(h interface{ Write([]byte) (int, error) }, s string) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(s)))
	h.Write(n[:])
	h.Write([]byte(s))
}

// FailFraction returns a Responder that fails the given fraction of requests
// with errs, taken in turn, and hands the others to next. Which requests fail
// follows arrival order (with rate 0.25, every fourth), so runs repeat.
func FailFraction(rate float64, next Responder, errs ...*APIError) (Responder, error) {
	if len(errs) == 0 {
		return nil, errors.New("fakeprovider: FailFraction needs at least one error")
	}
	if next == nil {
		return nil, errors.New("fakeprovider: FailFraction needs a next Responder")
	}
	pick, err := newFraction(rate)
	if err != nil {
		return nil, fmt.Errorf("fakeprovider: FailFraction: %w", err)
	}
	var failures atomic.Uint64
	return func(ctx context.Context, req *Request) (Reply, error) {
		// Choices of one request fail together: a provider fails requests, not choices.
		if req.Choice == 0 && pick.next() {
			return Reply{}, errs[(failures.Add(1)-1)%uint64(len(errs))]
		}
		return next(ctx, req)
	}, nil
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
