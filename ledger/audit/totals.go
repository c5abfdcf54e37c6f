package audit

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/ledger/decimal"
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
	sum            decimal.Sum
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
	if err := s.sum.Add(value); err != nil {
		return err
	}
	s.known++
	return nil
}

func (s *sumOf) result() Sum {
	total := s.sum.String()
	if s.unknown > 0 {
		total += " " + conventions.UnknownMarker
	}
	return Sum{Total: total, KnownRows: s.known, UnknownRows: s.unknown}
}
