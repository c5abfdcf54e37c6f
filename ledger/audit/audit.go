// Package audit exports the ledger for audits as a bundle an auditor can
// check later: the calls of a tenant and time range (optionally the access
// log and the lifecycle records) as JSONL, CSV or Parquet, streamed from
// the engine, and a manifest with the query, totals, the SHA-256 of every
// file and a hash chain over every file's rows. Verify checks a bundle
// against its manifest. Every export attempt, allowed or not, is recorded
// in the access log; a bundle is handed out only once that record is
// written. README.md documents the formats for auditors.
package audit

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/docketlabs/docket/internal/atomicfile"
	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/storage"
	"github.com/docketlabs/docket/queries"
)

// Format is the file format of a bundle's tables.
type Format string

// Formats.
const (
	FormatJSONL   Format = "jsonl"
	FormatCSV     Format = "csv"
	FormatParquet Format = "parquet"
)

// ParseFormat checks a format name.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case FormatJSONL, FormatCSV, FormatParquet:
		return f, nil
	}
	return "", fmt.Errorf("audit: unsupported format %q (supported: jsonl, csv, parquet)", s)
}

// Request is what to export. The manifest repeats it as "query".
type Request struct {
	// Tenant to export; "" exports every tenant and needs a grant of all.
	Tenant string `json:"tenant"`
	// From and To bound the calls' start times: [From, To). The access
	// log and lifecycle records are bounded by the time they were recorded.
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// Format of every file of the bundle.
	Format Format `json:"format"`
	// IncludeAccessLog adds access_log.<ext> (admins only).
	IncludeAccessLog bool `json:"include_access_log"`
	// IncludeState adds the lifecycle records: legal holds, deletion jobs,
	// content events and expiry runs.
	IncludeState bool `json:"include_state"`
	// Reason is why the export is made; it is recorded (required).
	Reason string `json:"reason"`
}

// Manifest describes a bundle: manifest.json.
type Manifest struct {
	Version     string    `json:"version"`
	GeneratedAt time.Time `json:"generated_at"`
	GeneratedBy string    `json:"generated_by"`
	// Engine is the engine version that wrote the rows: the canonical
	// form of CSV and Parquet rows is recomputed with such an storage.
	Engine string `json:"engine"`
	// AccessEventID is the access-log entry that records this export; its
	// ref is Root.
	AccessEventID string  `json:"access_event_id"`
	Query         Request `json:"query"`
	// Root binds the manifest's own metadata and all files' row counts and
	// chain heads (see bundleRoot).
	Root   string `json:"root"`
	Files  []File `json:"files"`
	Totals Totals `json:"totals"`
}

