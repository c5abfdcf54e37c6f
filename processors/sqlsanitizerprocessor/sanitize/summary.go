package sanitize

import "strings"

// sumState is where the summarizer is within a statement.
type sumState uint8

const (
	stStart       sumState = iota // expecting a statement's first keyword
	stIdle                        // inside a statement, watching for SELECT/FROM/JOIN
	stTarget                      // the next name is a table
	stAfterTarget                 // after a table name: '.', alias, ',' or a clause
	stTargetDot                   // after "name." in a table reference
	stAlias                       // after AS
	stAfterAlias                  // after a table alias
	stInsert                      // after INSERT: INTO or the table
	stInsertInto                  // after INSERT INTO: an optional TABLE, then the table
	stDDL                         // after CREATE/ALTER/DROP/TRUNCATE: modifiers, object type
	stDDLName                     // after the object type: IF [NOT] EXISTS, then the name
	stExec                        // after EXEC/CALL: the procedure name
	stNameAfter                   // after an object name: only ".part" may follow
	stNameDot                     // after "name." in an object name
	stDone                        // nothing more to learn until ';'
)

const maxSelectNesting = 32

// summarizer builds db.query.summary ("SELECT orders customers") and
// db.operation.name from the token stream of the SQL lexer. It only ever
// sees keywords, identifiers and punctuation: literals arrive as value()
// events without their text.
type summarizer struct {
	arr      [MaxSummaryLength]byte
	n        int  // bytes of arr in use
	full     bool // a part did not fit; add nothing more
	lastPart int  // start of the last part in buf, for dropping a cut name
	st       sumState
	depth    int
	selects  [maxSelectNesting]int // paren depths of the open SELECTs
	nsel     int
	fromList bool // a ',' after a table starts another table
	setOp    bool // a SELECT after UNION is not a new operation
	stmtOp   bool // the current statement has its operation
	blocks   int  // open BEGIN/CASE blocks, whose ';' do not end the statement

	op    string
	nops  int
	mixed bool
}

func (m *summarizer) result() (summary, operation string) {
	operation = m.op
	if m.nops > 1 {
		operation = "BATCH"
		if !m.mixed {
			operation = "BATCH " + m.op
		}
	}
	return string(m.arr[:m.n]), operation
}

func (m *summarizer) add(part string) {
	if m.full {
		return
	}
	need := len(part)
	if m.n > 0 {
		need++
	}
	if m.n+need > MaxSummaryLength {
		m.full = true
		return
	}
	if m.n > 0 {
		m.arr[m.n] = ' '
		m.n++
	}
	m.lastPart = m.n
	m.n += copy(m.arr[m.n:], part)
}

// addDot extends the last part with ".part"; if that does not fit, the
// whole name is dropped rather than leaving a misleading prefix.
func (m *summarizer) addDot(part string) {
	if m.full {
		return
	}
	if m.n+1+len(part) > MaxSummaryLength {
		m.n = max(m.lastPart-1, 0)
		m.full = true
		return
	}
	m.arr[m.n] = '.'
	m.n++
	m.n += copy(m.arr[m.n:], part)
}

func (m *summarizer) addOp(w string) {
	m.add(w)
	if m.stmtOp {
		return
	}
	m.stmtOp = true
	m.nops++
	if m.op == "" {
		m.op = w
	} else if !strings.EqualFold(m.op, w) {
		m.mixed = true
	}
}

func (m *summarizer) pushSelect() {
	if m.nsel > 0 && m.selects[m.nsel-1] == m.depth {
		return
	}
	if m.nsel < maxSelectNesting {
		m.selects[m.nsel] = m.depth
		m.nsel++
	}
}

