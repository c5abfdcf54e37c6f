// Package sanitize replaces every literal in database query text with '?'.
//
// It keeps keywords, identifiers, operators, whitespace and parameter markers
// ($1, ?, :name, @p1, %s, %(name)s) exactly as written, so sanitized queries
// still group by shape. Each dialect is read by a hand-written single-pass
// lexer that runs in linear time and writes at most one output buffer.
//
// The sanitizer fails closed: when part of the text cannot be read with
// confidence (an unterminated quote or comment, a control character, an
// ambiguous escape, input over the size cap) everything from that point on is
// replaced by a single '?' and Result.Partial is set. The original text is
// never passed through.
package sanitize

import (
	"unicode/utf8"
	"unsafe"
)

// DefaultMaxLength is the input size (1 MiB) above which the rest of the
// query is replaced by '?' and the result is marked partial.
const DefaultMaxLength = 1 << 20

// MaxSummaryLength is the longest db.query.summary produced, as the database
// conventions recommend.
const MaxSummaryLength = 255

// Options tune sanitization. The zero value is the conservative default.
type Options struct {
	// MaxLength caps the bytes that are lexed; 0 means DefaultMaxLength.
	MaxLength int
	// CollapseLists turns IN (?, ?, ?) into IN (?) and a run of VALUES
	// tuples made only of literals into VALUES (?).
	CollapseLists bool
	// KeepSQLCommenter keeps /*key='value',...*/ comments as /*key='?',...*/
	// instead of removing them.
	KeepSQLCommenter bool
	// MySQLANSIQuotes reads "x" as an identifier in MySQL (sql_mode
	// ANSI_QUOTES); by default MySQL double-quoted text is a string literal.
	MySQLANSIQuotes bool
	// Summarize fills Result.Summary and Result.Operation.
	Summarize bool
}

// Result is the outcome of Sanitize.
type Result struct {
	// Text is the sanitized query. It is the input string itself when
	// nothing had to change.
	Text string
	// Partial is set when part of the input could not be lexed with
	// confidence and was replaced wholesale by '?'.
	Partial bool
	// Summary is a low-cardinality db.query.summary ("SELECT orders"),
	// built only from keywords and identifiers; empty unless
	// Options.Summarize.
	Summary string
	// Operation is the db.operation.name of the query ("SELECT", "HMSET",
	// "find", "BATCH INSERT"); empty unless Options.Summarize.
	Operation string
}

// Sanitize replaces the literals in query according to dialect d.
func Sanitize(query string, d Dialect, opts Options) Result {
	maxLen := opts.MaxLength
	if maxLen <= 0 {
		maxLen = DefaultMaxLength
	}
	// The lexers see only the first maxLen bytes (cut at a rune boundary);
	// whatever follows is replaced by '?' below.
	view := query
	if len(query) > maxLen {
		cut := maxLen
		for cut > 0 && !utf8.RuneStart(query[cut]) {
			cut--
		}
		view = query[:cut]
	}

	switch d {
	case Redis:
		return sanitizeRedis(query, view, opts)
	case MongoDB, JSON:
		return sanitizeDocument(query, view, d == MongoDB, opts)
	default:
		return sanitizeSQL(query, view, rulesFor(d, opts.MySQLANSIQuotes), opts)
	}
}

// finish completes the output: text beyond the lexed view becomes '?'
// (unless a replacement already covered it).
func (w *rewriter) finish(view string, partial bool) (string, bool) {
	if len(view) < len(w.src) && !partial && w.copied <= len(view) {
		w.replace(len(view), len(w.src), "?")
		partial = true
	}
	return w.text(), partial
}

// rewriter builds the output lazily: nothing is allocated until the first
// replacement, and unchanged runs of the input are copied in bulk.
type rewriter struct {
	src    string
	out    []byte
	copied int // src[:copied] is already reflected in out
	dirty  bool
}

func (w *rewriter) init() {
	if !w.dirty {
		w.out = make([]byte, 0, len(w.src)+8)
		w.dirty = true
	}
}

// replace substitutes src[from:to] with repl; from must be >= copied.
func (w *rewriter) replace(from, to int, repl string) {
	w.init()
	w.out = append(w.out, w.src[w.copied:from]...)
	w.out = append(w.out, repl...)
	w.copied = to
}

// mask substitutes src[from:to] with a single '?', the hottest case. The gap
// since the previous literal is usually a few bytes (", "), which a plain
// loop copies sooner than a memmove call.
func (w *rewriter) mask(from, to int) {
	w.init()
	gap := w.src[w.copied:from]
	if len(gap) <= 8 {
		for i := 0; i < len(gap); i++ {
			w.out = append(w.out, gap[i])
		}
	} else {
		w.out = append(w.out, gap...)
	}
	w.out = append(w.out, '?')
	w.copied = to
}

// sync brings the output up to src[:pos] and returns the output length.
func (w *rewriter) sync(pos int) int {
	w.init()
	w.out = append(w.out, w.src[w.copied:pos]...)
	w.copied = pos
	return len(w.out)
}

// truncate drops output after n and resumes copying the input at pos.
func (w *rewriter) truncate(n, pos int, repl string) {
	w.out = append(w.out[:n], repl...)
	w.copied = pos
}

// lastByte is the last byte of the output as it would be if src[:pos] had
// been copied; 0 when the output would be empty.
func (w *rewriter) lastByte(pos int) byte {
	if pos > w.copied {
		return w.src[pos-1]
	}
	if len(w.out) > 0 {
		return w.out[len(w.out)-1]
	}
	return 0
}

// text finishes the output. The buffer is never written again, so it is
// turned into a string without a second copy.
func (w *rewriter) text() string {
	if !w.dirty {
		return w.src
	}
	w.out = append(w.out, w.src[w.copied:]...)
	return unsafe.String(unsafe.SliceData(w.out), len(w.out))
}

// repairUTF8 replaces src[from:to] when it holds invalid UTF-8, so that
// identifiers copied to the output are always valid text.
func (w *rewriter) repairUTF8(from, to int) {
	s := w.src[from:to]
	if utf8.ValidString(s) {
		return
	}
	buf := make([]byte, 0, len(s)+8)
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && size == 1 {
			buf = utf8.AppendRune(buf, utf8.RuneError)
		} else {
			buf = append(buf, s[:size]...)
		}
		s = s[size:]
	}
	w.replace(from, to, string(buf))
}
