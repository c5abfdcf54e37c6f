package pricing

import (
	"strconv"
	"strings"

	"github.com/docketlabs/docket/ledger/pricing/internal/schema"
)

// PicoUSD is an exact amount of money in units of 10⁻¹² USD. Twelve
// fractional digits match the ledger's Decimal(18,12) column, and a price
// in USD per million tokens with six fractional digits is a whole number of
// pico-USD per token, so no cost is ever rounded.
type PicoUSD int64

const picoPerUSD = 1_000_000_000_000

// MaxCost is the largest amount a Decimal(18,12) column holds
// (999999.999999999999 USD); larger costs are rejected as invalid usage.
const MaxCost PicoUSD = 1_000_000_000_000_000_000 - 1

// String is the storage form: a plain decimal with exactly 12 fractional
// digits, e.g. "0.000123450000".
func (p PicoUSD) String() string {
	whole, frac, neg := p.split()
	f := strconv.FormatUint(frac, 10)
	s := strconv.FormatUint(whole, 10) + "." + strings.Repeat("0", 12-len(f)) + f
	if neg {
		return "-" + s
	}
	return s
}

// Display is the form for people: a dollar sign, no trailing zeros beyond
// cents, never rounded ("$0.00012345", "$1.50", "$0.00").
func (p PicoUSD) Display() string {
	whole, frac, neg := p.split()
	f := strconv.FormatUint(frac, 10)
	f = strings.TrimRight(strings.Repeat("0", 12-len(f))+f, "0")
	for len(f) < 2 {
		f += "0"
	}
	s := "$" + strconv.FormatUint(whole, 10) + "." + f
	if neg {
		return "-" + s
	}
	return s
}

func (p PicoUSD) split() (whole, frac uint64, neg bool) {
	u := uint64(p)
	if p < 0 {
		u, neg = -u, true
	}
	return u / picoPerUSD, u % picoPerUSD, neg
}

// Rate is a price per unit (a token, or a request for Rates.Request) in
// pico-USD. The zero Rate is unknown, which is not the same as free.
type Rate struct {
	pico  int64
	known bool
}

// Known reports whether the table gives this price.
func (r Rate) Known() bool { return r.known }

// PerUnit is the price of one unit; meaningful only when Known.
func (r Rate) PerUnit() PicoUSD { return PicoUSD(r.pico) }

// PerMillion is the price in USD per million units as a decimal string, as
// price lists quote it ("2.5"), or "" when unknown.
func (r Rate) PerMillion() string {
	if !r.known {
		return ""
	}
	return schema.FormatMicros(r.pico)
}

// Rates is one set of prices. Token rates are per token; Request is a fee
// per call.
type Rates struct {
	Input, Output, CacheRead, CacheWrite, Reasoning Rate
	Request                                         Rate
}
