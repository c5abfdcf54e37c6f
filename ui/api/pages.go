package api

import (
	"bytes"
	"net/http"
	"strings"
	"time"

	"github.com/docketlabs/docket/ui/web"
)

// contentSecurityPolicy allows only the UI's own scripts, styles and API.
// Stored content may hold markup; even if some were ever rendered, it
// could neither run nor load anything from elsewhere.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
		if r.TLS != nil {
			h.Set("Strict-Transport-Security", "max-age=31536000")
		}
		if !strings.HasPrefix(r.URL.Path, "/assets/") {
			h.Set("Cache-Control", "no-store")
		}
		next.ServeHTTP(w, r)
	})
}

// pages serves the single-page app: every page URL answers index.html, so
// a complaint's permalink works when opened directly.
func (a *api) pages(mux *http.ServeMux) {
	assets := http.FileServerFS(web.Assets())
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", assets))
	index := web.Index()
	modified := time.Now()
	serveIndex := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		http.ServeContent(w, r, "index.html", modified, bytes.NewReader(index))
	}
	for _, p := range []string{"GET /{$}", "GET /login", "GET /account", "GET /ledger", "GET /costs", "GET /reconcile", "GET /export",
		"GET /complaints/{trace_id}", "GET /admin/holds", "GET /admin/deletions", "GET /admin/access-log", "GET /admin/tokens"} {
		mux.HandleFunc(p, serveIndex)
	}
}
