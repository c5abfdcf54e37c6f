package schema

import (
	"errors"
	"testing"
)

func TestParseMicros(t *testing.T) {
	valid := map[string]int64{
		"0": 0, "2.5": 2_500_000, "0.000001": 1, "0.035": 35_000, "22.50": 22_500_000,
		"999999999999.999999": 999_999_999_999_999_999,
	}
	for in, want := range valid {
		got, err := ParseMicros(in)
		if err != nil || got != want {
			t.Errorf("ParseMicros(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", ".5", "5.", "-1", "+1", "1e3", "0.0000001", "1,5", " 1", "1 ", "0x10",
		"1000000000000", "١", "1.\x00", "NaN"} {
		if _, err := ParseMicros(in); !errors.Is(err, ErrDecimal) {
			t.Errorf("ParseMicros(%q) err = %v, want ErrDecimal", in, err)
		}
	}
}

func TestFormatMicros(t *testing.T) {
	for v, want := range map[int64]string{
		0: "0", 1: "0.000001", 2_500_000: "2.5", 22_500_000: "22.5", 83_333: "0.083333", -35_000: "-0.035",
	} {
		if got := FormatMicros(v); got != want {
			t.Errorf("FormatMicros(%d) = %q, want %q", v, got, want)
		}
	}
}

// Seed corpus: testdata/fuzz/FuzzParseMicros.
func FuzzParseMicros(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseMicros(s)
		if err != nil {
			return
		}
		if v < 0 {
			t.Fatalf("ParseMicros(%q) = %d", s, v)
		}
		back, err := ParseMicros(FormatMicros(v))
		if err != nil || back != v {
			t.Fatalf("round trip of %q: %d → %q → %d, %v", s, v, FormatMicros(v), back, err)
		}
	})
}
