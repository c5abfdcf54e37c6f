package sanitize

// kwID names the keywords the summarizer reacts to individually.
type kwID uint8

const (
	kwNone kwID = iota
	kwSelect
	kwFrom
	kwJoin
	kwInto
	kwAs
	kwSetOp // UNION, INTERSECT, EXCEPT, MINUS
	kwSetQuantifier
	kwInsert // INSERT, REPLACE, MERGE, UPSERT
	kwUpdate
	kwDelete
	kwDDL // CREATE, ALTER, DROP
	kwTruncate
	kwExec // EXEC, EXECUTE, CALL
	kwWith
	kwBegin // BEGIN and CASE open a block that END closes
	kwEnd
	kwTable
)

// kwClass groups keywords by the role they can play.
type kwClass uint8

const (
	clValue    kwClass = 1 << iota // a value (and so a signed number) may follow
	clClause                       // ends a table reference (not an alias)
	clDDLMod                       // modifier between CREATE/ALTER/DROP and the object type
	clObject                       // object type after CREATE/ALTER/DROP/TRUNCATE
	clNameSkip                     // skipped before a table or object name
)

type kwInfo struct {
	id    kwID
	class kwClass
}

const maxKeywordLen = 14

var keywords = func() map[string]kwInfo {
	m := map[string]kwInfo{}
	add := func(id kwID, c kwClass, words ...string) {
		for _, w := range words {
			k := m[w]
			if id != kwNone {
				k.id = id
			}
			k.class |= c
			m[w] = k
		}
	}
	add(kwSelect, clValue|clClause, "SELECT")
	add(kwFrom, clValue|clClause, "FROM")
	add(kwJoin, clClause, "JOIN", "STRAIGHT_JOIN")
	add(kwInto, clClause, "INTO")
	add(kwAs, clValue, "AS")
	add(kwSetOp, clClause, "UNION", "INTERSECT", "EXCEPT", "MINUS")
	add(kwSetQuantifier, clValue, "ALL", "DISTINCT")
	add(kwInsert, 0, "INSERT", "REPLACE", "MERGE", "UPSERT")
	add(kwUpdate, clClause, "UPDATE")
	add(kwDelete, 0, "DELETE")
	add(kwDDL, 0, "CREATE", "ALTER", "DROP")
	add(kwTruncate, 0, "TRUNCATE")
	add(kwExec, clValue, "EXEC", "EXECUTE", "CALL")
	add(kwWith, clValue|clClause, "WITH")
	add(kwBegin, 0, "BEGIN", "CASE")
	add(kwEnd, 0, "END")
	add(kwTable, 0, "TABLE")
	add(kwNone, clValue, "WHERE", "AND", "OR", "NOT", "THEN", "ELSE", "WHEN", "RETURN", "BY",
		"LIMIT", "OFFSET", "VALUES", "VALUE", "IN", "IS", "BETWEEN", "LIKE", "ILIKE", "SET", "ON",
		"HAVING", "CASE", "DEFAULT", "TOP", "INTERVAL", "START", "INCREMENT", "RESTART",
		"MINVALUE", "MAXVALUE", "FETCH", "ANY", "SOME", "ESCAPE", "CHECK", "TO", "CACHE",
		"PRINT", "FIRST", "NEXT", "ROWS", "ROW", "ARRAY", "RETURNING", "USING", "SKIP", "SAMPLE")
	add(kwNone, clClause, "WHERE", "INNER", "LEFT", "RIGHT", "FULL", "OUTER", "CROSS", "NATURAL",
		"ON", "USING", "GROUP", "ORDER", "HAVING", "LIMIT", "OFFSET", "SET", "VALUES", "VALUE",
		"WINDOW", "FOR", "FETCH", "RETURNING", "OUTPUT", "DEFAULT", "PARTITION", "TABLESAMPLE",
		"LATERAL", "APPLY", "OPTION", "LOCK", "PIVOT", "UNPIVOT", "QUALIFY", "PREWHERE", "FINAL",
		"SAMPLE", "ARRAY", "GLOBAL", "ANY", "ASOF", "SEMI", "ANTI", "CONNECT", "START", "MATCH",
		"DO", "SELECT", "OVERWRITE", "IGNORE", "AFTER", "BEFORE", "INSTEAD", "WHEN", "THEN",
		"EXISTS", "NOT", "AND", "OR", "IF", "ELSE", "END", "BEGIN", "DECLARE", "OVER")
	add(kwNone, clDDLMod, "OR", "REPLACE", "UNIQUE", "CLUSTERED", "NONCLUSTERED", "TEMP",
		"TEMPORARY", "GLOBAL", "LOCAL", "MATERIALIZED", "UNLOGGED", "RECURSIVE", "FULLTEXT",
		"SPATIAL", "VIRTUAL", "EXTERNAL", "ONLINE", "PUBLIC", "FORCE", "NOFORCE", "EDITIONABLE",
		"NONEDITIONABLE", "TRANSIENT", "VOLATILE", "SECURE", "BITMAP", "COLUMNSTORE", "DEFINER",
		"ALGORITHM", "SQL", "SECURITY", "INVOKER", "UNDEFINED", "TEMPTABLE", "LIVE", "WINDOW")
	add(kwNone, clObject, "TABLE", "VIEW", "INDEX", "SEQUENCE", "PROCEDURE", "PROC", "FUNCTION",
		"TRIGGER", "DATABASE", "SCHEMA", "USER", "ROLE", "TYPE", "DOMAIN", "EXTENSION",
		"TABLESPACE", "SYNONYM", "PACKAGE", "EVENT", "LOGIN", "DICTIONARY", "POLICY", "RULE",
		"COLLATION", "AGGREGATE", "OPERATOR", "PUBLICATION", "SUBSCRIPTION", "SERVER", "STAGE",
		"WAREHOUSE", "STREAM", "TASK", "PIPE", "QUOTA", "PROFILE", "SETTINGS")
	add(kwNone, clNameSkip, "IF", "NOT", "EXISTS", "CONCURRENTLY", "ONLY", "LOW_PRIORITY",
		"DELAYED", "HIGH_PRIORITY", "IGNORE", "QUICK", "LATERAL")
	return m
}()

// lookupKeyword returns what is known about w, compared case-insensitively.
func lookupKeyword(w string) kwInfo {
	if len(w) < 2 || len(w) > maxKeywordLen {
		return kwInfo{}
	}
	var b [maxKeywordLen]byte
	for i := 0; i < len(w); i++ {
		c := w[i]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		b[i] = c
	}
	return keywords[string(b[:len(w)])]
}
