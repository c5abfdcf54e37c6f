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
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"

	"github.com/docketlabs/docket/ledger/storage"
)

// Request is one request the adapter sent: the SQL text the engine ran and,
// for an insert, the size of the rows in the body.
type Request struct {
	SQL       string
	Format    string // the output format asked for, or the insert's format
	BodyBytes int    // rows sent with an insert
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
	"default_format":                        {"JSONEachRow"},
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
	for k, vs := range params {
		allowed, ok := known[k]
		if !ok || len(vs) != 1 || (allowed != nil && vs[0] != allowed[0]) {
			http.Error(w, fmt.Sprintf("chservertest: parameter %s=%q is not one the adapter may send", k, vs), http.StatusBadRequest)
			return
		}
	}
	ctx := r.Context()
	if q := params.Get("query"); q != "" {
		m := insertFormat.FindStringSubmatch(q)
		if m == nil {
			http.Error(w, "chservertest: a query in the URL must be an INSERT ending in FORMAT", http.StatusBadRequest)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.record(Request{SQL: q, Format: m[2], BodyBytes: len(body)})
		if err := s.eng.Insert(ctx, m[1], m[2], body); err != nil {
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
	wrote := false
	err = s.eng.QueryJSON(ctx, sql, func(row []byte) error {
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
