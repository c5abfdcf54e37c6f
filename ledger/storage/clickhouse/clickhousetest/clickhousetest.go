// Package clickhousetest serves ClickHouse's HTTP interface, as far as the
// server adapter uses it, from a real engine (chDB in tests), and records
// every request. No ClickHouse server can run where this project is tested;
// with this front the adapter's exact SQL text, as it leaves the adapter,
// runs on the same engine version a server would run, so a query the
// adapter rewrites wrongly (settings scoped to a wrapping subquery, a
// format the decoder does not read) fails in tests.
//
// It accepts only the parameters the adapter is meant to send: a setting
// it does not know would be silently ignored here and applied by a server,
// and the two would differ.
package clickhousetest

import (
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/docketlabs/docket/ledger/storage"
)

// Request is one request the adapter sent: the SQL text the engine ran and,
// for an insert, the size of the rows in the body.
type Request struct {
	SQL       string
	Format    string // the output format asked for, or the insert's format
	BodyBytes int    // rows sent with an insert, or the external tables' files
}

// Server is the HTTP front. Its URL with credentials is DSN.
type Server struct {
	DSN string
	srv *httptest.Server
	eng storage.Engine

	mu  sync.Mutex
	log []Request
}

const (
	user     = "docket"
	password = "test-password"
)

// maxStatement bounds a statement read from a body.
const maxStatement = 1 << 20

var (
	insertFormat = regexp.MustCompile(`(?s)^(.*) FORMAT (\w+)$`)
	// A server writes no files for a client: INTO OUTFILE is
	// clickhouse-client's and clickhouse-local's alone.
	intoOutfile = regexp.MustCompile(`(?i)\bINTO\s+OUTFILE\b`)
)

// known are the URL parameters the adapter may send; values listed are the
// only ones accepted.
var known = map[string][]string{
	"query":                                 nil,
	"database":                              {"default"},
	"default_format":                        {"JSONEachRow", "Parquet"},
	"http_write_exception_in_output_format": {"0"},
	"wait_end_of_query":                     {"1"},
}

// New serves eng over HTTP until Close.
func New(eng storage.Engine) *Server {
	s := &Server{eng: eng}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.DSN = "http://" + user + ":" + password + "@" + s.srv.Listener.Addr().String() + "/default"
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Requests returns the requests received so far and forgets them.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.log
	s.log = nil
	return out
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	s.log = append(s.log, r)
	s.mu.Unlock()
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "only POST", http.StatusMethodNotAllowed)
		return
	}
	if r.Header.Get("X-ClickHouse-User") != user || r.Header.Get("X-ClickHouse-Key") != password {
		http.Error(w, "Code: 516. DB::Exception: docket: Authentication failed. (AUTHENTICATION_FAILED)", http.StatusUnauthorized)
		return
	}
	params := r.URL.Query()
	external, err := s.externalTables(r)
	defer external.drop()
	if err != nil {
		http.Error(w, "chservertest: "+err.Error(), http.StatusBadRequest)
		return
	}
	for k, vs := range params {
		allowed, ok := known[k]
		if external.names[k] {
			ok, allowed = true, nil
		}
		if !ok || len(vs) != 1 || (allowed != nil && !slices.Contains(allowed, vs[0])) {
			http.Error(w, fmt.Sprintf("chservertest: parameter %s=%q is not one the adapter may send", k, vs), http.StatusBadRequest)
			return
		}
	}
	ctx := r.Context()
	if len(external.names) > 0 {
		s.serveOver(w, r, params, external)
		return
	}
	if q := params.Get("query"); q != "" {
		m := insertFormat.FindStringSubmatch(q)
		if m == nil {
			http.Error(w, "chservertest: a query in the URL must be an INSERT ending in FORMAT", http.StatusBadRequest)
			return
		}
		body, readErr := io.ReadAll(r.Body)
		if readErr != nil {
			http.Error(w, readErr.Error(), http.StatusBadRequest)
			return
		}
		s.record(Request{SQL: q, Format: m[2], BodyBytes: len(body)})
		if err = s.eng.Insert(ctx, m[1], m[2], body); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxStatement+1))
	if err != nil || len(body) > maxStatement {
		http.Error(w, "chservertest: statement too long or unreadable", http.StatusBadRequest)
		return
	}
	sql := string(body)
	format := params.Get("default_format")
	s.record(Request{SQL: sql, Format: format})
	if intoOutfile.MatchString(sql) {
		http.Error(w, "Code: 642. DB::Exception: INTO OUTFILE is not allowed. (INTO_OUTFILE_NOT_ALLOWED)", http.StatusInternalServerError)
		return
	}
	if format == "" {
		if err = s.eng.Exec(ctx, sql); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
		return
	}
	if format != "JSONEachRow" {
		s.serveFile(w, r, sql, format)
		return
	}
	s.writeRows(w, r, sql)
}

