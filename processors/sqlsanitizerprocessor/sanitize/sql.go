package sanitize

import (
	"math/bits"
	"strings"
	"unicode/utf8"
)

// Byte classes for the lexers.
const (
	cSpace  = 1 << iota // ' ' \t \n \r \v \f
	cDigit              // 0-9
	cLetter             // A-Z a-z _ and every byte >= 0x80 (UTF-8 letters)
	cIdent              // letter, digit or '$': continues a word
	cHex                // 0-9 A-F a-f
	cCtrl               // control bytes that no dialect allows outside a literal
	cPunct              // punctuation with no lexical meaning of its own
)

var class = func() (t [256]uint8) {
	for _, c := range []byte(" \t\n\r\v\f") {
		t[c] = cSpace
	}
	for c := 0; c < 0x20; c++ {
		if t[c] == 0 {
			t[c] = cCtrl
		}
	}
	t[0x7f] = cCtrl
	for _, c := range []byte("(),;=<>*!|&^~{}]") {
		t[c] = cPunct
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = cDigit | cIdent | cHex
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = cLetter | cIdent
		t[c-32] = cLetter | cIdent
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] |= cHex
		t[c-32] |= cHex
	}
	t['_'] = cLetter | cIdent
	t['$'] = cIdent
	for c := 0x80; c < 0x100; c++ {
		t[c] = cLetter | cIdent
	}
	return t
}()

func isDigit(c byte) bool { return class[c]&cDigit != 0 }
func isSpace(c byte) bool { return class[c]&cSpace != 0 }

// prevKind is what came before the current token; it decides whether a sign
// belongs to a number and whether NULL/TRUE/FALSE are literals.
type prevKind uint8

const (
	pkNone    prevKind = iota // start, operator, '(' or ','
	pkWord                    // keyword or bare identifier
	pkOperand                 // quoted identifier, marker, ')' or ']'
	pkLiteral                 // a literal (already replaced)
)

// tokClass is what the IN/VALUES list collapser needs to know about a token.
type tokClass uint8

const (
	tcOther tokClass = iota
	tcLiteral
	tcQMark // a bare '?' marker
	tcComma
	tcOpen
	tcClose
)

const (
	listIN = iota + 1
	listVALUES
)

type listState struct {
	pending   uint8 // IN or VALUES seen, waiting for '('
	kind      uint8
	active    bool
	depth     int
	outStart  int // output length where the collapsible text starts
	ok        bool
	elems     int
	tail      bool // right after a collapsed VALUES tuple
	tailComma bool
	tailStart int
}

type sqlLexer struct {
	w             rewriter
	s             string // the lexed view of w.src
	r             rules
	collapse      bool // Options.CollapseLists
	keepCommenter bool // Options.KeepSQLCommenter
	partial       bool

	prev               prevKind
	wordStart, wordEnd int // the last word, valid when prev == pkWord
	depth              int
	stmtStart          bool
	identified         bool // saw IDENTIFIED in this statement
	maskNext           bool // the next token is a credential
	inline             inlineKind

	ascii asciiState // whether the view is all ASCII, computed when first needed
	list  listState
	sumOn bool // Options.Summarize
	sum   *summarizer
}

func sanitizeSQL(query, view string, r rules, opts Options) Result {
	l := sqlLexer{
		w: rewriter{src: query}, s: view, r: r, stmtStart: true,
		collapse: opts.CollapseLists, keepCommenter: opts.KeepSQLCommenter, sumOn: opts.Summarize,
	}
	if l.sumOn {
		l.sum = new(summarizer)
	}
	l.run(0)
	var res Result
	res.Text, res.Partial = l.w.finish(view, l.partial)
	if l.sumOn {
		res.Summary, res.Operation = l.sum.result()
	}
	return res
}

