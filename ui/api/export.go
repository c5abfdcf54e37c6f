package api

import (
	"archive/zip"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/docketlabs/docket/internal/atomicfile"
	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/audit"
	"github.com/docketlabs/docket/ui/auth"
)

// exportRequest is the body of POST /api/v1/exports.
type exportRequest struct {
	Tenant           string    `json:"tenant"`
	From             time.Time `json:"from"`
	To               time.Time `json:"to"`
	Format           string    `json:"format"`
	Reason           string    `json:"reason"`
	IncludeAccessLog bool      `json:"include_access_log"`
	IncludeState     bool      `json:"include_state"`
}

// exportKeep is how long a bundle made from the UI stays downloadable.
const exportKeep = 24 * time.Hour

var exportIDPattern = regexp.MustCompile(`^[A-Z2-7]{26}$`)

// bundleMetaName is the file beside a bundle made from the UI that says
// whose it is and until when it may be downloaded.
const bundleMetaName = ".bundle.json"

type bundleMeta struct {
	Owner     string    `json:"owner"`
	ExpiresAt time.Time `json:"expires_at"`
}

// createExport writes an audit bundle (recorded in the access log by the
// audit package) into ExportDir/<id>, owned by the session's user and
// downloadable until the expires_at it answers with.
func (a *api) createExport(w http.ResponseWriter, r *http.Request, s auth.Session) error {
	var body exportRequest
	if err := decode(r, &body); err != nil {
		return err
	}
	format, err := audit.ParseFormat(body.Format)
	if err != nil {
		return httpError(http.StatusBadRequest, "format must be jsonl, csv or parquet")
	}
	if a.ExportDir == "" {
		return httpError(http.StatusServiceUnavailable, "exports are not configured for this UI")
	}
	a.sweepExports()
	tenant := body.Tenant
	if tenant == "" {
		tenant = access.AllTenants
	}
	id := rand.Text()
	dir := filepath.Join(a.ExportDir, id)
	// A large export takes longer than the write timeout to make.
	out := extendWrites(w, r)
	m, err := audit.Export(r.Context(), a.Ledger, s.Principal(tenant), audit.Request{Tenant: body.Tenant, From: body.From, To: body.To,
		Format: format, IncludeAccessLog: body.IncludeAccessLog, IncludeState: body.IncludeState, Reason: body.Reason}, dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return err
	}
	meta := bundleMeta{Owner: s.User, ExpiresAt: a.Now().UTC().Add(exportKeep).Truncate(time.Second)}
	raw, _ := json.Marshal(meta)
	if err := atomicfile.WriteFile(filepath.Join(dir, bundleMetaName), raw, 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return fmt.Errorf("export: record owner: %w", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	return json.NewEncoder(out).Encode(map[string]any{"id": id, "manifest": m, "download": "/api/v1/exports/" + id + ".zip",
		"expires_at": meta.ExpiresAt})
}

// readBundleMeta returns the owner and expiry of the bundle in dir.
func readBundleMeta(dir string) (bundleMeta, bool) {
	var meta bundleMeta
	raw, err := os.ReadFile(filepath.Join(dir, bundleMetaName))
	if err != nil || json.Unmarshal(raw, &meta) != nil || meta.Owner == "" {
		return bundleMeta{}, false
	}
	return meta, true
}

// downloadExport streams a bundle as a zip to the user who made it, until
// it expires.
func (a *api) downloadExport(w http.ResponseWriter, r *http.Request, s auth.Session) error {
	id, ok := strings.CutSuffix(r.PathValue("file"), ".zip")
	if !ok || !exportIDPattern.MatchString(id) || a.ExportDir == "" {
		return httpError(http.StatusNotFound, "no such export")
	}
	dir := filepath.Join(a.ExportDir, id)
	meta, ok := readBundleMeta(dir)
	if !ok || meta.Owner != s.User {
		return httpError(http.StatusNotFound, "no such export")
	}
	if !a.Now().Before(meta.ExpiresAt) {
		_ = os.RemoveAll(dir)
		return httpError(http.StatusGone, "this export expired at "+meta.ExpiresAt.Format(time.RFC3339)+"; make it again")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("export: list bundle: %w", err)
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="docket-export-%s.zip"`, id))
	zw := zip.NewWriter(extendWrites(w, r))
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if err := addToZip(zw, dir, e.Name()); err != nil {
			// Headers are gone; a broken zip is what the client sees,
			// and the log says why.
			a.Logger.Error("export download", "id", id, "err", err)
			return nil
		}
	}
	if err := zw.Close(); err != nil {
		a.Logger.Error("export download", "id", id, "err", err)
	}
	return nil
}

func addToZip(zw *zip.Writer, dir, name string) error {
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	dst, err := zw.Create(name)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, f)
	return err
}

// sweepExports removes expired bundles, and bundles whose record of owner
// and expiry is missing once they are older than exportKeep.
func (a *api) sweepExports() {
	entries, err := os.ReadDir(a.ExportDir)
	if err != nil {
		return
	}
	now := a.Now()
	for _, e := range entries {
		if !e.IsDir() || !exportIDPattern.MatchString(e.Name()) {
			continue
		}
		dir := filepath.Join(a.ExportDir, e.Name())
		meta, ok := readBundleMeta(dir)
		info, err := e.Info()
		if ok && !now.Before(meta.ExpiresAt) || !ok && err == nil && now.Sub(info.ModTime()) > exportKeep {
			_ = os.RemoveAll(dir)
		}
	}
}
