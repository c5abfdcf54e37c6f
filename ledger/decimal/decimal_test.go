package decimal

import (
	"strings"
	"testing"
)

func TestDecimalSum(t *testing.T) {
	var d Sum
	for _, s := range []string{"0.000250000001", "12.3456", "-0.1", "99999999999999999999999.9"} {
		if err := d.Add([]byte(s)); err != nil {
			t.Fatal(s, err)
		}
	}
	if got := d.String(); got != "100000000000000000000012.145850000001" {
		t.Fatalf("sum %s", got)
	}
	for _, bad := range []string{"", "1e5", ".5", "5.", "--1", "1.2.3", "nan", strings.Repeat("9", 81)} {
		if err := d.Add([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	var neg Sum
	_ = neg.Add([]byte("-0.25"))
	if neg.String() != "-0.25" {
		t.Fatalf("negative: %s", neg.String())
	}
}
