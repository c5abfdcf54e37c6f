// Package api serves the JSON API of the evidence UI.
package api

import (
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/docketlabs/docket/ledger"
)

// Evidence is the answer for one complaint (trace).
type Evidence struct {
	TraceID       string                `json:"trace_id"`
	Calls         []ledger.Call         `json:"calls"`
	EvidenceSpans []ledger.EvidenceSpan `json:"evidence_spans"`
}

// Handler serves /api/v1/… from a ledger store.
func Handler(store *ledger.Store, logger *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/evidence/{trace_id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("trace_id")
		if !ledger.ValidTraceID(id) {
			writeError(w, http.StatusBadRequest, "trace_id must be 32 lowercase hex digits")
			return
		}
		calls, err := store.CallsByTrace(r.Context(), id)
		if err != nil {
			logger.Error("evidence: read calls", "err", err)
			writeError(w, http.StatusServiceUnavailable, "ledger unavailable")
			return
		}
		spans, err := store.EvidenceByTrace(r.Context(), id)
		if err != nil {
			logger.Error("evidence: read spans", "err", err)
			writeError(w, http.StatusServiceUnavailable, "ledger unavailable")
			return
		}
		if len(calls) == 0 && len(spans) == 0 {
			writeError(w, http.StatusNotFound, "no evidence for this trace_id")
			return
		}
		if calls == nil {
			calls = []ledger.Call{}
		}
		if spans == nil {
			spans = []ledger.EvidenceSpan{}
		}
		writeJSON(w, http.StatusOK, Evidence{TraceID: id, Calls: calls, EvidenceSpans: spans})
	})
	mux.HandleFunc("GET /api/v1/ledger/stats", func(w http.ResponseWriter, r *http.Request) {
		counts, err := store.CountCalls(r.Context())
		if err != nil {
			logger.Error("stats: count calls", "err", err)
			writeError(w, http.StatusServiceUnavailable, "ledger unavailable")
			return
		}
		writeJSON(w, http.StatusOK, counts)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	return mux
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}
