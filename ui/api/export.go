package api

import (
	"archive/zip"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

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

// createExport writes an audit bundle (recorded in the access log by the
// audit package) into ExportDir/<id>, owned by the session's user.
func (a *api) createExport(r *http.Request, s auth.Session) (int, any, error) {
	var body exportRequest
	if err := decode(r, &body); err != nil {
		return 0, nil, err
	}
	format, err := audit.ParseFormat(body.Format)
	if err != nil {
		return 0, nil, httpError(http.StatusBadRequest, "format must be jsonl, csv or parquet")
	}
	if a.ExportDir == "" {
		return 0, nil, httpError(http.StatusServiceUnavailable, "exports are not configured for this UI")
	}
	a.sweepExports()
	tenant := body.Tenant
	if tenant == "" {
		tenant = access.AllTenants
	}
	id := rand.Text()
	dir := filepath.Join(a.ExportDir, id)
	m, err := audit.Export(r.Context(), a.Ledger, s.Principal(tenant), audit.Request{Tenant: body.Tenant, From: body.From, To: body.To,
		Format: format, IncludeAccessLog: body.IncludeAccessLog, IncludeState: body.IncludeState, Reason: body.Reason}, dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return 0, nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, ".owner"), []byte(s.User), 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return 0, nil, fmt.Errorf("export: record owner: %w", err)
	}
	return http.StatusCreated, map[string]any{"id": id, "manifest": m, "download": "/api/v1/exports/" + id + ".zip"}, nil
}

// downloadExport streams a bundle as a zip to the user who made it.
func (a *api) downloadExport(w http.ResponseWriter, r *http.Request, s auth.Session) error {
	id, ok := strings.CutSuffix(r.PathValue("file"), ".zip")
	if !ok || !exportIDPattern.MatchString(id) || a.ExportDir == "" {
		return httpError(http.StatusNotFound, "no such export")
	}
	dir := filepath.Join(a.ExportDir, id)
	owner, err := os.ReadFile(filepath.Join(dir, ".owner"))
	if err != nil || string(owner) != s.User {
		return httpError(http.StatusNotFound, "no such export")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("export: list bundle: %w", err)
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="docket-export-%s.zip"`, id))
	zw := zip.NewWriter(w)
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
	defer f.Close()
	dst, err := zw.Create(name)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, f)
	return err
}

// sweepExports removes bundles older than exportKeep.
func (a *api) sweepExports() {
	entries, err := os.ReadDir(a.ExportDir)
	if err != nil {
		return
	}
	for _, e := range entries {
		info, err := e.Info()
		if err == nil && e.IsDir() && exportIDPattern.MatchString(e.Name()) && time.Since(info.ModTime()) > exportKeep {
			_ = os.RemoveAll(filepath.Join(a.ExportDir, e.Name()))
		}
	}
}
