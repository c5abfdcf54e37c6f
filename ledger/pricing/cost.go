package pricing

import (
	"math"
	"math/bits"
	"time"

	"github.com/docketlabs/docket/internal/conventions"
)

// Usage is a call's token counts as the GenAI semantic conventions report
// them; nil means not reported. CacheRead and CacheWrite
// (gen_ai.usage.cache_read.input_tokens, …cache_creation.input_tokens) are
// part of Input, and Reasoning (gen_ai.usage.reasoning.output_tokens) is part
// of Output.
type Usage struct {
	Input, Output, CacheRead, CacheWrite, Reasoning *int64
}

// Status says whether a call could be priced: the conventions contract's
// cost statuses, stored in the ledger.
type Status = conventions.CostStatus

const (
	StatusOK                 = conventions.CostOK
	StatusUnknownModel       = conventions.CostUnknownModel
	StatusMissingUsage       = conventions.CostMissingUsage
	StatusInvalidUsage       = conventions.CostInvalidUsage
	StatusUnpricedCacheRead  = conventions.CostUnpricedCacheRead
	StatusUnpricedCacheWrite = conventions.CostUnpricedCacheWrite
)

// OperationEmbeddings is the gen_ai.operation.name of embedding calls, which
// report no output tokens.
const OperationEmbeddings = conventions.OperationEmbeddings

// Cost is the price of one call. USD is nil unless Status is StatusOK:
// an unknown cost is stored as NULL and shown as "—", never as $0.
type Cost struct {
	USD      *PicoUSD
	Status   Status
	PriceRef string // the entry and period used; set whenever an entry matched
}

// String is the storage form of USD ("0.000123450000", for a Decimal(18,12)
// column), or "" when the cost is unknown — store NULL then.
func (c Cost) String() string {
	if c.USD == nil {
		return ""
	}
	return c.USD.String()
}

// Display is the cost for people: "$0.00012345", or "—" when unknown.
func (c Cost) Display() string {
	if c.USD == nil {
		return conventions.UnknownShown
	}
	return c.USD.Display()
}

// Cost prices one call. Buckets never overlap:
//
//	(input − cacheRead − cacheWrite)·input + cacheRead·cacheRead + cacheWrite·cacheWrite
//	+ (output − reasoning)·output + reasoning·reasoning + request fee
//
// A missing reasoning price is charged at the output price: providers bill
// reasoning as output tokens, and the source lists a separate price only
// where one differs. Cache reads or writes the entry has no price for leave
// the call unpriced (StatusUnpricedCacheRead/-Write): their discount or
// surcharge is the provider's, and charging them as input would be a guess.
// The context tier is chosen by total input tokens.
//
// Usage problems are reported before a missing price, since a cost can be
// recomputed later from stored usage once a price exists, but not the other
// way round.
func (t *Table) Cost(provider, model, operation string, at time.Time, u Usage) Cost {
	in, out, cr, cw, rs, status := checkUsage(operation, u)
	if status != StatusOK {
		return Cost{Status: status}
	}
	price, ok := t.Lookup(provider, model, at)
	if !ok {
		return Cost{Status: StatusUnknownModel}
	}
	r := price.RatesFor(in)
	cacheRead, cacheWrite, reasoning := r.CacheRead, r.CacheWrite, r.Reasoning
	switch {
	case cr > 0 && !cacheRead.known:
		return Cost{Status: StatusUnpricedCacheRead, PriceRef: price.Ref}
	case cw > 0 && !cacheWrite.known:
		return Cost{Status: StatusUnpricedCacheWrite, PriceRef: price.Ref}
	}
	if !reasoning.known {
		reasoning = r.Output
	}
	var sum costSum
	sum.add(in-cr-cw, r.Input)
	sum.add(cr, cacheRead)
	sum.add(cw, cacheWrite)
	sum.add(out-rs, r.Output)
	sum.add(rs, reasoning)
	if r.Request.known {
		sum.add(1, r.Request)
	}
	switch {
	case sum.overflow || sum.total > MaxCost:
		return Cost{Status: StatusInvalidUsage, PriceRef: price.Ref}
	case sum.unpriced:
		return Cost{Status: StatusUnknownModel, PriceRef: price.Ref}
	}
	usd := sum.total
	return Cost{USD: &usd, Status: StatusOK, PriceRef: price.Ref}
}

// checkUsage returns the counts with unreported optional ones as zero.
func checkUsage(operation string, u Usage) (in, out, cacheRead, cacheWrite, reasoning int64, status Status) {
	for _, p := range []*int64{u.Input, u.Output, u.CacheRead, u.CacheWrite, u.Reasoning} {
		if p != nil && *p < 0 {
			return 0, 0, 0, 0, 0, StatusInvalidUsage
		}
	}
	if u.Input == nil || (u.Output == nil && operation != OperationEmbeddings) {
		return 0, 0, 0, 0, 0, StatusMissingUsage
	}
	in = *u.Input
	out, cacheRead, cacheWrite, reasoning = deref(u.Output), deref(u.CacheRead), deref(u.CacheWrite), deref(u.Reasoning)
	if cacheRead > in || cacheWrite > in-cacheRead || reasoning > out {
		return 0, 0, 0, 0, 0, StatusInvalidUsage
	}
	return in, out, cacheRead, cacheWrite, reasoning, StatusOK
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// costSum adds tokens·rate terms exactly, noting overflow and tokens that
// have no price.
type costSum struct {
	total    PicoUSD
	overflow bool
	unpriced bool
}

func (s *costSum) add(tokens int64, r Rate) {
	if tokens == 0 {
		return
	}
	if !r.known {
		s.unpriced = true
		return
	}
	hi, lo := bits.Mul64(uint64(tokens), uint64(r.pico))
	if hi != 0 || lo > math.MaxInt64 {
		s.overflow = true
		return
	}
	sum, carry := bits.Add64(uint64(s.total), lo, 0)
	if carry != 0 || sum > math.MaxInt64 {
		s.overflow = true
		return
	}
	s.total = PicoUSD(sum)
}
