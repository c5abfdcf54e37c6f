package audit

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"

	"github.com/docketlabs/docket/ledger/storage"
)

// ErrMismatch is returned when a bundle does not match its manifest.
var ErrMismatch = errors.New("audit: bundle does not match its manifest")

// VerifyOptions configure Verify.
type VerifyOptions struct {
	// Engine returns an engine to read Parquet files back with. It is
	// called at most once, and only for a bundle with Parquet files. Any
	// engine that reads this host's files will do — the ledger's own or a
	// temporary one: it reads the file, not the ledger.
	Engine func() (storage.Engine, error)
	// Root, if set, is the root the bundle must have, e.g. the ref of the
	// export's access-log entry.
	Root string
}

// Problem is one way a bundle differs from its manifest.
type Problem struct {
	// File is the bundle file, or "" for the manifest itself.
	File string `json:"file,omitempty"`
	// FirstRow and LastRow (1-based) bound the rows the problem lies in;
	// both are 0 when it concerns the file as a whole.
	FirstRow uint64 `json:"first_row,omitempty"`
	LastRow  uint64 `json:"last_row,omitempty"`
	Message  string `json:"message"`
}

func (p Problem) String() string {
	where := p.File
	if where == "" {
		where = ManifestName
	}
	switch p.FirstRow {
	case 0:
	case p.LastRow:
		where += fmt.Sprintf(" row %d", p.FirstRow)
	default:
		where += fmt.Sprintf(" rows %d–%d", p.FirstRow, p.LastRow)
	}
	return where + ": " + p.Message
}

// FileReport is what Verify found in one file.
type FileReport struct {
	Name      string `json:"name"`
	Rows      uint64 `json:"rows"`
	ChainHead string `json:"chain_head"`
	SHA256    string `json:"sha256"`
	OK        bool   `json:"ok"`
}

// Report is the result of Verify.
type Report struct {
	Manifest Manifest     `json:"manifest"`
	Files    []FileReport `json:"files"`
	Problems []Problem    `json:"problems"`
}

// maxManifestBytes bounds manifest.json (checkpoints grow with the rows:
// about 67 bytes per CheckpointEvery rows, so this allows a billion).
const maxManifestBytes = 64 << 20

var tableName = regexp.MustCompile(`^[a-z][a-z_]{0,63}$`)

// Verify checks the bundle in dir against its manifest: every file's
// SHA-256 and size, its rows (re-read from CSV or Parquet into their
// canonical form) against the row count, chain checkpoints and chain head,
// the calls totals recomputed from the rows, and the bundle root. The
// error wraps ErrMismatch and names the first problem; the report lists
// them all.
func Verify(ctx context.Context, dir string, opts VerifyOptions) (Report, error) {
	var r Report
	m, err := ReadManifest(dir)
	if err != nil {
		return r, err
	}
	r.Manifest = m
	v := &verifier{dir: dir, opts: opts}
	r.Problems = append(r.Problems, checkManifest(m)...)
	if len(r.Problems) == 0 {
		for _, f := range m.Files {
			fr, problems := v.file(ctx, f, m.Totals)
			if err := ctx.Err(); err != nil {
				return r, err
			}
			r.Files = append(r.Files, fr)
			r.Problems = append(r.Problems, problems...)
		}
		if root := bundleRoot(m); root != m.Root {
			r.Problems = append(r.Problems, Problem{Message: "root does not match the manifest's metadata (period, tenant, flags, author, time) or the files' chain heads and row counts (manifest altered)"})
		}
	}
	if opts.Root != "" && opts.Root != m.Root {
		r.Problems = append(r.Problems, Problem{Message: "root differs from the expected root " + opts.Root})
	}
	if len(r.Problems) > 0 {
		return r, fmt.Errorf("%w: %s", ErrMismatch, r.Problems[0])
	}
	return r, nil
}

// ReadManifest reads and decodes a bundle's manifest.
func ReadManifest(dir string) (Manifest, error) {
	f, err := os.Open(filepath.Join(dir, ManifestName))
	if err != nil {
		return Manifest{}, fmt.Errorf("audit: %w", err)
	}
	defer func() { _ = f.Close() }()
	dec := json.NewDecoder(io.LimitReader(f, maxManifestBytes))
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		return Manifest{}, fmt.Errorf("%w: %s is not a manifest: %w", ErrMismatch, ManifestName, err)
	}
	if m.Version != Version {
		return Manifest{}, fmt.Errorf("%w: manifest version %q, want %q", ErrMismatch, m.Version, Version)
	}
	return m, nil
}

