package audit

import (
	"bytes"
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// Totals sum the exported calls. Unknown is not zero: a sum over rows of
// which some are NULL carries the marker "+?", and the counts say how many
// rows were known and unknown.
type Totals struct {
	Calls        uint64 `json:"calls"`
	InputTokens  Sum    `json:"input_tokens"`
	OutputTokens Sum    `json:"output_tokens"`
	CostUSD      Sum    `json:"cost_usd"`
	// CostStatus counts calls by cost_status (ok, unknown_model, …).
	CostStatus map[string]uint64 `json:"cost_status"`
}

// Sum is the exact sum of the known values of a column, as a decimal
// string, followed by " +?" when some rows did not know the value:
// "12.3456 +?". With no known values it is "0 +?" (or "0" without rows).
type Sum struct {
	Total       string `json:"total"`
	KnownRows   uint64 `json:"known_rows"`
	UnknownRows uint64 `json:"unknown_rows"`
}

// UnknownMarker is appended to a total that has unknown parts.
const UnknownMarker = "+?"

// totalsOf accumulates Totals row by row.
type totalsOf struct {
	calls      uint64
	in, out    sumOf
	cost       sumOf
	costStatus map[string]uint64
	statusBuf  []byte
	seen       int
}

func newTotals() *totalsOf { return &totalsOf{costStatus: map[string]uint64{}} }

var (
	keyInputTokens  = []byte(`"input_tokens"`)
	keyOutputTokens = []byte(`"output_tokens"`)
	keyCostUSD      = []byte(`"cost_usd"`)
	keyCostStatus   = []byte(`"cost_status"`)
	jsonNull        = []byte("null")
)

// add counts one canonical calls row.
func (t *totalsOf) add(row []byte) error {
	t.seen = 0
	err := eachField(row, func(key, value []byte) error {
		switch {
		case bytes.Equal(key, keyInputTokens):
			t.seen |= 1
			return t.in.add(value, false)
		case bytes.Equal(key, keyOutputTokens):
			t.seen |= 2
			return t.out.add(value, false)
		case bytes.Equal(key, keyCostUSD):
			t.seen |= 4
			return t.cost.add(value, true)
		case bytes.Equal(key, keyCostStatus):
			t.seen |= 8
			var err error
			if t.statusBuf, err = appendUnquoted(t.statusBuf[:0], value); err != nil {
				return fmt.Errorf("cost_status: %w", err)
			}
			t.costStatus[string(t.statusBuf)]++
		}
		return nil
	})
	if err != nil {
		return err
	}
	if t.seen != 15 {
		return errors.New("row lacks input_tokens, output_tokens, cost_usd or cost_status")
	}
	t.calls++
	return nil
}

func (t *totalsOf) result() Totals {
	return Totals{Calls: t.calls, InputTokens: t.in.result(), OutputTokens: t.out.result(), CostUSD: t.cost.result(), CostStatus: t.costStatus}
}

// sumOf sums one nullable numeric column exactly.
type sumOf struct {
	sum            decimalSum
	known, unknown uint64
}

// add counts one JSON value: null, a number, or (quoted) a decimal string.
func (s *sumOf) add(value []byte, quoted bool) error {
	if bytes.Equal(value, jsonNull) {
		s.unknown++
		return nil
	}
	if quoted {
		if len(value) < 2 || value[0] != '"' || value[len(value)-1] != '"' {
			return errors.New("cost_usd is neither null nor a decimal string")
		}
		value = value[1 : len(value)-1]
	}
	if err := s.sum.add(value); err != nil {
		return err
	}
	s.known++
	return nil
}

func (s *sumOf) result() Sum {
	total := s.sum.String()
	if s.unknown > 0 {
		total += " " + UnknownMarker
	}
	return Sum{Total: total, KnownRows: s.known, UnknownRows: s.unknown}
}

// decimalSum is an exact sum of decimal numbers: value / 10^scale.
type decimalSum struct {
	value big.Int
	scale int
	tmp   big.Int
}

// maxDecimalLen bounds one number; the ledger's widest is Decimal(18, 12).
const maxDecimalLen = 80

var errNotDecimal = errors.New("not a decimal number")

// add adds a decimal number such as "-12.0345" (no exponent).
func (d *decimalSum) add(s []byte) error {
	if len(s) == 0 || len(s) > maxDecimalLen {
		return errNotDecimal
	}
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	intPart, frac, hasDot := bytes.Cut(s, []byte("."))
	if len(intPart) == 0 || hasDot && len(frac) == 0 || !allDigits(intPart) || !allDigits(frac) {
		return errNotDecimal
	}
	var mantissa uint64
	digits := len(intPart) + len(frac)
	if digits <= 19 {
		for _, part := range [][]byte{intPart, frac} {
			for _, c := range part {
				mantissa = mantissa*10 + uint64(c-'0')
			}
		}
		d.tmp.SetUint64(mantissa)
	} else if _, ok := d.tmp.SetString(string(intPart)+string(frac), 10); !ok {
		return errNotDecimal
	}
	if neg {
		d.tmp.Neg(&d.tmp)
	}
	switch {
	case len(frac) > d.scale:
		d.value.Mul(&d.value, pow10(len(frac)-d.scale))
		d.scale = len(frac)
	case len(frac) < d.scale:
		d.tmp.Mul(&d.tmp, pow10(d.scale-len(frac)))
	}
	d.value.Add(&d.value, &d.tmp)
	return nil
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

var pow10s [maxDecimalLen + 1]*big.Int

func init() {
	ten := big.NewInt(10)
	pow10s[0] = big.NewInt(1)
	for i := 1; i < len(pow10s); i++ {
		pow10s[i] = new(big.Int).Mul(pow10s[i-1], ten)
	}
}

func pow10(n int) *big.Int { return pow10s[n] }

// String formats the sum exactly, without trailing fractional zeros.
func (d *decimalSum) String() string {
	digits := new(big.Int).Abs(&d.value).Text(10)
	if d.scale > 0 {
		if len(digits) <= d.scale {
			digits = strings.Repeat("0", d.scale-len(digits)+1) + digits
		}
		cut := len(digits) - d.scale
		frac := strings.TrimRight(digits[cut:], "0")
		digits = digits[:cut]
		if frac != "" {
			digits += "." + frac
		}
	}
	if d.value.Sign() < 0 {
		return "-" + digits
	}
	return digits
}
