package sanitize

import "strings"

// docPlaceholder replaces values in JSON documents; quoting it keeps the
// document valid JSON.
const docPlaceholder = `"?"`

// mongoCollectionCommands are MongoDB commands whose value names a collection
// ({"find": "users", …}); that one value is kept so the command stays
// groupable.
var mongoCollectionCommands = map[string]bool{
	"find": true, "insert": true, "update": true, "delete": true, "aggregate": true,
	"count": true, "distinct": true, "findAndModify": true, "findandmodify": true,
	"mapReduce": true, "mapreduce": true, "create": true, "drop": true, "listIndexes": true,
	"createIndexes": true, "dropIndexes": true, "collMod": true, "validate": true,
	"compact": true, "bulkWrite": true,
}

// docLexer rewrites a JSON document or mongo shell expression: keys,
// operators ($gt), function names (ObjectId) and structure are kept; every
// string, number, boolean, null and regular expression value is replaced.
type docLexer struct {
	w       rewriter
	s       string
	mongo   bool
	partial bool
	depth   int
	prev    byte // last punctuation, or 'v' after a value or word

	op             string
	wantCollection bool
	collection     string
}

func sanitizeDocument(query, view string, mongo bool, opts Options) Result {
	l := docLexer{w: rewriter{src: query}, s: view, mongo: mongo}
	l.run()
	var res Result
	res.Text, res.Partial = l.w.finish(view, l.partial)
	if opts.Summarize && l.op != "" {
		res.Operation = l.op
		res.Summary = l.op
		if l.collection != "" && len(l.op)+1+len(l.collection) <= MaxSummaryLength {
			res.Summary += " " + l.collection
		}
	}
	return res
}

func (l *docLexer) run() {
	s := l.s
	n := len(s)
	for i := 0; i < n; {
		c := s[i]
		var next byte
		if i+1 < n {
			next = s[i+1]
		}
		switch {
		case isSpace(c):
			i++
		case c == '"' || c == '\'':
			end := scanJSString(s, i)
			if end < 0 {
				l.fail(i)
				return
			}
			l.token(i, end, true)
			i = end
		case isDigit(c) || ((c == '-' || c == '+' || c == '.') && (isDigit(next) || next == '.')):
			end := i + 1
			for end < n && (class[s[end]]&cIdent != 0 || s[end] == '.' ||
				((s[end] == '+' || s[end] == '-') && s[end-1]|0x20 == 'e')) {
				end++
			}
			l.value(i, end)
			i = end
		case class[c]&cLetter != 0 || c == '$':
			end := i + 1
			for end < n && (class[s[end]]&cIdent != 0 || s[end] == '.') {
				end++
			}
			l.token(i, end, false)
			i = end
		case c == '/' && l.valuePosition():
			end := scanRegex(s, i)
			if end < 0 {
				l.fail(i)
				return
			}
			l.value(i, end)
			i = end
		case class[c]&cCtrl != 0:
			l.fail(i)
			return
		default:
			switch c {
			case '{', '[':
				l.depth++
			case '}', ']':
				if l.depth > 0 {
					l.depth--
				}
			}
			l.prev = c
			if c != ':' {
				l.wantCollection = false
			}
			i++
		}
	}
}

func (l *docLexer) valuePosition() bool {
	switch l.prev {
	case 0, ':', ',', '[', '(', '{':
		return true
	}
	return false
}

// token handles a string or a bare word: a key when a ':' follows, else a
// value (strings, true/false/null) or a name that is kept (ObjectId, db.x.find).
func (l *docLexer) token(start, end int, quoted bool) {
	s := l.s
	j := end
	for j < len(s) && isSpace(s[j]) {
		j++
	}
	if j < len(s) && s[j] == ':' {
		l.w.repairUTF8(start, end)
		if l.mongo && l.depth == 1 && l.op == "" {
			l.op = unquote(s[start:end], quoted)
			l.wantCollection = mongoCollectionCommands[l.op]
		} else {
			l.wantCollection = false
		}
		l.prev = 'v'
		return
	}
	if quoted {
		if l.wantCollection && !strings.ContainsAny(s[start:end], "\\\n") {
			l.collection = unquote(s[start:end], true)
			l.w.repairUTF8(start, end)
			l.wantCollection = false
			l.prev = 'v'
			return
		}
		l.value(start, end)
		return
	}
	switch s[start:end] {
	case "true", "false", "null", "undefined", "NaN", "Infinity":
		l.value(start, end)
		return
	}
	l.w.repairUTF8(start, end)
	l.wantCollection = false
	l.prev = 'v'
}

func (l *docLexer) value(start, end int) {
	l.w.replace(start, end, docPlaceholder)
	l.wantCollection = false
	l.prev = 'v'
}

func (l *docLexer) fail(pos int) {
	l.w.replace(pos, len(l.w.src), "?")
	l.partial = true
}

func unquote(s string, quoted bool) string {
	if quoted && len(s) >= 2 {
		return s[1 : len(s)-1]
	}
	return s
}

// scanJSString returns the index after the string starting at i, or -1.
func scanJSString(s string, i int) int {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case q:
			return j + 1
		}
	}
	return -1
}

// scanRegex returns the index after a /regex/flags literal at i, or -1.
func scanRegex(s string, i int) int {
	inClass := false
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '[':
			inClass = true
		case ']':
			inClass = false
		case '\n':
			return -1
		case '/':
			if inClass {
				continue
			}
			j++
			for j < len(s) && class[s[j]]&cLetter != 0 && s[j] < 0x80 {
				j++
			}
			return j
		}
	}
	return -1
}