// word handles a keyword or identifier; quoted is set for quoted identifiers,
// which are never keywords.
func (m *summarizer) word(w string, quoted bool) {
	var k kwInfo
	if !quoted {
		k = lookupKeyword(w)
	}
	if m.st != stStart {
		switch k.id {
		case kwBegin:
			m.blocks++
		case kwEnd:
			if m.blocks > 0 {
				m.blocks--
			}
		}
	}
	switch m.st {
	case stStart:
		if quoted {
			m.st = stDone
			return
		}
		m.startStatement(w, k)
	case stIdle:
		if !quoted {
			m.idleWord(w, k)
		}
	case stTarget:
		if k.class&clNameSkip != 0 {
			return
		}
		if k.class&clClause != 0 {
			m.st = stIdle
			m.idleWord(w, k)
			return
		}
		m.add(w)
		m.st = stAfterTarget
	case stAfterTarget, stAfterAlias:
		if k.id == kwAs && m.st == stAfterTarget {
			m.st = stAlias
			return
		}
		if k.class&clClause != 0 {
			m.st = stIdle
			m.idleWord(w, k)
			return
		}
		if m.st == stAfterTarget {
			m.st = stAfterAlias
		} else {
			m.st = stIdle
		}
	case stAlias:
		m.st = stAfterAlias
	case stTargetDot:
		m.addDot(w)
		m.st = stAfterTarget
	case stInsert, stInsertInto:
		switch {
		case m.st == stInsert && (k.id == kwInto || strings.EqualFold(w, "OVERWRITE")):
			m.st = stInsertInto
		case m.st == stInsertInto && k.id == kwTable:
			m.st = stTarget
		case k.class&clNameSkip != 0:
		default:
			m.st = stTarget
			m.word(w, quoted)
		}
	case stDDL:
		switch {
		case quoted:
			m.st = stDone
		case k.class&clDDLMod != 0 && k.class&clObject == 0:
		case k.class&clObject != 0:
			m.add(w)
			m.st = stDDLName
		default:
			m.st = stDone
		}
	case stDDLName:
		if k.class&clNameSkip != 0 {
			return
		}
		m.add(w)
		m.st = stNameAfter
	case stExec:
		m.add(w)
		m.st = stNameAfter
	case stNameDot:
		m.addDot(w)
		m.st = stNameAfter
	case stNameAfter:
		m.st = stDone
	}
}

func (m *summarizer) startStatement(w string, k kwInfo) {
	m.pushSelect()
	switch k.id {
	case kwSelect:
		m.addOp(w)
		m.st = stIdle
	case kwInsert:
		m.addOp(w)
		m.st = stInsert
	case kwUpdate:
		m.addOp(w)
		m.st = stTarget
	case kwDelete:
		m.addOp(w)
		m.st = stIdle
	case kwDDL, kwTruncate:
		m.addOp(w)
		m.st = stDDL
	case kwExec:
		m.addOp(w)
		m.st = stExec
	case kwWith:
		// The operation comes from the statement after the CTEs.
		m.st = stIdle
	default:
		m.addOp(w)
		m.st = stDone
	}
}

func (m *summarizer) idleWord(w string, k kwInfo) {
	switch k.id {
	case kwSelect:
		if m.setOp {
			m.setOp = false
		} else if !m.stmtOp {
			m.addOp(w)
		} else {
			m.add(w)
		}
		m.pushSelect()
	case kwFrom:
		if m.nsel > 0 && m.selects[m.nsel-1] == m.depth {
			m.st = stTarget
			m.fromList = true
		}
	case kwJoin:
		m.st = stTarget
		m.fromList = false
	case kwSetOp:
		m.setOp = true
	case kwSetQuantifier:
	default:
		m.setOp = false
	}
}

// value handles a literal or a parameter marker.
func (m *summarizer) value() {
	switch m.st {
	case stTarget, stAfterTarget, stTargetDot, stAlias, stAfterAlias, stInsert, stInsertInto:
		m.st = stIdle
	case stStart, stDDL, stDDLName, stExec, stNameAfter, stNameDot:
		m.st = stDone
	}
	m.setOp = false
}

func (m *summarizer) punct(c byte) {
	switch c {
	case '(':
		m.depth++
		switch m.st {
		case stStart, stIdle, stDone:
		case stNameAfter, stDDL, stDDLName, stExec, stNameDot:
			m.st = stDone
		default:
			m.st = stIdle
		}
		return
	case ')':
		if m.depth > 0 {
			m.depth--
		}
		for m.nsel > 0 && m.selects[m.nsel-1] > m.depth {
			m.nsel--
		}
	case ',':
		if m.fromList && (m.st == stAfterTarget || m.st == stAfterAlias) {
			m.st = stTarget
			return
		}
	case '.':
		switch m.st {
		case stAfterTarget:
			m.st = stTargetDot
			return
		case stNameAfter:
			m.st = stNameDot
			return
		}
	case ';':
		if m.blocks == 0 {
			m.st, m.depth, m.nsel, m.setOp, m.stmtOp = stStart, 0, 0, false, false
		}
		return
	}
	switch m.st {
	case stTarget, stAfterTarget, stTargetDot, stAlias, stAfterAlias, stInsert, stInsertInto:
		m.st = stIdle
	case stDDL, stDDLName, stExec, stNameAfter, stNameDot:
		m.st = stDone
	}
}