// checkManifest checks what the manifest says about itself, before any
// file is opened on its word.
func checkManifest(m Manifest) []Problem {
	var out []Problem
	bad := func(format string, args ...any) { out = append(out, Problem{Message: fmt.Sprintf(format, args...)}) }
	if len(m.Files) == 0 || m.Files[0].Table != callsTable {
		bad("the first file must be the calls table")
	}
	seen := map[string]bool{}
	for i, f := range m.Files {
		if !tableName.MatchString(f.Table) || seen[f.Table] {
			bad("file %d: invalid or repeated table name", i+1)
			continue
		}
		seen[f.Table] = true
		if _, err := ParseFormat(string(f.Format)); err != nil || f.Name != f.Table+"."+string(f.Format) {
			bad("file %d: name and format must be TABLE.FORMAT with format jsonl, csv or parquet", i+1)
		}
		if _, err := newLayout(f.Columns); err != nil {
			bad("%s: %v", f.Name, err)
		}
		if uint64(len(f.Checkpoints)) != f.Rows/CheckpointEvery {
			bad("%s: %d checkpoints for %d rows, want %d", f.Name, len(f.Checkpoints), f.Rows, f.Rows/CheckpointEvery)
		}
	}
	return out
}

type verifier struct {
	dir  string
	opts VerifyOptions
	eng  storage.Engine
	// engErr is the error of opening the engine, kept for every file.
	engErr error
}

func (v *verifier) engine() (storage.Engine, error) {
	if v.eng == nil && v.engErr == nil {
		if v.opts.Engine == nil {
			v.engErr = errors.New("reading Parquet back needs an engine")
		} else {
			v.eng, v.engErr = v.opts.Engine()
		}
	}
	return v.eng, v.engErr
}

// rowCheck recomputes one file's chain and totals row by row.
type rowCheck struct {
	f      File
	chain  *chain
	totals *totalsOf
	// badWindow is the first checkpoint window (1-based) that did not match.
	badWindow uint64
	problems  []Problem
}

func (c *rowCheck) add(row []byte) error {
	if c.totals != nil {
		if err := c.totals.add(row); err != nil {
			n := c.chain.rows + 1
			c.problems = append(c.problems, Problem{File: c.f.Name, FirstRow: n, LastRow: n, Message: "cannot be read as a calls row: " + err.Error()})
			c.totals = nil
		}
	}
	if c.chain.add(row) && c.badWindow == 0 {
		k := uint64(len(c.chain.checkpoints))
		if k > uint64(len(c.f.Checkpoints)) || c.f.Checkpoints[k-1] != c.chain.checkpoints[k-1] {
			c.badWindow = k
		}
	}
	return nil
}

// cancelled reports, every few thousand rows, whether ctx is done.
func (c *rowCheck) cancelled(ctx context.Context) bool {
	return c.chain.rows%4096 == 0 && ctx.Err() != nil
}

// rowError records a problem that ends the reading of a file's rows.
func (c *rowCheck) rowError(msg string) {
	n := c.chain.rows + 1
	c.problems = append(c.problems, Problem{File: c.f.Name, FirstRow: n, LastRow: n, Message: msg})
}

func (v *verifier) file(ctx context.Context, f File, totals Totals) (FileReport, []Problem) {
	c := &rowCheck{f: f, chain: newChain()}
	if f.Table == callsTable {
		c.totals = newTotals()
	}
	path := filepath.Join(v.dir, f.Name)
	var sum string
	var size int64
	var err error
	switch f.Format {
	case FormatParquet:
		if sum, size, err = hashFile(path); err == nil {
			err = v.parquetRows(ctx, path, c)
		}
	default:
		sum, size, err = textRows(ctx, path, c)
	}
	if err != nil {
		c.problems = append(c.problems, Problem{File: f.Name, Message: err.Error()})
		return FileReport{Name: f.Name}, c.problems
	}
	c.compare(sum, size, totals)
	return FileReport{Name: f.Name, Rows: c.chain.rows, ChainHead: c.chain.headHex(), SHA256: sum, OK: len(c.problems) == 0}, c.problems
}

// compare checks the recomputed file against the manifest, most specific
// finding first.
func (c *rowCheck) compare(sum string, size int64, totals Totals) {
	bad := func(first, last uint64, format string, args ...any) {
		c.problems = append(c.problems, Problem{File: c.f.Name, FirstRow: first, LastRow: last, Message: fmt.Sprintf(format, args...)})
	}
	rows := c.chain.rows
	if rows != c.f.Rows {
		bad(0, 0, "%d rows, the manifest says %d (rows were added or removed)", rows, c.f.Rows)
	}
	if c.chain.headHex() != c.f.ChainHead || c.badWindow > 0 {
		first := uint64(len(c.chain.checkpoints))*CheckpointEvery + 1
		last := max(rows, c.f.Rows)
		if c.badWindow > 0 {
			first, last = (c.badWindow-1)*CheckpointEvery+1, c.badWindow*CheckpointEvery
		}
		bad(first, max(first, last), "rows do not hash to the manifest's chain (a row in this range was altered, added, removed or moved)")
	}
	if sum != c.f.SHA256 || size != c.f.Bytes {
		bad(0, 0, "SHA-256 or size differs from the manifest (the file was altered)")
	}
	if c.totals != nil {
		for _, d := range totalsDiff(totals, c.totals.result()) {
			bad(0, 0, "%s", d)
		}
	}
}

