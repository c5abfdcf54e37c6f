package reconcile

import (
	"testing"
)

// TestToleranceBoundaries: the default 0.5% is inclusive, exactly, on both
// sides, for requests and for tokens; the tolerance is configurable.
func TestToleranceBoundaries(t *testing.T) {
	side := func(req, in, out, cached int64) Side {
		return Side{Requests: new(req), InputTokens: new(in), OutputTokens: new(out), CacheReadTokens: new(cached)}
	}
	for _, c := range []struct {
		name        string
		ledger, rep Side
		tol         float64
		unknown     bool // some ledger calls have no usage
		want        string
	}{
		{"equal", side(1000, 2000, 1000, 0), side(1000, 2000, 1000, 0), 0.5, false, StateOK},
		{"0.5% fewer calls", side(995, 2000, 1000, 0), side(1000, 2000, 1000, 0), 0.5, false, StateOK},
		{"0.6% fewer calls", side(994, 2000, 1000, 0), side(1000, 2000, 1000, 0), 0.5, false, StateLedgerMissing},
		{"0.5% more calls", side(1005, 2000, 1000, 0), side(1000, 2000, 1000, 0), 0.5, false, StateOK},
		{"0.6% more calls", side(1006, 2000, 1000, 0), side(1000, 2000, 1000, 0), 0.5, false, StateLedgerExtra},
		{"1% fewer at 1%", side(990, 2000, 1000, 0), side(1000, 2000, 1000, 0), 1, false, StateOK},
		{"1.1% fewer at 1%", side(989, 2000, 1000, 0), side(1000, 2000, 1000, 0), 1, false, StateLedgerMissing},
		{"zero tolerance", side(999, 2000, 1000, 0), side(1000, 2000, 1000, 0), 0.0000001, false, StateLedgerMissing},
		{"input 0.5% off", side(1000, 2010, 1000, 0), side(1000, 2000, 1000, 0), 0.5, false, StateOK},
		{"input 0.55% off", side(1000, 2011, 1000, 0), side(1000, 2000, 1000, 0), 0.5, false, StateTokensDiffer},
		{"output off", side(1000, 2000, 900, 0), side(1000, 2000, 1000, 0), 0.5, false, StateTokensDiffer},
		{"cached off", side(1000, 2000, 1000, 100), side(1000, 2000, 1000, 200), 0.5, false, StateTokensDiffer},
		{"provider reported nothing", side(3, 30, 30, 0), side(0, 0, 0, 0), 0.5, false, StateLedgerExtra},
		{"ledger has nothing", side(0, 0, 0, 0), side(3, 30, 30, 0), 0.5, false, StateLedgerMissing},
		{"no request count: tokens 0.5% short", side(1000, 1990, 1000, 0), Side{InputTokens: new(int64(2000)), OutputTokens: new(int64(1005)), CacheReadTokens: new(int64(0))}, 0.5, false, StateOK},
		{"no request count: tokens 1% short", side(1000, 1980, 990, 0), Side{InputTokens: new(int64(2000)), OutputTokens: new(int64(1000)), CacheReadTokens: new(int64(0))}, 0.5, false, StateLedgerMissing},
		{"no request count, ledger usage unknown", side(1000, 1980, 990, 0), Side{InputTokens: new(int64(2000)), OutputTokens: new(int64(1000)), CacheReadTokens: new(int64(0))}, 0.5, true, StateUndetermined},
		// Unknown usage on one call: calls still compared, its tokens not.
		{"usage unknown, calls equal", side(1000, 10, 10, 0), side(1000, 2000, 1000, 0), 0.5, true, StateOK},
	} {
		rep := c.rep
		cell := Cell{Ledger: c.ledger, Reported: &rep}
		if c.unknown {
			cell.LedgerUsageUnknown = 1
		}
		judge(&cell, c.tol)
		if cell.State != c.want {
			t.Errorf("%s: %s, want %s (drift %+v)", c.name, cell.State, c.want, cell.Drift)
		}
	}
}

func TestNotImportedAndDrift(t *testing.T) {
	c := Cell{Ledger: Side{Requests: new(int64(5))}}
	judge(&c, 0.5)
	if c.State != StateNotImported {
		t.Errorf("no report: %s", c.State)
	}
	d := drift(new(int64(990)), new(int64(1000)))
	if d == nil || *d != -1 {
		t.Errorf("drift 990/1000 = %v, want -1", d)
	}
	if drift(new(int64(1)), new(int64(0))) != nil || *drift(new(int64(0)), new(int64(0))) != 0 || drift(nil, new(int64(3))) != nil {
		t.Error("drift against zero or unknown")
	}
}
