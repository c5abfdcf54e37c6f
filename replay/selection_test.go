package replay

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/ledgertest"
)

func TestSelectionByCallIDsAndRandomSample(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	const model = "gpt-4o-mini-2024-07-18"
	// This test's calls start in an hour of 2025 no other test uses, so a
	// sample of that hour holds only them.
	var minutes int64
	_, _ = fmt.Sscanf(ledgertest.TraceID(t)[:6], "%x", &minutes)
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(minutes%500000) * time.Minute)
	var ids []CallID
	for i := range 5 {
		c := e.call(ledgertest.TraceID(t), fmt.Sprintf("%016x", i+1), "openai", model, fmt.Sprintf("Question %d", i), fmt.Sprintf("Answer %d", i))
		c.StartTime = start.Add(time.Duration(i) * time.Second)
		insert(t, c)
		ids = append(ids, CallID{TraceID: c.TraceID, SpanID: c.SpanID})
	}
	foreign := e.call(ledgertest.TraceID(t), "00000000000000ff", "openai", model, "Other tenant", "Other answer")
	foreign.Tenant, foreign.StartTime = "globex", start
	insert(t, foreign)

	rep, err := e.runner.Replay(ctx, auditor, Selection{Calls: ids[:2]}, Options{N: 2, Purpose: purpose, Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 2 || rep.Selection != "2 calls by ID" || e.requests.Load() != 4 {
		t.Fatalf("by ID: %d results, selection %q, %d requests: %+v", len(rep.Results), rep.Selection, e.requests.Load(), rep.Results)
	}
	for _, r := range rep.Results {
		if !slices.Contains(ids[:2], CallID{TraceID: r.TraceID, SpanID: r.SpanID}) || r.Completed != 2 {
			t.Fatalf("replayed %+v, which was not selected or not replayed twice", r)
		}
	}

	// A call of a tenant not granted is as good as absent, and nothing is sent.
	before := e.requests.Load()
	_, err = e.runner.Replay(ctx, auditor, Selection{Calls: []CallID{ids[2], {TraceID: foreign.TraceID, SpanID: foreign.SpanID}}},
		Options{N: 2, Purpose: purpose, Now: testNow})
	if err == nil || !strings.Contains(err.Error(), "1 of the 2 call IDs") || e.requests.Load() != before {
		t.Fatalf("foreign call ID: %v, %d requests sent", err, e.requests.Load()-before)
	}

	sample := &Sample{Tenant: "acme", Model: model, From: start, To: start.Add(time.Minute), Size: 3, Seed: 7}
	first, err := e.runner.Replay(ctx, auditor, Selection{Sample: sample}, Options{N: 1, Purpose: purpose, Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	// A sample never picks replays (they carry the replay time, and the
	// service docket-replay), so the same seed draws the same originals.
	again, err := e.runner.Replay(ctx, auditor, Selection{Sample: sample}, Options{N: 1, Purpose: purpose, Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	spans := func(rep Report) []string {
		var out []string
		for _, r := range rep.Results {
			out = append(out, r.TraceID+":"+r.SpanID)
			if r.ResponseModel != model || r.Tenant != "acme" {
				t.Fatalf("sampled a call outside the sample: %+v", r)
			}
		}
		slices.Sort(out)
		return out
	}
	a, b := spans(first), spans(again)
	if len(a) != 3 || !slices.Equal(a, b) || len(slices.Compact(slices.Clone(a))) != 3 {
		t.Fatalf("samples with one seed: %v and %v, want the same 3 distinct calls", a, b)
	}
	if !strings.HasPrefix(first.Selection, "random sample of 3 calls of tenant acme, model "+model) {
		t.Fatalf("selection %q", first.Selection)
	}

	_, err = e.runner.Replay(ctx, auditor, Selection{Sample: &Sample{Tenant: "globex", From: sample.From, To: sample.To, Size: 1}},
		Options{N: 1, Purpose: purpose, Now: testNow})
	if !errors.Is(err, access.ErrDenied) {
		t.Fatalf("sample of a tenant not granted: %v", err)
	}
}

func TestSelectionMustBeOneAndWellFormed(t *testing.T) {
	trace := strings.Repeat("ab", 16)
	now := time.Now()
	for name, sel := range map[string]Selection{
		"nothing":         {},
		"two":             {TraceID: trace, Calls: []CallID{{TraceID: trace, SpanID: "0000000000000001"}}},
		"bad trace":       {TraceID: "ABC"},
		"bad span":        {Calls: []CallID{{TraceID: trace, SpanID: "xyz"}}},
		"sample no range": {Sample: &Sample{Tenant: "acme", Size: 3}},
		"sample too big":  {Sample: &Sample{Tenant: "acme", Size: MaxSelected + 1, From: now, To: now.Add(time.Hour)}},
		"sample backward": {Sample: &Sample{Tenant: "acme", Size: 3, From: now, To: now.Add(-time.Hour)}},
	} {
		if err := sel.validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	id, err := ParseCallID(" " + strings.ToUpper(trace) + ":00F067AA0BA902B7 ")
	if err != nil || id.TraceID != trace || id.SpanID != "00f067aa0ba902b7" {
		t.Fatalf("ParseCallID: %+v %v", id, err)
	}
	for _, bad := range []string{trace, trace + ":", ":00f067aa0ba902b7", trace + ":00f067aa0ba902b7:1", "\x00"} {
		if _, err := ParseCallID(bad); err == nil {
			t.Errorf("ParseCallID(%q) accepted", bad)
		}
	}
}
