package sanitize

import "strings"

// Dialect selects the lexical rules used to find literals.
type Dialect uint8

const (
	// Generic is used for other_sql and for any system this package does not
	// know. It applies the strictest reading of every ambiguous construct:
	// double-quoted text is a literal, '#' starts a comment, block comments
	// nest, and a backslash before a closing quote (which only some dialects
	// treat as an escape) makes the rest of the query uncertain.
	Generic Dialect = iota
	PostgreSQL
	MySQL // also MariaDB
	SQLite
	MSSQL
	Oracle
	ClickHouse
	// Redis is the command text of Redis, Valkey and Memcached.
	Redis
	// MongoDB is a JSON (or mongo shell) command document.
	MongoDB
	// JSON is a JSON query document such as an Elasticsearch request body.
	JSON

	dialectCount
)

// NumDialects is the number of dialects; every Dialect is below it.
const NumDialects = int(dialectCount)

var dialectNames = [dialectCount]string{
	Generic:    "generic",
	PostgreSQL: "postgresql",
	MySQL:      "mysql",
	SQLite:     "sqlite",
	MSSQL:      "mssql",
	Oracle:     "oracle",
	ClickHouse: "clickhouse",
	Redis:      "redis",
	MongoDB:    "mongodb",
	JSON:       "json",
}

// String returns the dialect's configuration name. The set of names is fixed,
// so it is safe to use as a metric attribute value.
func (d Dialect) String() string {
	if d < dialectCount {
		return dialectNames[d]
	}
	return dialectNames[Generic]
}

// Dialects lists every dialect, in declaration order.
func Dialects() []Dialect {
	out := make([]Dialect, dialectCount)
	for i := range out {
		out[i] = Dialect(i)
	}
	return out
}

// systemDialects maps db.system.name values (and the deprecated db.system
// values) to dialects. Systems not listed get Generic.
var systemDialects = map[string]Dialect{
	"other_sql":            Generic,
	"postgresql":           PostgreSQL,
	"cockroachdb":          PostgreSQL,
	"mysql":                MySQL,
	"mariadb":              MySQL,
	"sqlite":               SQLite,
	"mssql":                MSSQL,
	"microsoft.sql_server": MSSQL,
	"oracle":               Oracle,
	"oracle.db":            Oracle,
	"clickhouse":           ClickHouse,
	"redis":                Redis,
	"valkey":               Redis,
	"memcached":            Redis,
	"mongodb":              MongoDB,
	"elasticsearch":        JSON,
	"opensearch":           JSON,
}

// DialectForSystem returns the dialect for a db.system.name (or db.system)
// value. Unknown or empty systems get Generic, the strictest SQL rules.
func DialectForSystem(system string) Dialect {
	if d, ok := systemDialects[system]; ok {
		return d
	}
	if d, ok := systemDialects[strings.ToLower(system)]; ok {
		return d
	}
	return Generic
}

// ParseDialect accepts a dialect name as written in configuration: either a
// Dialect.String() value or a db.system.name value.
func ParseDialect(name string) (Dialect, bool) {
	lower := strings.ToLower(name)
	for i, n := range dialectNames {
		if n == lower {
			return Dialect(i), true
		}
	}
	d, ok := systemDialects[lower]
	return d, ok
}

// escMode says how a backslash inside a quoted token behaves.
type escMode uint8

const (
	escNone      escMode = iota // backslash is an ordinary character
	escBackslash                // backslash escapes the next byte
	escAmbiguous                // unknown: a backslash before a quote makes the rest uncertain
)

// rules are the lexical facts about one SQL dialect.
type rules struct {
	str            escMode // plain '...' strings
	dqLiteral      bool    // "..." is a string literal (otherwise an identifier)
	dq             escMode // escapes inside "..."
	bt             escMode // escapes inside `...` identifiers
	bracketIdent   bool    // [x] is a quoted identifier
	hashComment    bool    // '#' starts a line comment
	hashWord       bool    // '#' is an identifier character (#temp, a#b)
	nestedComments bool    // /* /* */ */ nests
	dashNeedsSpace bool    // '--' is a comment only when followed by a space or control char
	dollarQuotes   bool    // $$...$$ and $tag$...$tag$ strings
	qQuotes        bool    // Oracle q'[...]' strings
	colonNumMarker bool    // :1 is a bind marker
}

func rulesFor(d Dialect, mysqlANSIQuotes bool) rules {
	switch d {
	case PostgreSQL:
		return rules{nestedComments: true, dollarQuotes: true}
	case MySQL:
		r := rules{str: escBackslash, dqLiteral: true, dq: escBackslash, hashComment: true, dashNeedsSpace: true}
		if mysqlANSIQuotes {
			r.dqLiteral, r.dq = false, escNone
		}
		return r
	case SQLite:
		return rules{bracketIdent: true}
	case MSSQL:
		return rules{bracketIdent: true, hashWord: true, nestedComments: true}
	case Oracle:
		return rules{hashWord: true, qQuotes: true, colonNumMarker: true}
	case ClickHouse:
		return rules{str: escBackslash, dq: escBackslash, bt: escBackslash, hashComment: true, nestedComments: true, dollarQuotes: true}
	default:
		return rules{
			str: escAmbiguous, dqLiteral: true, dq: escAmbiguous, bt: escAmbiguous,
			hashComment: true, nestedComments: true, dollarQuotes: true, qQuotes: true,
		}
	}
}