// run lexes l.s from i to its end.
func (l *sqlLexer) run(i int) {
	s := l.s
	n := len(s)
	for i < n {
		c := s[i]
		cl := class[c]
		switch {
		case cl&cSpace != 0:
			i++
			for i < n && class[s[i]]&cSpace != 0 {
				i++
			}
		case cl&cLetter != 0:
			i = l.word(i)
		case cl&cPunct != 0:
			l.punct(i, c)
			i++
		case cl&cDigit != 0:
			// Fast path for the most common literal, a plain integer.
			j := digitsEnd(s, i+1)
			if j < n && (class[s[j]]&cIdent != 0 || s[j] == '.') {
				i = l.number(i, j)
				continue
			}
			l.w.mask(i, j)
			l.afterLiteral(i, j)
			i = j
		case c == '\'':
			// Fast path for a string without quotes or backslashes inside.
			if end := quoteEnd(s, i+1); end >= 0 && (end+1 >= n || s[end+1] != '\'') && s[end-1] != '\\' {
				l.w.mask(i, end+1)
				l.afterLiteral(i, end+1)
				i = end + 1
				continue
			}
			i = l.quotedLiteral(i, i, '\'', l.r.str)
		case cl&cCtrl != 0:
			// NUL and other control bytes have no meaning outside a
			// literal; whatever follows cannot be read with confidence.
			i = l.fail(i)
		default:
			i = l.symbol(i, c)
		}
	}
}

func (l *sqlLexer) symbol(i int, c byte) int {
	s := l.s
	n := len(s)
	var next byte
	if i+1 < n {
		next = s[i+1]
	}
	switch c {
	case '"':
		if l.r.dqLiteral {
			return l.quotedLiteral(i, i, '"', l.r.dq)
		}
		return l.quotedIdent(i, '"', l.r.dq)
	case '`':
		return l.quotedIdent(i, '`', l.r.bt)
	case '[':
		if l.r.bracketIdent {
			return l.quotedIdent(i, ']', escNone)
		}
	case '-':
		if next == '-' && (!l.r.dashNeedsSpace || i+2 >= n || s[i+2] <= ' ') {
			return l.lineComment(i)
		}
		if l.signedNumber(i) {
			return l.number(i, i+1)
		}
	case '+':
		if l.signedNumber(i) {
			return l.number(i, i+1)
		}
	case '.':
		if isDigit(next) && l.valuePosition() {
			return l.number(i, i)
		}
	case '/':
		if next == '*' {
			return l.blockComment(i)
		}
	case '#':
		if l.r.hashComment {
			return l.lineComment(i)
		}
		if l.r.hashWord {
			return l.word(i)
		}
	case '?':
		j := i + 1
		for j < n && isDigit(s[j]) {
			j++
		}
		return l.marker(i, j, j == i+1)
	case '$':
		return l.dollar(i, next)
	case ':':
		if class[next]&cLetter != 0 {
			return l.marker(i, l.identEnd(i+1), false)
		}
		if isDigit(next) && l.r.colonNumMarker {
			j := i + 1
			for j < n && isDigit(s[j]) {
				j++
			}
			return l.marker(i, j, false)
		}
	case '%':
		if end := pyformatEnd(s, i); end > 0 {
			return l.marker(i, end, false)
		}
	case '@':
		j := i + 1
		for j < n && s[j] == '@' {
			j++
		}
		if j < n && class[s[j]]&cLetter != 0 {
			// @p1, @name (T-SQL), @var and @@system_var (MySQL).
			return l.marker(i, l.identEnd(j), false)
		}
		// A run of '@' is one operator; stepping over it whole keeps the
		// scan linear.
		l.punct(i, c)
		return j
	}
	l.punct(i, c)
	return i + 1
}

// identEnd returns the end of the identifier characters starting at i.
func (l *sqlLexer) identEnd(i int) int {
	s := l.s
	for i < len(s) && (class[s[i]]&cIdent != 0 || (s[i] == '#' && l.r.hashWord)) {
		i++
	}
	return i
}

