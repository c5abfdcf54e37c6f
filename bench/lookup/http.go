package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"time"

	"go.opentelemetry.io/collector/config/configoptional"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/lifecycle"
	"github.com/docketlabs/docket/ui/api"
	"github.com/docketlabs/docket/ui/apiclient"
	"github.com/docketlabs/docket/ui/auth"
)

// benchPassword is the admin's password in the throwaway users file.
const benchPassword = "lookup benchmark passphrase"

// tokenLifetime outlasts the longest run.
const tokenLifetime = 48 * time.Hour

// evidenceAPI serves the UI's handler over loopback HTTP on the bench's
// ledger, with a directory content store for the lifecycle state, and
// presents an API token of an admin of every tenant: what the complaint
// page requests, with its access-log write, lifecycle and replay reads. A
// token, not a signed-in session: a run at full size outlasts a session's
// idle timeout between its measurements.
func evidenceAPI(ctx context.Context, store *ledgerstore.Store, dir string) (*apiclient.Client, func(), error) {
	cfg := contentstore.NewDefaultConfig()
	cfg.Directory = configoptional.Some(contentstore.DirConfig{Path: filepath.Join(dir, "content")})
	content, err := contentstore.Open(ctx, cfg, nil)
	if err != nil {
		return nil, nil, err
	}
	users, oneTime, err := auth.OpenUsers(filepath.Join(dir, "bench-users.json"))
	if err != nil {
		_ = content.Close()
		return nil, nil, err
	}
	if oneTime != "" {
		if err = users.ChangePassword("admin", oneTime, benchPassword); err != nil {
			_ = content.Close()
			return nil, nil, err
		}
	}
	authn, _, err := auth.New(auth.DefaultConfig(filepath.Join(dir, "bench-users.json")))
	if err != nil {
		_ = content.Close()
		return nil, nil, err
	}
	m, err := lifecycle.New(store, content, lifecycle.Options{})
	if err != nil {
		_ = content.Close()
		return nil, nil, err
	}
	logger := slog.New(slog.DiscardHandler)
	srv := httptest.NewServer(api.Handler(api.Deps{Ledger: store, Content: content, Lifecycle: m, Auth: authn, Logger: logger}))
	stop := func() { srv.Close(); _ = content.Close() }
	now := time.Now()
	secret, _, err := authn.Tokens().Create(fmt.Sprintf("lookup-bench-%d", now.UnixNano()),
		auth.Grants{access.AllTenants: access.RoleAdmin}, "admin", now.Add(tokenLifetime))
	if err != nil {
		stop()
		return nil, nil, fmt.Errorf("create the bench's API token: %w", err)
	}
	return apiclient.WithToken(srv.URL, secret), stop, nil
}
