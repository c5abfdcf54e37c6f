package usage_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger/usage"
)

// A usage endpoint that echoes the request (a misconfigured proxy, a
// hostile base URL) must not put the admin key into the error that ends up
// in logs.
func TestErrorsNeverCarryTheAdminKey(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprintf(w, "upstream said no to %s %s", r.Header.Get("Authorization"), r.Header.Get("x-api-key"))
	}))
	defer srv.Close()
	for _, p := range []string{usage.ProviderOpenAI, usage.ProviderAnthropic} {
		c := usage.Client{Provider: p, BaseURL: srv.URL, AdminKey: "sk-admin-very-secret-123", HTTP: srv.Client()}
		_, err := c.Pull(context.Background(), time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
		if err == nil || strings.Contains(err.Error(), "very-secret") || !strings.Contains(err.Error(), "502") {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// A report whose next_page never changes would be pulled forever (up to
// the page bound, thousands of requests): a repeated cursor is an error at
// once.
func TestRepeatedCursorStops(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, `{"object":"page","data":[],"has_more":true,"next_page":"page_same"}`)
	}))
	defer srv.Close()
	c := usage.Client{Provider: usage.ProviderOpenAI, BaseURL: srv.URL, AdminKey: "k", HTTP: srv.Client()}
	_, err := c.Pull(context.Background(), time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
	if err == nil || hits.Load() > 2 {
		t.Errorf("after %d requests: %v", hits.Load(), err)
	}
}
