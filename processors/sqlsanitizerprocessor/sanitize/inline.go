package sanitize

import "strings"

// Some statements carry rows of data after the statement itself, in a
// format of their own rather than as SQL literals: ClickHouse's
// INSERT … FORMAT <name> <rows> (JSONEachRow, CSV, TSV, Values, RowBinary,
// …), PostgreSQL's COPY … FROM STDIN followed by rows up to a line "\.",
// and SQL*Loader's LOAD DATA … BEGINDATA <rows>. The SQL lexer cannot read
// those rows (a CSV field or a JSON key looks like an identifier), so they
// are replaced by one '?' as a whole.

// inlineKind is the kind of statement that may carry rows.
type inlineKind uint8

const (
	inlNone inlineKind = iota
	inlInsert
	inlCopy
	inlLoad
)

// inlineWord follows the words of a statement that may carry rows. It
// reports whether the rows begin after the word w.
func (l *sqlLexer) inlineWord(w string) bool {
	if l.stmtStart {
		l.inline = inlNone
		switch len(w) {
		case 6:
			if strings.EqualFold(w, "INSERT") {
				l.inline = inlInsert
			}
		case 4:
			if strings.EqualFold(w, "COPY") {
				l.inline = inlCopy
			} else if strings.EqualFold(w, "LOAD") {
				l.inline = inlLoad
			}
		}
		return false
	}
	switch l.inline {
	case inlInsert:
		// The word after FORMAT names the format; anything can name one,
		// and a query ends with its FORMAT clause. Parentheses are not
		// counted: a stray one must not hide the rows.
		return l.afterWord("FORMAT")
	case inlCopy:
		return len(w) == 5 && strings.EqualFold(w, "STDIN") && l.afterWord("FROM")
	case inlLoad:
		return len(w) == 9 && strings.EqualFold(w, "BEGINDATA")
	}
	return false
}

// rows replaces the rows that follow the statement word ending at i and
// returns where lexing goes on.
func (l *sqlLexer) rows(i int) int {
	if l.inline == inlCopy {
		return l.copyRows(i)
	}
	l.inline = inlNone
	l.maskRows(i, len(l.w.src), "?")
	return len(l.s)
}

// maskRows replaces src[from:to] from its first non-space byte on.
func (l *sqlLexer) maskRows(from, to int, repl string) {
	for from < to && isSpace(l.w.src[from]) {
		from++
	}
	if from < to {
		l.w.replace(from, to, repl)
	}
}

// copyRows handles COPY … FROM STDIN: the statement's options run to the
// end of its line (or its ';'), the rows from there to a line holding only
// "\." or the end of the query. After "\." another statement may follow.
func (l *sqlLexer) copyRows(i int) int {
	l.inline = inlNone
	full := l.s
	k := strings.IndexAny(full[i:], ";\n")
	if k < 0 {
		return i // the rows are not in the query
	}
	cut := i + k
	l.s = full[:cut]
	l.run(i)
	l.s = full
	if l.partial {
		return len(full)
	}
	if full[cut] == ';' {
		l.punct(cut, ';')
	}
	end := copyRowsEnd(full, cut+1)
	if end < 0 {
		l.maskRows(cut+1, len(l.w.src), "?")
		return len(full)
	}
	l.maskRows(cut+1, end, "?\n")
	l.stmtStart = true
	return end + len(copyEndMarker)
}

const copyEndMarker = `\.`

// copyRowsEnd returns where the line that holds only "\." starts, at or
// after i, or -1.
func copyRowsEnd(s string, i int) int {
	for i < len(s) {
		eol := strings.IndexByte(s[i:], '\n')
		if eol < 0 {
			eol = len(s)
		} else {
			eol += i
		}
		if strings.TrimRight(s[i:eol], "\r") == copyEndMarker {
			return i
		}
		i = eol + 1
	}
	return -1
}