// pyformatEnd recognises the Python DB-API placeholders %s and %(name)s.
func pyformatEnd(s string, i int) int {
	n := len(s)
	if i+1 >= n {
		return 0
	}
	if s[i+1] == 's' {
		if i+2 == n || class[s[i+2]]&cIdent == 0 {
			return i + 2
		}
		return 0
	}
	if s[i+1] != '(' {
		return 0
	}
	j := i + 2
	for j < n && (class[s[j]]&cIdent != 0 && s[j] < utf8.RuneSelf && s[j] != '$') {
		j++
	}
	if j > i+2 && j+1 < n && s[j] == ')' && s[j+1] == 's' {
		return j + 2
	}
	return 0
}

func (l *sqlLexer) dollar(i int, next byte) int {
	s := l.s
	n := len(s)
	if isDigit(next) {
		j := i + 1
		for j < n && isDigit(s[j]) {
			j++
		}
		return l.marker(i, j, false)
	}
	if l.r.dollarQuotes && (next == '$' || class[next]&cLetter != 0) {
		j := i + 1
		for j < n && class[s[j]]&cIdent != 0 && s[j] != '$' {
			j++
		}
		if j < n && s[j] == '$' {
			tag := s[i : j+1]
			k := strings.Index(s[j+1:], tag)
			if k < 0 {
				return l.fail(i)
			}
			end := j + 1 + k + len(tag)
			l.literal(i, end)
			return end
		}
	}
	if class[next]&cLetter != 0 {
		// $name (SQLite) — a marker, not a literal.
		return l.marker(i, l.identEnd(i+1), false)
	}
	l.punct(i, '$')
	return i + 1
}

// word lexes a keyword or bare identifier starting at start, or a literal
// introduced by a prefix such as N'…', E'…', X'…', q'[…]' or U&'…'.
func (l *sqlLexer) word(start int) int {
	s := l.s
	i := start + 1
	hi := s[start] // OR of all bytes: >= 0x80 means non-ASCII
	for i < len(s) {
		c := s[i]
		if class[c]&cIdent == 0 && (c != '#' || !l.r.hashWord) {
			break
		}
		hi |= c
		i++
	}
	if i < len(s) {
		switch s[i] {
		case '\'':
			if end, ok := l.prefixedString(start, i); ok {
				return end
			}
		case '&':
			if i-start == 1 && s[start]|0x20 == 'u' && i+1 < len(s) && s[i+1] == '\'' {
				return l.quotedLiteral(start, i+1, '\'', l.r.str)
			}
		}
	}
	w := s[start:i]
	if l.maskNext {
		l.literal(start, i)
		return i
	}
	rows := (l.stmtStart || l.inline != inlNone) && l.inlineWord(w)
	if n := len(w); (n == 4 || n == 5) && isNullOrBool(w) {
		// In IS [NOT] NULL, NOT NULL and IS TRUE the word is syntax;
		// everywhere else it is a value and is replaced like any literal.
		if !l.afterWord("IS") && !l.afterWord("NOT") {
			l.literal(start, i)
			if rows { // FORMAT Null
				return l.rows(i)
			}
			return i
		}
	}
	if l.stmtStart && len(w) == 7 && strings.EqualFold(w, "CONNECT") {
		// CONNECT user/password@db carries a credential in bare words.
		if rest := strings.TrimLeft(l.w.src[i:], " \t\r\n"); rest != "" {
			l.w.replace(i, len(l.w.src), " ?")
		}
		return len(s)
	}
	if hi >= utf8.RuneSelf {
		l.w.repairUTF8(start, i)
	}
	switch len(w) {
	case 10:
		if strings.EqualFold(w, "IDENTIFIED") {
			l.identified = true
		}
	case 2:
		if l.identified && strings.EqualFold(w, "BY") {
			// IDENTIFIED [WITH plugin] BY secret: the secret may be a
			// bare word or a quoted identifier (Oracle).
			l.identified = false
			l.maskNext = true
		}
	}
	if l.collapse {
		l.listEvent(tcOther, start, i)
		if len(w) == 2 && strings.EqualFold(w, "IN") {
			l.list.pending = listIN
		} else if len(w) == 6 && strings.EqualFold(w, "VALUES") {
			l.list.pending = listVALUES
		}
	}
	if l.sumOn {
		l.sum.word(w, false)
	}
	l.prev, l.wordStart, l.wordEnd = pkWord, start, i
	l.stmtStart = false
	if rows {
		return l.rows(i)
	}
	return i
}

