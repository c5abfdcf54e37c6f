// Package decimal sums decimal numbers exactly, as the ledger stores
// money: no float ever touches a cost.
package decimal

import (
	"bytes"
	"errors"
	"math/big"
	"strings"
)

// Sum is an exact sum of decimal numbers such as the ledger's costs
// (Decimal(18, 12) as strings): value / 10^scale. The zero Sum is 0.
type Sum struct {
	value big.Int
	scale int
	tmp   big.Int
}

// maxDecimalLen bounds one number; the ledger's widest is Decimal(18, 12).
const maxDecimalLen = 80

// ErrNotDecimal is returned for anything but a plain decimal number.
var ErrNotDecimal = errors.New("not a decimal number")

// Add adds a decimal number such as "-12.0345" (no exponent).
func (d *Sum) Add(s []byte) error {
	if len(s) == 0 || len(s) > maxDecimalLen {
		return ErrNotDecimal
	}
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	intPart, frac, hasDot := bytes.Cut(s, []byte("."))
	if len(intPart) == 0 || hasDot && len(frac) == 0 || !allDigits(intPart) || !allDigits(frac) {
		return ErrNotDecimal
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
		return ErrNotDecimal
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
func (d *Sum) String() string {
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
