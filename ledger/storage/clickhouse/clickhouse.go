// Package clickhouse runs the ledger on a ClickHouse server through its HTTP
// interface.
//
// The server receives exactly the SQL text the embedded engine runs: reads
// are not wrapped (a wrapping subquery scopes a query's trailing SETTINGS to
// itself, and the outer query then prints timestamps in the default format),
// and the server formats rows itself with default_format=JSONEachRow, so the
// bytes a row arrives as are the engine's own on both engines; audit bundles
// hash those bytes. Inserts send the statement in the URL and the rows,
// already encoded (RowBinary or JSONEachRow), as the request body: binary
// safe, streamed without a copy, and kept out of the server's query log.
package clickhouse

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/docketlabs/docket/ledger/storage"
)

// Engine is a client of one ClickHouse server's HTTP interface.
type Engine struct {
	endpoint string // scheme://host:port/
	user     string
	password string
	database string
	settings url.Values // sent with every request
	client   *http.Client
}

// Options tune Open.
type Options struct {
	// AllowUnauthenticated permits a DSN without a password.
	AllowUnauthenticated bool
	// Cluster: the tables are Distributed over replicated ones
	// (queries.Schema). Every insert then waits until the shard's
	// replicas hold the rows (distributed_foreground_insert, a majority
	// insert_quorum): an acknowledged batch is never only in a
	// Distributed table's local queue or on one disk.
	Cluster bool
}

// ErrUnauthenticated is returned for a DSN without a password unless the
// caller allows it: an open ClickHouse with chat logs is a breach.
var ErrUnauthenticated = errors.New("clickhouse: refusing a ClickHouse server without authentication (set a password in the DSN or allow_unauthenticated: true)")

// maxErrorBody bounds what is read of an error response.
const maxErrorBody = 64 << 10

// Open connects to the server named by dsn, the HTTP interface:
// https://user:pass@host:8443/database (http:// only on a trusted network).
func Open(ctx context.Context, dsn string, opts Options) (*Engine, error) {
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		// The DSN may hold a password: do not echo it.
		return nil, errors.New("clickhouse: invalid DSN, want https://user:password@host:8443/database")
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return nil, fmt.Errorf("clickhouse: DSN scheme %q: the server engine speaks ClickHouse's HTTP interface, want https://user:password@host:8443/database", u.Scheme)
	}
	if len(u.Query()) > 0 {
		return nil, errors.New("clickhouse: DSN parameters are not supported; settings belong to the queries")
	}
	e := &Engine{
		endpoint: u.Scheme + "://" + u.Host + "/",
		database: strings.Trim(u.Path, "/"),
		// No overall timeout: an export streams for as long as it takes;
		// the caller's context bounds each request.
		client: &http.Client{Transport: &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout: 10 * time.Second,
			MaxIdleConnsPerHost: 16,
			IdleConnTimeout:     90 * time.Second,
		}},
	}
	if u.User != nil {
		e.user = u.User.Username()
		e.password, _ = u.User.Password()
	}
	if opts.Cluster {
		e.settings = url.Values{"distributed_foreground_insert": {"1"}, "insert_quorum": {"auto"}}
	}
	if e.password == "" && !opts.AllowUnauthenticated {
		return nil, ErrUnauthenticated
	}
	if err := e.Exec(ctx, "SELECT 1"); err != nil {
		return nil, fmt.Errorf("clickhouse: ping %s: %w", u.Host, err)
	}
	return e, nil
}