type asciiState uint8

const (
	asciiUnknown asciiState = iota
	asciiYes
	asciiNo
)

// allASCII reports whether the view has no byte >= 0x80; quoted identifiers
// need UTF-8 repair only when it has.
func (l *sqlLexer) allASCII() bool {
	if l.ascii == asciiUnknown {
		l.ascii = asciiNo
		if isASCII(l.s) {
			l.ascii = asciiYes
		}
	}
	return l.ascii == asciiYes
}

// quoteEnd returns the index of the next single quote at or after i, or -1.
// Most strings are short: a word-at-a-time scan finds their end sooner than
// the vectorised search, which takes over for long ones.
func quoteEnd(s string, i int) int {
	for lim := i + 32; i+8 <= len(s) && i < lim; i += 8 {
		// Bytes equal to '\'' become zero; the lowest flagged byte is
		// exact (borrows only disturb bytes above it).
		x := load64(s, i) ^ 0x2727272727272727
		if t := (x - 0x0101010101010101) &^ x & 0x8080808080808080; t != 0 {
			return i + bits.TrailingZeros64(t)/8
		}
	}
	if k := strings.IndexByte(s[i:], '\''); k >= 0 {
		return i + k
	}
	return -1
}

// load64 reads s[i:i+8] as a little-endian word (one load on the platforms
// we build for).
func load64(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// digitsEnd returns the end of the run of ASCII digits starting at i,
// examining eight bytes at a time where it can.
func digitsEnd(s string, i int) int {
	for i+8 <= len(s) {
		v := load64(s, i)
		// A byte is a digit iff its high nibble is 3 both as is and
		// after adding 6; carries only disturb bytes after the first
		// non-digit, which are not looked at.
		nd := ((v ^ 0x3030303030303030) | ((v + 0x0606060606060606) ^ 0x3030303030303030)) & 0xF0F0F0F0F0F0F0F0
		if nd != 0 {
			return i + bits.TrailingZeros64(nd)/8
		}
		i += 8
	}
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// isASCII reports whether s has no byte >= 0x80, eight bytes at a time.
func isASCII(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if load64(s, i)&0x8080808080808080 != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// isNullOrBool reports NULL, TRUE or FALSE in any case.
func isNullOrBool(w string) bool {
	switch len(w) {
	case 4:
		a, b, c, d := w[0]|0x20, w[1]|0x20, w[2]|0x20, w[3]|0x20
		return a == 'n' && b == 'u' && c == 'l' && d == 'l' || a == 't' && b == 'r' && c == 'u' && d == 'e'
	case 5:
		return strings.EqualFold(w, "FALSE")
	}
	return false
}

// repairWord makes sure a kept word or marker is valid UTF-8 in the output.
func (l *sqlLexer) repairWord(start, end int) {
	for k := start; k < end; k++ {
		if l.s[k] >= utf8.RuneSelf {
			l.w.repairUTF8(start, end)
			return
		}
	}
}

func (l *sqlLexer) prefixedString(start, quote int) (int, bool) {
	p := l.s[start:quote]
	switch len(p) {
	case 1:
		switch p[0] | 0x20 {
		case 'e':
			// E'…' has backslash escapes; in generic mode a plain string
			// would not, so an escaped quote stays ambiguous there.
			mode := escBackslash
			if l.r.str == escAmbiguous {
				mode = escAmbiguous
			}
			return l.quotedLiteral(start, quote, '\'', mode), true
		case 'n', 'x', 'b':
			return l.quotedLiteral(start, quote, '\'', l.r.str), true
		case 'q':
			if l.r.qQuotes {
				return l.qQuote(start, quote), true
			}
		}
	case 2:
		if l.r.qQuotes && strings.EqualFold(p, "nq") {
			return l.qQuote(start, quote), true
		}
	}
	return 0, false
}

// qQuote lexes Oracle's q'<d>…<d>' where <d> is a bracket pair or any other
// single character.
func (l *sqlLexer) qQuote(start, quote int) int {
	s := l.s
	if quote+1 >= len(s) {
		return l.fail(start)
	}
	open := s[quote+1]
	closer := open
	switch open {
	case '[':
		closer = ']'
	case '{':
		closer = '}'
	case '<':
		closer = '>'
	case '(':
		closer = ')'
	}
	if isSpace(open) || open == '\'' {
		return l.fail(start)
	}
	k := strings.Index(s[quote+2:], string([]byte{closer, '\''}))
	if k < 0 {
		return l.fail(start)
	}
	end := quote + 2 + k + 2
	if l.r.str == escAmbiguous {
		// Generic mode: outside Oracle, q is a name and the string ends at
		// the next quote; unless both readings agree, fail closed.
		if plain, ambiguous := scanQuoted(s, quote+1, '\'', escAmbiguous); ambiguous || plain != end {
			return l.fail(start)
		}
	}
	l.literal(start, end)
	return end
}

// scanQuoted finds the end of a token quoted with q whose body starts at i.
// It returns the index after the closing quote, or -1 if the body never
// closes. With escAmbiguous, ambiguous reports a quote preceded by an odd run
// of backslashes, where dialects disagree on whether the token ends.
func scanQuoted(s string, i int, q byte, mode escMode) (end int, ambiguous bool) {
	body := i
	for {
		j := strings.IndexByte(s[i:], q)
		if j < 0 {
			return -1, false
		}
		j += i
		if mode != escNone {
			k := j
			for k > body && s[k-1] == '\\' {
				k--
			}
			if (j-k)%2 == 1 {
				if mode == escAmbiguous {
					return -1, true
				}
				i = j + 1
				continue
			}
		}
		if j+1 < len(s) && s[j+1] == q {
			i = j + 2
			continue
		}
		return j + 1, false
	}
}

// quotedLiteral lexes a string literal that starts at start (which may
// include a prefix) and whose opening quote is at quote.
func (l *sqlLexer) quotedLiteral(start, quote int, q byte, mode escMode) int {
	end, ambiguous := scanQuoted(l.s, quote+1, q, mode)
	if end < 0 || ambiguous {
		return l.fail(start)
	}
	l.literal(start, end)
	return end
}

func (l *sqlLexer) quotedIdent(start int, closer byte, mode escMode) int {
	end, ambiguous := scanQuoted(l.s, start+1, closer, mode)
	if end < 0 || ambiguous {
		return l.fail(start)
	}
	if l.maskNext {
		l.literal(start, end)
		return end
	}
	if !l.allASCII() {
		l.w.repairUTF8(start, end)
	}
	if l.collapse {
		l.listEvent(tcOther, start, end)
	}
	if l.sumOn {
		l.sum.word(l.s[start:end], true)
	}
	l.prev = pkOperand
	l.stmtStart = false
	return end
}

// number lexes a numeric literal; start is where the literal begins (a sign
// or a leading '.'), i where its digits start. Every word character stuck to
// the number (0xFF, 0b1010, 1e10, 1_000, 10L, 123abc) belongs to the literal:
// nothing of it may survive.
func (l *sqlLexer) number(start, i int) int {
	s := l.s
	n := len(s)
	dot := false
	for {
		for i < n && class[s[i]]&cIdent != 0 {
			i++
		}
		if i >= n {
			break
		}
		switch c := s[i]; {
		case c == '.' && !dot:
			// one decimal point: 1.5, 1., .5, 1.e5
			dot = true
			i++
			continue
		case (c == '+' || c == '-') && s[i-1]|0x20 == 'e' && i+1 < n && isDigit(s[i+1]) && s[start+1]|0x20 != 'x':
			// exponent sign: 1e-5 (but not 0x1e-5)
			i++
			continue
		}
		break
	}
	l.literal(start, i)
	return i
}

// signedNumber reports whether the '+' or '-' at i is the sign of a number
// literal rather than a binary operator.
func (l *sqlLexer) signedNumber(i int) bool {
	s := l.s
	if i+1 >= len(s) {
		return false
	}
	c := s[i+1]
	if !isDigit(c) && !(c == '.' && i+2 < len(s) && isDigit(s[i+2])) {
		return false
	}
	return l.valuePosition()
}

// valuePosition reports whether an operand is expected next: at the start,
// after an operator or '(' or ',', after another literal (so "99+100" reads
// as two signed numbers, as the conformance cases expect) or after a keyword
// such as SELECT, WHERE or AND.
func (l *sqlLexer) valuePosition() bool {
	switch l.prev {
	case pkNone, pkLiteral:
		return true
	case pkWord:
		return lookupKeyword(l.s[l.wordStart:l.wordEnd]).class&clValue != 0
	}
	return false
}

func (l *sqlLexer) afterWord(kw string) bool {
	return l.prev == pkWord && strings.EqualFold(l.s[l.wordStart:l.wordEnd], kw)
}

func (l *sqlLexer) literal(start, end int) {
	l.w.mask(start, end)
	l.afterLiteral(start, end)
}

// afterLiteral updates the state after src[start:end] was masked; small
// enough to inline into the lexer's fast paths.
func (l *sqlLexer) afterLiteral(start, end int) {
	l.maskNext = false
	l.prev = pkLiteral
	l.stmtStart = false
	if l.collapse || l.sumOn {
		l.literalEvents(start, end)
	}
}

func (l *sqlLexer) literalEvents(start, end int) {
	if l.collapse {
		l.listEvent(tcLiteral, start, end)
	}
	if l.sumOn {
		l.sum.value()
	}
}

// marker handles a parameter marker, which is kept exactly as written.
func (l *sqlLexer) marker(start, end int, bare bool) int {
	l.repairWord(start, end)
	l.maskNext = false
	if l.collapse {
		tc := tcOther
		if bare {
			tc = tcQMark
		}
		l.listEvent(tc, start, end)
	}
	if l.sumOn {
		l.sum.value()
	}
	l.prev = pkOperand
	l.stmtStart = false
	return end
}

func (l *sqlLexer) punct(i int, c byte) {
	l.prev = pkNone
	switch c {
	case '(':
		l.depth++
	case ')', ']':
		l.prev = pkOperand
	case ';':
		l.stmtStart = true
		l.identified = false
		l.maskNext = false
	}
	if l.collapse || l.sumOn {
		l.punctEvents(i, c)
	}
	if c == ')' && l.depth > 0 {
		l.depth--
	}
}

func (l *sqlLexer) punctEvents(i int, c byte) {
	if l.collapse {
		l.listEvent(punctClass(c), i, i+1)
	}
	if l.sumOn {
		l.sum.punct(c)
	}
}

func punctClass(c byte) tokClass {
	switch c {
	case '(':
		return tcOpen
	case ')':
		return tcClose
	case ',':
		return tcComma
	}
	return tcOther
}

func (l *sqlLexer) lineComment(i int) int {
	end := len(l.s)
	if j := strings.IndexAny(l.s[i:], "\r\n"); j >= 0 {
		end = i + j
	}
	l.removeComment(i, end)
	return end
}

func (l *sqlLexer) blockComment(i int) int {
	s := l.s
	var end int
	if !l.r.nestedComments {
		k := strings.Index(s[i+2:], "*/")
		if k < 0 {
			return l.fail(i)
		}
		end = i + 2 + k + 2
	} else {
		depth := 1
		j := i + 2
		for j < len(s) && depth > 0 {
			switch {
			case s[j] == '*' && j+1 < len(s) && s[j+1] == '/':
				depth--
				j += 2
			case s[j] == '/' && j+1 < len(s) && s[j+1] == '*':
				depth++
				j += 2
			default:
				j++
			}
		}
		if depth > 0 {
			return l.fail(i)
		}
		end = j
	}
	if l.keepCommenter {
		if kept, ok := sqlCommenter(s[i+2 : end-2]); ok {
			l.w.replace(i, end, kept)
			return end
		}
	}
	l.removeComment(i, end)
	return end
}

// removeComment deletes a comment, leaving one space where deleting it would
// glue two tokens together.
func (l *sqlLexer) removeComment(start, end int) {
	before := l.w.lastByte(start)
	repl := ""
	if before != 0 && !isSpace(before) && end < len(l.s) && !isSpace(l.s[end]) {
		repl = " "
	}
	l.w.replace(start, end, repl)
}

// fail replaces everything from pos to the end of the input with '?' and
// marks the result partial. It returns the end of the view, ending the lexer.
func (l *sqlLexer) fail(pos int) int {
	l.w.replace(pos, len(l.w.src), "?")
	l.partial = true
	return len(l.s)
}

// listEvent drives the optional IN (…) / VALUES (…) collapsing.
func (l *sqlLexer) listEvent(tc tokClass, start, end int) {
	ls := &l.list
	if ls.active {
		switch tc {
		case tcLiteral, tcQMark:
			ls.elems++
		case tcComma:
		case tcOpen:
			ls.ok = false
		case tcClose:
			if l.depth != ls.depth {
				return
			}
			ls.active = false
			if !ls.ok || ls.elems == 0 {
				ls.tail = false
				return
			}
			repl := "(?)"
			if ls.tail {
				repl = "" // a further VALUES tuple: drop ", (…)"
			}
			l.w.sync(start)
			l.w.truncate(ls.outStart, end, repl)
			if ls.kind == listVALUES {
				ls.tail, ls.tailComma, ls.tailStart = true, false, len(l.w.out)
			}
		default:
			ls.ok = false
		}
		return
	}
	if ls.tail {
		switch {
		case tc == tcComma && !ls.tailComma:
			ls.tailComma = true
			return
		case tc == tcOpen && ls.tailComma:
			ls.active, ls.kind, ls.depth, ls.ok, ls.elems = true, listVALUES, l.depth, true, 0
			ls.outStart = ls.tailStart
			l.w.sync(start)
			return
		}
		ls.tail = false
	}
	if ls.pending != 0 {
		if tc == tcOpen {
			ls.active, ls.kind, ls.depth, ls.ok, ls.elems = true, ls.pending, l.depth, true, 0
			ls.outStart = l.w.sync(start)
		}
		ls.pending = 0
	}
}

// sqlCommenter rewrites a sqlcommenter comment body (key='value',…) to
// /*key='?',…*/, which is still valid sqlcommenter syntax. It reports false
// when the body is not in that form.
func sqlCommenter(body string) (string, bool) {
	body = strings.TrimSpace(body)
	if body == "" {
		return "", false
	}
	out := make([]byte, 0, len(body)+4)
	out = append(out, "/*"...)
	for i := 0; ; {
		k := i
		for k < len(body) && isCommenterKeyByte(body[k]) {
			k++
		}
		if k == i || k+1 >= len(body) || body[k] != '=' || body[k+1] != '\'' {
			return "", false
		}
		out = append(out, body[i:k]...)
		out = append(out, "='?'"...)
		end, _ := scanQuoted(body, k+2, '\'', escBackslash)
		if end < 0 {
			return "", false
		}
		if end == len(body) {
			break
		}
		if body[end] != ',' {
			return "", false
		}
		out = append(out, ',')
		i = end + 1
	}
	out = append(out, "*/"...)
	return string(out), true
}

func isCommenterKeyByte(c byte) bool {
	return c < utf8.RuneSelf && class[c]&cIdent != 0 && c != '$' || c == '.' || c == '-' || c == '%'
}