// writeRows answers sql with its rows, one JSON object per line.
func (s *Server) writeRows(w http.ResponseWriter, r *http.Request, sql string) {
	wrote := false
	err := s.eng.QueryJSON(r.Context(), sql, func(row []byte) error {
		wrote = true
		if _, writeErr := w.Write(row); writeErr != nil {
			return writeErr
		}
		_, writeErr := w.Write([]byte{'\n'})
		return writeErr
	})
	switch {
	case err == nil:
	case !wrote:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	default:
		// As a server does after the first rows: the exception as text
		// (http_write_exception_in_output_format = 0), then the stream
		// is cut.
		fmt.Fprintf(w, "Code: 0. DB::Exception: %v\n", err)
		_ = http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler)
	}
}

// trailingSettings is a statement's last SETTINGS clause, which a server
// applies to the statement and its output format.
var trailingSettings = regexp.MustCompile(`(?s)^(.*)\n(SETTINGS\b[^()]*)$`)

// serveFile answers sql as one file in format, as a server does. The
// engine here streams a file per chunk, so the front has it write one file
// (INTO OUTFILE before the statement's SETTINGS, which then still apply to
// the output) and sends that.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, sql, format string) {
	dir, err := os.MkdirTemp("", "chservertest")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer func() { _ = os.RemoveAll(dir) }()
	path := filepath.Join(dir, "result")
	into := "\nINTO OUTFILE " + storage.Quote(path) + " FORMAT " + format
	if m := trailingSettings.FindStringSubmatch(sql); m != nil {
		sql = m[1] + into + "\n" + m[2]
	} else {
		sql += into
	}
	if err = s.eng.Exec(r.Context(), sql); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	http.ServeFile(w, r, path)
}

// external are the external tables of a request (the HTTP interface's
// multipart file parts, each with NAME_format and NAME_structure), made
// readable by name for the request's statement.
type external struct {
	s     *Server
	names map[string]bool // the parameters they bring
	views []string
	dir   string
	bytes int64 // the files' sizes
}

func (s *Server) externalTables(r *http.Request) (*external, error) {
	ext := &external{s: s, names: map[string]bool{}}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		return ext, nil
	}
	// A test front: bounded all the same, files beyond 64 MiB spill to disk.
	r.Body = http.MaxBytesReader(nil, r.Body, 1<<30)
	if err := r.ParseMultipartForm(64 << 20); err != nil { //nolint:gosec // G120: the body is bounded just above
		return ext, err
	}
	dir, err := os.MkdirTemp("", "chservertest")
	if err != nil {
		return ext, err
	}
	ext.dir = dir
	q := r.URL.Query()
	for name, files := range r.MultipartForm.File {
		format, structure := q.Get(name+"_format"), q.Get(name+"_structure")
		if len(files) != 1 || format == "" || structure == "" || !tableName.MatchString(name) {
			return ext, fmt.Errorf("external table %q needs one file, %s_format and %s_structure", name, name, name)
		}
		ext.names[name+"_format"], ext.names[name+"_structure"] = true, true
		path := filepath.Join(dir, name)
		if err = saveUpload(files[0], path); err != nil {
			return ext, err
		}
		ext.bytes += files[0].Size
		// The engine's own reader stands in for the server's.
		view := "CREATE VIEW " + name + " AS SELECT * FROM file(" + storage.Quote(path) + ", " + storage.Quote(format) + ", " + storage.Quote(structure) + ")"
		if err = s.eng.Exec(r.Context(), view); err != nil {
			return ext, err
		}
		ext.views = append(ext.views, name)
	}
	return ext, nil
}

func saveUpload(fh *multipart.FileHeader, path string) error {
	src, err := fh.Open()
	if err != nil {
		return err
	}
	defer func() { _ = src.Close() }()
	dst, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err = io.Copy(dst, src); err != nil {
		_ = dst.Close()
		return err
	}
	return dst.Close()
}

func (e *external) drop() {
	for _, v := range e.views {
		_ = e.s.eng.Exec(context.Background(), "DROP VIEW IF EXISTS "+v)
	}
	if e.dir != "" {
		_ = os.RemoveAll(e.dir)
	}
}

// tableName is an external table's name, used unquoted in the statement.
var tableName = regexp.MustCompile(`^\w+$`)

// leadingSelect: a SELECT after any comment lines.
var leadingSelect = regexp.MustCompile(`^(\s*--[^\n]*\n)*\s*SELECT\b`)

// serveOver answers the statement in the URL over the request's external
// tables, as rows.
func (s *Server) serveOver(w http.ResponseWriter, r *http.Request, params map[string][]string, ext *external) {
	sql := ""
	if q := params["query"]; len(q) == 1 {
		sql = q[0]
	}
	if !leadingSelect.MatchString(sql) || (len(params["default_format"]) == 1 && params["default_format"][0] != "JSONEachRow") {
		http.Error(w, "chservertest: external data goes with a SELECT in the URL, answered as JSONEachRow", http.StatusBadRequest)
		return
	}
	s.record(Request{SQL: sql, Format: "JSONEachRow", BodyBytes: int(ext.bytes)})
	s.writeRows(w, r, sql)
}
