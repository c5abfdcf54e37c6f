package views

import (
	"strings"

	"github.com/docketlabs/docket/internal/conventions"
)

// FormatCost shows a cost sum for people, in the convention of the ledger's
// prices and exports: "$0.0123" when every call's cost is known, "$0.0123 +?"
// when unknownCalls calls lack one, and "—" when none is known (cost nil).
// Digits are never rounded; at least cents are shown ("$1.50"). A cost that
// is not a decimal number is shown as unknown.
func FormatCost(cost *string, unknownCalls uint64) string {
	if cost == nil {
		return conventions.UnknownShown
	}
	s, ok := dollars(*cost)
	if !ok {
		return conventions.UnknownShown
	}
	if unknownCalls > 0 {
		s += " " + conventions.UnknownMarker
	}
	return s
}

// dollars formats a plain decimal ("-12.5", "0.000123") as "-$12.50",
// "$0.000123".
func dollars(d string) (string, bool) {
	neg := strings.HasPrefix(d, "-")
	d = strings.TrimPrefix(d, "-")
	whole, frac, dot := strings.Cut(d, ".")
	if whole == "" || dot && frac == "" || !digits(whole) || !digits(frac) || len(d) > 80 {
		return "", false
	}
	frac = strings.TrimRight(frac, "0")
	for len(frac) < 2 {
		frac += "0"
	}
	s := "$" + whole + "." + frac
	if neg {
		s = "-" + s
	}
	return s, true
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
