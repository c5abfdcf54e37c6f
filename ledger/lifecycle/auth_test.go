package lifecycle

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/ledgerstore"
)

func TestOnlyAdminsOfTheTenantChangeStateAndEveryAttemptIsRecorded(t *testing.T) {
	f := newFixture(t, dirStore(t), Options{})
	c := f.call(callSpec{endUser: "u", start: time.Now().UTC(), input: "keep me"})
	scope := Scope{Tenant: f.tenant, EndUserRef: "u"}
	viewer := access.Principal{User: "vic", Role: access.RoleViewer, Tenants: []string{f.tenant}}
	auditor := access.Principal{User: "aud", Role: access.RoleAuditor, Tenants: []string{f.tenant}}
	otherAdmin := access.Principal{User: "oli", Role: access.RoleAdmin, Tenants: []string{"globex"}}
	nobody := access.Principal{Role: access.RoleAdmin, Tenants: []string{access.AllTenants}}

	cases := []struct {
		name   string
		p      access.Principal
		reason string
		detail string
	}{
		{"viewer", viewer, "r", DetailRole},
		{"auditor", auditor, "r", DetailRole},
		{"admin of another tenant", otherAdmin, "r", access.DetailTenant},
		{"no reason", admin, "  ", access.DetailReason},
		{"unknown actor", nobody, "r", access.DetailInvalidInput},
	}
	for _, tc := range cases {
		_, _, err := f.m.CreateHold(ctx, tc.p, HoldRequest{Scope: scope, Reason: tc.reason})
		if !errors.Is(err, access.ErrDenied) {
			t.Errorf("%s: create hold: %v, want denial", tc.name, err)
		}
		_, err = f.m.RequestDeletion(ctx, tc.p, DeletionRequest{Scope: scope, Reason: tc.reason})
		if !errors.Is(err, access.ErrDenied) {
			t.Errorf("%s: request deletion: %v, want denial", tc.name, err)
		}
		_, err = f.m.Expire(ctx, tc.p, ExpireOptions{Tenant: f.tenant, Reason: tc.reason + "x"})
		if tc.detail != access.DetailReason && !errors.Is(err, access.ErrDenied) {
			t.Errorf("%s: expire: %v, want denial", tc.name, err)
		}
	}
	if _, err := f.m.Expire(ctx, otherAdmin, ExpireOptions{}); !errors.Is(err, access.ErrDenied) {
		t.Errorf("expiring every tenant needs a grant of all: %v", err)
	}
	if holds, _ := f.m.Holds(ctx, admin, HoldFilter{Tenant: f.tenant}); len(holds) != 0 {
		t.Fatalf("a denied attempt created a hold: %+v", holds)
	}
	if jobs, _ := f.m.DeletionJobs(ctx, admin, JobFilter{Tenant: f.tenant}); len(jobs) != 0 || !f.exists(c.InputRef) {
		t.Fatalf("a denied attempt created a deletion job: %+v", jobs)
	}
	for _, action := range []string{ActionHoldCreate, ActionDeleteRequest} {
		entries := f.accessEntries(action)
		if len(entries) != len(cases) {
			t.Fatalf("%s: %d access-log entries, want %d", action, len(entries), len(cases))
		}
		for i, e := range entries {
			if e.Outcome != access.OutcomeDenied || e.Detail != cases[i].detail || e.Actor != cases[i].p.User {
				t.Errorf("%s %s: entry %+v", action, cases[i].name, e)
			}
		}
	}

	// A real hold, then attempts to release it.
	h, _, err := f.m.CreateHold(ctx, admin, HoldRequest{Scope: scope, Reason: "court order 7"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []access.Principal{viewer, otherAdmin} {
		if _, err := f.m.ReleaseHold(ctx, p, h.ID, "please"); !errors.Is(err, access.ErrDenied) {
			t.Errorf("%s released a hold: %v", p.User, err)
		}
	}
	if _, err := f.m.ReleaseHold(ctx, admin, "hold_doesnotexist", "x"); !errors.Is(err, ErrInvalid) {
		t.Errorf("release of an unknown hold: %v", err)
	}
	if got, _ := f.m.Hold(ctx, admin, h.ID); got.Status != HoldActive || !f.storeHeld(c.InputRef) {
		t.Fatal("a denied release changed the hold")
	}
	// Readers see only their tenants.
	if _, err := f.m.Hold(ctx, otherAdmin, h.ID); !errors.Is(err, access.ErrDenied) {
		t.Errorf("hold of another tenant readable: %v", err)
	}
	if hs, err := f.m.Holds(ctx, viewer, HoldFilter{}); err != nil || len(hs) != 1 {
		t.Errorf("viewer of the tenant lists holds: %+v %v", hs, err)
	}
	if hs, err := f.m.Holds(ctx, otherAdmin, HoldFilter{Tenant: f.tenant}); !errors.Is(err, access.ErrDenied) {
		t.Errorf("holds of another tenant listed: %+v %v", hs, err)
	}
	if _, err := f.states(otherAdmin, c.TraceID); !errors.Is(err, access.ErrDenied) {
		t.Errorf("call states of another tenant: %v", err)
	}
}

func TestBadRequestsGetClearErrorsThatCarryNoValues(t *testing.T) {
	f := newFixture(t, dirStore(t), Options{})
	const secret = "kim.minjun@example.com"
	now := time.Now().UTC()
	cases := []struct {
		name   string
		scope  Scope
		reason string
		want   string
	}{
		{"no tenant", Scope{}, "r", "tenant"},
		{"tenant with control characters", Scope{Tenant: "a\x00" + secret}, "r", "tenant"},
		{"bad trace", Scope{Tenant: f.tenant, TraceID: secret}, "r", "trace_id"},
		{"all-zero trace", Scope{Tenant: f.tenant, TraceID: strings.Repeat("0", 32)}, "r", "trace_id"},
		{"end user with NUL", Scope{Tenant: f.tenant, EndUserRef: secret + "\x00"}, "r", "end_user_ref"},
		{"end user invalid UTF-8", Scope{Tenant: f.tenant, EndUserRef: secret + "\xff"}, "r", "end_user_ref"},
		{"huge end user", Scope{Tenant: f.tenant, EndUserRef: strings.Repeat(secret, 1000)}, "r", "end_user_ref"},
		{"empty range", Scope{Tenant: f.tenant, From: now, To: now}, "r", "from must be before to"},
		{"range before 1970", Scope{Tenant: f.tenant, From: time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)}, "r", "time range"},
		{"reason invalid UTF-8", Scope{Tenant: f.tenant}, secret + "\xc3", "reason"},
		{"huge reason", Scope{Tenant: f.tenant}, strings.Repeat(secret, 100), "reason"},
	}
	for _, tc := range cases {
		for _, op := range []func() error{
			func() error {
				_, _, err := f.m.CreateHold(ctx, admin, HoldRequest{Scope: tc.scope, Reason: tc.reason})
				return err
			},
			func() error {
				_, err := f.m.RequestDeletion(ctx, admin, DeletionRequest{Scope: tc.scope, Reason: tc.reason})
				return err
			},
		} {
			err := op()
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: got %v, want an invalid-request error about %s", tc.name, err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "kim.minjun") {
				t.Errorf("%s: the error carries the value: %v", tc.name, err)
			}
		}
	}
	log, err := ledgerStore.AccessLog(ctx, ledgerstore.AccessFilter{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range log {
		if e.Detail == access.DetailInvalidInput && (e.Action == ActionHoldCreate || e.Action == ActionDeleteRequest) {
			n++
		}
		if strings.Contains(e.Tenant+e.TraceID+e.Reason+e.Detail, "kim.minjun") {
			t.Fatalf("the access log holds a rejected value: %+v", e)
		}
	}
	if n < 2*len(cases) {
		t.Fatalf("%d invalid attempts recorded, want %d", n, 2*len(cases))
	}
}
