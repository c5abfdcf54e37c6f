package schema

import (
	"errors"
	"strconv"
	"strings"
)

// MicrosDigits is the number of fractional digits a price may have. A price
// in USD per million tokens with 6 fractional digits is an integer number of
// pico-USD per token, so every cost computed from it is exact.
const MicrosDigits = 6

const maxIntegerDigits = 12 // keeps value·10⁶ well inside int64

// ErrDecimal reports a price string that is not a plain non-negative decimal
// with at most MicrosDigits fractional digits.
var ErrDecimal = errors.New("not a plain non-negative decimal with at most 6 fractional digits")

// ParseMicros parses a decimal such as "2.5" into millionths (2500000).
func ParseMicros(s string) (int64, error) {
	intPart, frac, hasDot := strings.Cut(s, ".")
	if intPart == "" || len(intPart) > maxIntegerDigits || len(frac) > MicrosDigits || (hasDot && frac == "") {
		return 0, ErrDecimal
	}
	if !allDigits(intPart) || !allDigits(frac) {
		return 0, ErrDecimal
	}
	frac += strings.Repeat("0", MicrosDigits-len(frac))
	v, err := strconv.ParseInt(intPart+frac, 10, 64)
	if err != nil {
		return 0, ErrDecimal
	}
	return v, nil
}

// FormatMicros is the inverse of ParseMicros, without trailing zeros.
func FormatMicros(v int64) string {
	sign, u := "", uint64(v)
	if v < 0 {
		sign, u = "-", -u
	}
	s := sign + strconv.FormatUint(u/1_000_000, 10)
	frac := u % 1_000_000
	if frac == 0 {
		return s
	}
	f := strconv.FormatUint(frac, 10)
	f = strings.Repeat("0", MicrosDigits-len(f)) + f
	return s + "." + strings.TrimRight(f, "0")
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
