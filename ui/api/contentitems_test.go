package api

import (
	"testing"

	"github.com/docketlabs/docket/ledger"
)

// Content that reached the call through its span events and log records
// (member_refs) is listed for reveal next to the four columns, once.
func TestContentItemsListTheCallsWholeSet(t *testing.T) {
	c := ledger.Call{InputRef: "in", OutputRef: "out", MemberRefs: []string{"in", "event", "log-record", "out"}, ContentStatus: "stored"}
	var got []string
	for _, it := range contentItems(c, nil, true) {
		got = append(got, it.Field+"="+it.Ref)
		if !it.Available {
			t.Errorf("%s %s not available: %s", it.Field, it.Ref, it.WhyNot)
		}
	}
	want := []string{"input=in", "output=out", "linked=event", "linked=log-record"}
	if len(got) != len(want) {
		t.Fatalf("items %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("items %v, want %v", got, want)
		}
	}
}