// totalsDiff names the totals the manifest states differently from the rows.
func totalsDiff(stated, got Totals) []string {
	var out []string
	if stated.Calls != got.Calls {
		out = append(out, fmt.Sprintf("totals.calls: the manifest says %d, the rows give %d", stated.Calls, got.Calls))
	}
	for _, s := range []struct {
		name        string
		stated, got Sum
	}{{"input_tokens", stated.InputTokens, got.InputTokens}, {"output_tokens", stated.OutputTokens, got.OutputTokens}, {"cost_usd", stated.CostUSD, got.CostUSD}} {
		if s.stated != s.got {
			out = append(out, fmt.Sprintf("totals.%s: the manifest says %q (%d known, %d unknown), the rows give %q (%d known, %d unknown)",
				s.name, s.stated.Total, s.stated.KnownRows, s.stated.UnknownRows, s.got.Total, s.got.KnownRows, s.got.UnknownRows))
		}
	}
	same := len(stated.CostStatus) == len(got.CostStatus)
	for k, n := range got.CostStatus {
		same = same && stated.CostStatus[k] == n
	}
	if !same {
		out = append(out, "totals.cost_status: the manifest's counts differ from the rows'")
	}
	return out
}

// textRows reads a JSONL or CSV file once, hashing its bytes and feeding
// its rows in canonical form to c.
func textRows(ctx context.Context, path string, c *rowCheck) (string, int64, error) {
	file, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer func() { _ = file.Close() }()
	h := sha256.New()
	counted := &countingReader{r: io.TeeReader(file, h)}
	if c.f.Format == FormatCSV {
		csvRows(ctx, counted, c)
	} else {
		jsonlRows(ctx, counted, c)
	}
	if err := ctx.Err(); err != nil {
		return "", 0, err
	}
	// Hash what the rows did not read (after a row that ended reading).
	if _, err := io.Copy(io.Discard, counted); err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), counted.n, nil
}

func jsonlRows(ctx context.Context, r io.Reader, c *rowCheck) {
	br := bufio.NewReaderSize(r, 1<<16)
	var long []byte
	for !c.cancelled(ctx) {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if long = append(long, line...); len(long) > MaxRowBytes {
				c.rowError(fmt.Sprintf("longer than %d bytes", MaxRowBytes))
				return
			}
			continue
		}
		if len(long) > 0 {
			line = append(long, line...)
			long = long[:0]
		}
		switch {
		case err == io.EOF && len(line) == 0:
			return
		case err == io.EOF:
			c.rowError("not terminated by a newline")
			_ = c.add(line)
			return
		case err != nil:
			c.rowError(err.Error())
			return
		}
		_ = c.add(line[:len(line)-1])
	}
}

func csvRows(ctx context.Context, r io.Reader, c *rowCheck) {
	l, err := newLayout(c.f.Columns)
	if err != nil {
		c.rowError(err.Error())
		return
	}
	cr := newCSVReader(r, MaxRowBytes)
	if err := cr.next(); err != nil {
		c.problems = append(c.problems, Problem{File: c.f.Name, Message: "no header: " + err.Error()})
		return
	}
	if len(cr.fields) != len(c.f.Columns) {
		c.problems = append(c.problems, Problem{File: c.f.Name, Message: "the header does not name the manifest's columns"})
		return
	}
	for i, name := range cr.fields {
		if string(name) != c.f.Columns[i].Name {
			c.problems = append(c.problems, Problem{File: c.f.Name, Message: "the header does not name the manifest's columns"})
			return
		}
	}
	var row []byte
	for !c.cancelled(ctx) {
		err := cr.next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			c.rowError("not a CSV record: " + err.Error())
			return
		}
		if row, err = l.canonical(row[:0], cr.fields, cr.quoted); err != nil {
			c.rowError(err.Error())
			return
		}
		_ = c.add(row)
	}
}

func (v *verifier) parquetRows(ctx context.Context, path string, c *rowCheck) error {
	eng, err := v.engine()
	if err != nil {
		return err
	}
	abs, err := enginePath(path)
	if err != nil {
		return err
	}
	if err := readParquet(ctx, eng, abs, c.f.Columns, c.add); err != nil {
		return fmt.Errorf("the engine cannot read the rows: %w", err)
	}
	return nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// Summary is a one-line description of a verified file.
func (f FileReport) Summary() string {
	state := "ok"
	if !f.OK {
		state = "FAILED"
	}
	return fmt.Sprintf("%s %s: %d rows, chain %s", state, f.Name, f.Rows, shortHash(f.ChainHead))
}

func shortHash(h string) string {
	if len(h) > 16 {
		return h[:16] + "…"
	}
	return h
}