// Exec implements storage.Engine. The server holds the response until the
// statement ended (wait_end_of_query), so an error on any host of an ON
// CLUSTER statement arrives as the HTTP status, not after a 200 in a
// status table nobody reads.
func (e *Engine) Exec(ctx context.Context, query string) error {
	resp, err := e.do(ctx, url.Values{"wait_end_of_query": {"1"}}, "", strings.NewReader(query))
	if err != nil {
		return fmt.Errorf("clickhouse: exec: %w", err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return fmt.Errorf("clickhouse: exec: %w", storage.ScrubError(err))
	}
	return nil
}

// Insert implements storage.Engine: the statement goes in the URL, the rows
// in the body, one chunk after another; acknowledged at the end, like Exec.
func (e *Engine) Insert(ctx context.Context, query, format string, data ...[]byte) error {
	readers := make([]io.Reader, 0, len(data))
	for _, chunk := range data {
		if len(chunk) > 0 {
			readers = append(readers, bytes.NewReader(chunk))
		}
	}
	if query == "" || format == "" || len(readers) == 0 {
		return errors.New("clickhouse: insert needs a statement, a format and rows")
	}
	resp, err := e.do(ctx, url.Values{"query": {query + " FORMAT " + format}, "wait_end_of_query": {"1"}}, "", io.MultiReader(readers...))
	if err != nil {
		return fmt.Errorf("clickhouse: insert: %w", err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return fmt.Errorf("clickhouse: insert: %w", storage.ScrubError(err))
	}
	return nil
}

// QueryJSON implements storage.Engine (readRows).
func (e *Engine) QueryJSON(ctx context.Context, query string, fn func([]byte) error) error {
	resp, err := e.do(ctx, url.Values{"default_format": {"JSONEachRow"}, "http_write_exception_in_output_format": {"0"}}, "", strings.NewReader(query))
	if err != nil {
		return fmt.Errorf("clickhouse: query: %w", err)
	}
	defer resp.Body.Close()
	return readRows(resp.Body, fn)
}

// QueryFile implements storage.FileEngine: the server writes the whole
// result as one file of format. An exception after the first bytes is
// written into the file as text; the caller reads the file back
// (QueryOver), which fails on it.
func (e *Engine) QueryFile(ctx context.Context, query, format string, w io.Writer) error {
	resp, err := e.do(ctx, url.Values{"default_format": {format}, "http_write_exception_in_output_format": {"0"}}, "", strings.NewReader(query))
	if err != nil {
		return fmt.Errorf("clickhouse: query %s: %w", format, err)
	}
	defer resp.Body.Close()
	if _, err = io.Copy(w, resp.Body); err != nil {
		return fmt.Errorf("clickhouse: query %s: %w", format, storage.ScrubError(err))
	}
	return nil
}

// QueryOver implements storage.FileEngine with the HTTP interface's
// external data: data goes as a file part of a multipart body, the
// statement in the URL.
func (e *Engine) QueryOver(ctx context.Context, query, table, format, structure string, data io.Reader, fn func([]byte) error) error {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		part, err := mw.CreateFormFile(table, table)
		if err == nil {
			_, err = io.Copy(part, data)
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	params := url.Values{"query": {query}, "default_format": {"JSONEachRow"}, "http_write_exception_in_output_format": {"0"},
		table + "_format": {format}, table + "_structure": {structure}}
	resp, err := e.do(ctx, params, mw.FormDataContentType(), pr)
	if err != nil {
		_ = pr.CloseWithError(err)
		return fmt.Errorf("clickhouse: query over %s: %w", table, err)
	}
	defer resp.Body.Close()
	return readRows(resp.Body, fn)
}

// readRows calls fn with each JSON row of a streamed result. The server
// streams rows as it produces them; an error after the first rows is told
// by a line that is not a JSON object (http_write_exception_in_output_format
// = 0 writes the exception as text) or by a cut connection, never by
// silence.
func readRows(body io.Reader, fn func([]byte) error) error {
	r := bufio.NewReaderSize(body, 64<<10)
	var long []byte // a row longer than the buffer
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, line...)
			continue
		}
		if long != nil {
			line = append(long, line...)
			long = nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("clickhouse: query: reading rows: %w", storage.ScrubError(err))
		}
		if row := bytes.TrimSuffix(line, []byte("\n")); len(row) > 0 {
			if row[0] != '{' || (errors.Is(err, io.EOF) && row[len(row)-1] != '}') {
				return fmt.Errorf("clickhouse: query: %w", storage.ScrubError(errors.New(string(limit(row)))))
			}
			if ferr := fn(row); ferr != nil {
				if errors.Is(ferr, storage.ErrStop) {
					return nil
				}
				return ferr
			}
		}
		if err != nil {
			return nil
		}
	}
}

// do POSTs body with params and returns a successful response; a failed
// one becomes its scrubbed error text.
func (e *Engine) do(ctx context.Context, params url.Values, contentType string, body io.Reader) (*http.Response, error) {
	if params == nil {
		params = url.Values{}
	}
	for k, v := range e.settings {
		params[k] = v
	}
	if e.database != "" {
		params.Set("database", e.database)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.endpoint+"?"+params.Encode(), body)
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	// Credentials in headers, not in the URL, which proxies log.
	if e.user != "" {
		req.Header.Set("X-ClickHouse-User", e.user)
	}
	if e.password != "" {
		req.Header.Set("X-ClickHouse-Key", e.password)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return nil, storage.ScrubError(err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return nil, fmt.Errorf("HTTP %d: %w", resp.StatusCode, storage.ScrubError(errors.New(strings.TrimSpace(string(msg)))))
	}
	return resp, nil
}

// limit keeps an error line short: it may be a server exception, or a row
// cut short by one.
func limit(b []byte) []byte {
	if len(b) > 2048 {
		return b[:2048]
	}
	return b
}

// Close implements storage.Engine.
func (e *Engine) Close() error {
	e.client.CloseIdleConnections()
	return nil
}

var _ storage.FileEngine = (*Engine)(nil)