// File is one table of a bundle.
type File struct {
	Name   string `json:"name"`
	Table  string `json:"table"`
	Format Format `json:"format"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
	Rows   uint64 `json:"rows"`
	// ChainHead is the hash chain over the rows' canonical bytes.
	ChainHead string `json:"chain_head"`
	// Checkpoints are the chain's values after every CheckpointEvery rows.
	Checkpoints []string `json:"checkpoints"`
	Columns     []Column `json:"columns"`
}

// ManifestName is the manifest's file name in a bundle.
const ManifestName = "manifest.json"

// Access-log action and denial details of exports.
const (
	ActionExport = "export"
	// DetailRole: the role may not export (auditor and admin may).
	DetailRole = "role_may_not_export"
	// DetailAccessLog: only admins may export the access log.
	DetailAccessLog = "role_may_not_read_access_log"
	// DetailFailed: the export was allowed but did not complete.
	DetailFailed = "export_failed"
)

// MaxRowBytes bounds one row when a bundle is read back.
const MaxRowBytes = 16 << 20

const maxTenantLen = 256

// table is one exported table: its file's base name and its named query,
// which takes the parameters tenant, from and to.
type table struct {
	name, query string
}

const callsTable = "calls"

var (
	calls       = table{callsTable, "audit_calls"}
	conflicts   = table{"conflicts", "audit_conflicts"}
	accessLog   = table{"access_log", "audit_access_log"}
	stateTables = []table{
		{"legal_holds", "audit_legal_holds"},
		{"deletion_jobs", "audit_deletion_jobs"},
		{"content_events", "audit_content_events"},
		{"expiry_runs", "audit_expiry_runs"},
	}
)

// Export writes the bundle for req into dir (created if needed; it must
// be empty) and returns its manifest. p must be an auditor or admin of the
// tenant. The attempt is recorded in the access log whatever its outcome;
// if the record of a completed export cannot be written, the bundle is
// removed and an error returned.
func Export(ctx context.Context, store *ledgerstore.Store, p access.Principal, req Request, dir string) (Manifest, error) {
	req.Reason = strings.TrimSpace(req.Reason)
	req.From, req.To = req.From.UTC(), req.To.UTC()
	// Milliseconds: the access log's precision, so that the manifest's
	// generated_at and the entry's time are one value.
	e := ledgerstore.AccessEntry{EventID: newEventID(), At: time.Now().UTC().Truncate(time.Millisecond), Actor: p.User, Role: string(p.Role), Action: ActionExport,
		Tenant: req.Tenant, Reason: req.Reason}
	if e.Tenant == "" {
		e.Tenant = access.AllTenants
	}
	if detail, err := check(p, req); err != nil {
		e.Outcome, e.Detail = access.OutcomeDenied, detail
		// Only the parts that passed their checks go on record.
		e.DropInvalid()
		if !validTenant(e.Tenant) {
			e.Tenant = ""
		}
		return Manifest{}, record(ctx, store, e, err)
	}
	w := &bundleWriter{eng: store.Engine(), req: req, dir: dir}
	m, err := w.write(ctx, p.User, e.EventID, e.At)
	if err != nil {
		w.remove()
		e.Outcome, e.Detail = access.OutcomeFailed, DetailFailed
		return Manifest{}, record(ctx, store, e, err)
	}
	e.Outcome, e.Ref, e.Detail = access.OutcomeAllowed, m.Root, recordDetail(m)
	if err := store.InsertAccess(ctx, e); err != nil {
		w.remove()
		return Manifest{}, fmt.Errorf("audit: record the export (bundle removed): %w", err)
	}
	return m, nil
}

// record writes the access-log entry of an attempt that did not produce a
// bundle and returns why it did not.
func record(ctx context.Context, store *ledgerstore.Store, e ledgerstore.AccessEntry, cause error) error {
	if err := store.InsertAccess(ctx, e); err != nil {
		return fmt.Errorf("audit: record the attempt: %w (attempt: %w)", err, cause)
	}
	return cause
}

// recordDetail is the export's access-log detail: the manifest's own
// metadata that the entry's other fields (actor, time, tenant, reason) do
// not hold, and the files' row counts. The entry's ref is the root, which
// covers all of it.
func recordDetail(m Manifest) string {
	var b strings.Builder
	q := m.Query
	fmt.Fprintf(&b, "format=%s from=%s to=%s include_access_log=%t include_state=%t generated_at=%s",
		q.Format, q.From.Format(time.RFC3339Nano), q.To.Format(time.RFC3339Nano), q.IncludeAccessLog, q.IncludeState,
		m.GeneratedAt.Format(time.RFC3339Nano))
	for _, f := range m.Files {
		fmt.Fprintf(&b, " %s=%d", f.Table, f.Rows)
	}
	return b.String()
}

func validTenant(t string) bool {
	return len(t) <= maxTenantLen && utf8.ValidString(t) && !strings.ContainsRune(t, 0)
}

func check(p access.Principal, req Request) (string, error) {
	if p.User == "" || !validTenant(req.Tenant) || !utf8.ValidString(req.Reason) || len(req.Reason) > access.MaxReasonLen {
		return access.DetailInvalidInput, fmt.Errorf("%w: invalid request", access.ErrDenied)
	}
	if _, err := ParseFormat(string(req.Format)); err != nil {
		return access.DetailInvalidInput, fmt.Errorf("%w: %w", access.ErrDenied, err)
	}
	if req.From.IsZero() || req.To.IsZero() || !req.From.Before(req.To) || !inEngineRange(req.From) || !inEngineRange(req.To) {
		return access.DetailInvalidInput, fmt.Errorf("%w: the time range must be [from, to) with from before to, within the years 1900–2261", access.ErrDenied)
	}
	if p.Role != access.RoleAuditor && p.Role != access.RoleAdmin {
		return DetailRole, fmt.Errorf("%w: role %q may not export", access.ErrDenied, p.Role)
	}
	tenant := req.Tenant
	if tenant == "" {
		tenant = access.AllTenants
	}
	if !p.MayAccessTenant(tenant) {
		return access.DetailTenant, fmt.Errorf("%w: tenant not granted", access.ErrDenied)
	}
	if req.IncludeAccessLog && p.Role != access.RoleAdmin {
		return DetailAccessLog, fmt.Errorf("%w: only admins may export the access log", access.ErrDenied)
	}
	if req.Reason == "" {
		return access.DetailReason, fmt.Errorf("%w: a reason is required", access.ErrDenied)
	}
	return "", nil
}

func inEngineRange(t time.Time) bool { return t.Year() >= 1900 && t.Year() <= 2261 }

// bundleWriter writes one bundle and remembers what it created, so a
// failed or unrecorded export leaves nothing behind.
type bundleWriter struct {
	eng        storage.Engine
	req        Request
	dir        string
	createdDir bool
	created    []string
}

// write makes the bundle; at is the time of its access-log entry, which
// the manifest repeats as generated_at.
func (w *bundleWriter) write(ctx context.Context, actor, eventID string, at time.Time) (Manifest, error) {
	if err := w.prepareDir(); err != nil {
		return Manifest{}, err
	}
	m := Manifest{Version: Version, GeneratedAt: at.UTC(), GeneratedBy: actor, AccessEventID: eventID, Query: w.req}
	if err := w.eng.QueryJSON(ctx, queries.MustGet("audit_engine_version"), func(row []byte) error {
		var v struct{ Version string }
		if err := json.Unmarshal(row, &v); err != nil {
			return err
		}
		m.Engine = v.Version
		return nil
	}); err != nil {
		return Manifest{}, fmt.Errorf("audit: engine version: %w", err)
	}
	tables := []table{calls, conflicts}
	if w.req.IncludeAccessLog {
		tables = append(tables, accessLog)
	}
	if w.req.IncludeState {
		tables = append(tables, stateTables...)
	}
	for _, t := range tables {
		var totals *totalsOf
		if t.name == callsTable {
			totals = newTotals()
		}
		f, err := w.writeTable(ctx, t, totals)
		if err != nil {
			return Manifest{}, err
		}
		m.Files = append(m.Files, f)
		if totals != nil {
			m.Totals = totals.result()
		}
	}
	m.Root = bundleRoot(m)
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return Manifest{}, fmt.Errorf("audit: encode manifest: %w", err)
	}
	// The manifest comes last and whole: a bundle without one is unfinished,
	// never a bundle with a truncated one. Its directory sync covers the
	// data files' entries too.
	if err := atomicfile.Create(filepath.Join(w.dir, ManifestName), 0o600, func(wr io.Writer) error {
		_, err := wr.Write(append(b, '\n'))
		return err
	}); err != nil {
		return Manifest{}, fmt.Errorf("audit: %w", err)
	}
	w.created = append(w.created, ManifestName)
	return m, nil
}

func (w *bundleWriter) prepareDir() error {
	if _, err := os.Stat(w.dir); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(w.dir, 0o700); err != nil {
			return fmt.Errorf("audit: create bundle directory: %w", err)
		}
		w.createdDir = true
		return nil
	}
	entries, err := os.ReadDir(w.dir)
	if err != nil {
		return fmt.Errorf("audit: bundle directory: %w", err)
	}
	if len(entries) > 0 {
		return errors.New("audit: the bundle directory must be empty")
	}
	return nil
}

// remove deletes what this writer created.
func (w *bundleWriter) remove() {
	for _, name := range w.created {
		_ = os.Remove(filepath.Join(w.dir, name))
	}
	if w.createdDir {
		_ = os.Remove(w.dir)
	}
}

// writeTable exports one table into its file, hashing its rows.
func (w *bundleWriter) writeTable(ctx context.Context, t table, totals *totalsOf) (File, error) {
	q, err := storage.Bind(queries.MustGet(t.query), map[string]any{"tenant": w.req.Tenant, "from": w.req.From, "to": w.req.To})
	if err != nil {
		return File{}, fmt.Errorf("audit: %s: %w", t.name, err)
	}
	cols, err := columnsOf(ctx, w.eng, q)
	if err != nil {
		return File{}, fmt.Errorf("audit: %s: %w", t.name, err)
	}
	f := File{Name: t.name + "." + string(w.req.Format), Table: t.name, Format: w.req.Format, Columns: cols}
	c := newChain()
	addRow := func(row []byte) error {
		c.add(row)
		if totals != nil {
			if addErr := totals.add(row); addErr != nil {
				return fmt.Errorf("row %d: %w", c.rows, addErr)
			}
		}
		return nil
	}
	if w.req.Format == FormatParquet {
		err = w.writeParquet(ctx, q, f, addRow)
	} else {
		err = w.writeFile(f.Name, func(wr io.Writer) error { return w.writeText(ctx, q, f, wr, addRow) })
	}
	if err != nil {
		return File{}, fmt.Errorf("audit: %s: %w", f.Name, err)
	}
	if f.SHA256, f.Bytes, err = hashFile(filepath.Join(w.dir, f.Name)); err != nil {
		return File{}, fmt.Errorf("audit: %s: %w", f.Name, err)
	}
	f.Rows, f.ChainHead, f.Checkpoints = c.rows, c.headHex(), c.checkpoints
	return f, nil
}

// writeText streams the rows of q as JSONL or CSV.
func (w *bundleWriter) writeText(ctx context.Context, q string, f File, wr io.Writer, addRow func([]byte) error) error {
	bw := bufio.NewWriterSize(wr, 1<<20)
	writeRow := func(row []byte) error {
		bw.Write(row)
		return bw.WriteByte('\n')
	}
	if f.Format == FormatCSV {
		l, err := newLayout(f.Columns)
		if err != nil {
			return err
		}
		cw := &csvWriter{w: bw, l: l}
		if err := cw.header(f.Columns); err != nil {
			return err
		}
		writeRow = cw.row
	}
	err := w.eng.QueryJSON(ctx, q+"\n"+queries.MustGet("audit_settings"), func(row []byte) error {
		if err := addRow(row); err != nil {
			return err
		}
		return writeRow(row)
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// writeParquet has the engine write the file (chDB's streaming results
// are one complete Parquet file per chunk, so they cannot be concatenated)
// and hashes the rows as the engine reads them back: the chain covers what
// the file holds.
func (w *bundleWriter) writeParquet(ctx context.Context, q string, f File, addRow func([]byte) error) error {
	if fe, ok := storage.FilesOf(w.eng); ok {
		return w.fetchParquet(ctx, fe, q, f, addRow)
	}
	path, err := enginePath(filepath.Join(w.dir, f.Name))
	if err != nil {
		return err
	}
	write, err := storage.Bind(queries.MustGet("audit_write_parquet"), map[string]any{"path": path})
	if err != nil {
		return err
	}
	w.created = append(w.created, f.Name)
	if err = w.eng.Exec(ctx, withQuery(write, q)+"\n"+queries.MustGet("audit_settings")); err != nil {
		return err
	}
	// The engine creates the file with its own mode and does not sync it.
	if err = os.Chmod(path, 0o600); err != nil {
		return err
	}
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	err = file.Sync()
	_ = file.Close()
	if err != nil {
		return err
	}
	return readParquet(ctx, w.eng, path, f.Columns, addRow)
}

// fetchParquet has a server answer the export query as one Parquet file,
// writes it into the bundle, and has the server read it back, sent as an
// external table: the chain covers what the file holds, as on the
// embedded engine.
func (w *bundleWriter) fetchParquet(ctx context.Context, fe storage.FileEngine, q string, f File, addRow func([]byte) error) error {
	settings := "\n" + queries.MustGet("audit_settings")
	if err := w.writeFile(f.Name, func(out io.Writer) error { return fe.QueryFile(ctx, q+settings, "Parquet", out) }); err != nil {
		return err
	}
	file, err := os.Open(filepath.Join(w.dir, f.Name))
	if err != nil {
		return err
	}
	defer func() { _ = file.Close() }()
	return fe.QueryOver(ctx, queries.MustGet("audit_read_external")+settings, exportedTable, "Parquet", structure(f.Columns), file, addRow)
}

// exportedTable names the file read back by audit_read_external.sql.
const exportedTable = "exported_file"

// writeFile creates name in the bundle, lets fill write it, and syncs it.
func (w *bundleWriter) writeFile(name string, fill func(io.Writer) error) error {
	file, err := os.OpenFile(filepath.Join(w.dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	w.created = append(w.created, name)
	err = fill(file)
	if err == nil {
		err = file.Sync()
	}
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	return err
}

func hashFile(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// exportQueryMarker is where audit_columns and audit_write_parquet take the
// bound export query.
const exportQueryMarker = "/* export query */"

func withQuery(template, q string) string {
	if !strings.Contains(template, exportQueryMarker) {
		panic("audit: query template lacks " + exportQueryMarker)
	}
	return strings.Replace(template, exportQueryMarker, q, 1)
}

// columnsOf asks the engine for the names and types of q's columns.
func columnsOf(ctx context.Context, eng storage.Engine, q string) ([]Column, error) {
	var cols []Column
	var key, value []byte
	err := eng.QueryJSON(ctx, withQuery(queries.MustGet("audit_columns"), q), func(row []byte) error {
		return eachField(row, func(k, v []byte) error {
			var err error
			if key, err = appendUnquoted(key[:0], k); err != nil {
				return err
			}
			if value, err = appendUnquoted(value[:0], v); err != nil {
				return err
			}
			name, ok := strings.CutPrefix(string(key), "toTypeName(any(")
			if name, ok2 := strings.CutSuffix(name, "))"); ok && ok2 {
				cols = append(cols, Column{Name: name, Type: string(value)})
				return nil
			}
			return fmt.Errorf("unexpected column %q describing the export", key)
		})
	})
	if err != nil {
		return nil, fmt.Errorf("columns: %w", err)
	}
	if _, err := newLayout(cols); err != nil {
		return nil, fmt.Errorf("columns: %w", err)
	}
	return cols, nil
}

// enginePath is path as the engine's file functions take it: absolute,
// and without the characters they read as glob patterns.
func enginePath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if strings.ContainsAny(abs, "*?{}[]") {
		return "", errors.New("the bundle path must not contain * ? { } [ ] (the engine reads them as patterns)")
	}
	return abs, nil
}

// readParquet has the engine read an exported Parquet file back with its
// exported column types and calls fn with each row in the canonical form.
func readParquet(ctx context.Context, eng storage.Engine, path string, cols []Column, fn func([]byte) error) error {
	q, err := storage.Bind(queries.MustGet("audit_read_file"), map[string]any{"path": path, "format": "Parquet", "structure": structure(cols)})
	if err != nil {
		return err
	}
	return eng.QueryJSON(ctx, q+"\n"+queries.MustGet("audit_settings"), fn)
}

// structure is the column list of an exported file, as the engine's
// readers take it.
func structure(cols []Column) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = "`" + c.Name + "` " + c.Type
	}
	return strings.Join(parts, ", ")
}

func newEventID() string {
	var id [16]byte
	_, _ = rand.Read(id[:])
	return hex.EncodeToString(id[:])
}
