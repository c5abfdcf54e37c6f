package rowbinary

import (
	"regexp"
	"strings"
	"testing"

	"github.com/docketlabs/docket/queries"
)

// The encoder writes columns in callColumns order; the INSERT must name the
// same columns in the same order, and together they must cover the table.
func TestRowBinaryColumnsMatchInsert(t *testing.T) {
	q := queries.MustGet("insert_llm_calls")
	list := regexp.MustCompile(`(?s)INSERT INTO llm_calls \((.*?)\)`).FindStringSubmatch(q)
	if list == nil {
		t.Fatal("no column list in insert_llm_calls.sql")
	}
	var cols []string
	for _, c := range strings.Split(list[1], ",") {
		cols = append(cols, strings.TrimSpace(c))
	}
	if strings.Join(cols, ",") != strings.Join(callColumns, ",") {
		t.Fatalf("insert columns\n%v\nencoder columns\n%v", cols, callColumns)
	}
}

func TestDecimal12(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "0.000123450000": 123450000, "1.5": 1_500_000_000_000, "999999.999999999999": 999_999_999_999_999_999} {
		got, err := decimal12(&in)
		if err != nil || *got != want {
			t.Errorf("decimal12(%q) = %v, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"-1", "1000000", "0.0000000000001", "x", "1.2.3", ""} {
		if _, err := decimal12(&bad); err == nil {
			t.Errorf("decimal12(%q): no error", bad)
		}
	}
	if got, err := decimal12(nil); got != nil || err != nil {
		t.Fatal("nil must stay NULL")
	}
}
