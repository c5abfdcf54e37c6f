package sanitize

import (
	"strings"
	"testing"
	"unicode/utf8"
)

type sanitizeCase struct {
	name    string
	in      string
	want    string
	partial bool
}

func runCases(t *testing.T, d Dialect, opts Options, cases []sanitizeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := Sanitize(tc.in, d, opts)
			if res.Text != tc.want {
				t.Errorf("Sanitize(%q, %s)\n got %q\nwant %q", tc.in, d, res.Text, tc.want)
			}
			if res.Partial != tc.partial {
				t.Errorf("Sanitize(%q, %s): partial = %v, want %v", tc.in, d, res.Partial, tc.partial)
			}
			if !utf8.ValidString(res.Text) {
				t.Errorf("output is not valid UTF-8: %q", res.Text)
			}
		})
	}
}

// Cases every SQL dialect must agree on.
var commonSQLCases = []sanitizeCase{
	{"string and number", "SELECT * FROM t WHERE a = 'x' AND b = 42", "SELECT * FROM t WHERE a = ? AND b = ?", false},
	{"doubled quote", "SELECT 'it''s'", "SELECT ?", false},
	{"decimal exponent", "SELECT 1.5, .5, 2., 1e10, 1.2E-3", "SELECT ?, ?, ?, ?, ?", false},
	{"hex binary octal", "SELECT 0xFF, 0XdeadBEEF, 0b1010, 0o17", "SELECT ?, ?, ?, ?", false},
	{"digit separators", "SELECT 1_000_000", "SELECT ?", false},
	{"number glued to word", "SELECT 123abc, 10L", "SELECT ?, ?", false},
	{"negative after operator", "SELECT * FROM t WHERE x = -1 AND y > +2.5", "SELECT * FROM t WHERE x = ? AND y > ?", false},
	{"minus after identifier is an operator", "SELECT a-1, b - 2, (c)-3", "SELECT a-?, b - ?, (c)-?", false},
	{"identifiers with digits", "SELECT t1.col2, covid19, r2d2 FROM t1 JOIN s3.x4 ON t1.id = x4.id", "SELECT t1.col2, covid19, r2d2 FROM t1 JOIN s3.x4 ON t1.id = x4.id", false},
	{"booleans and null as values", "UPDATE t SET a = TRUE, b = false, c = NULL WHERE d = 1", "UPDATE t SET a = ?, b = ?, c = ? WHERE d = ?", false},
	{"IS NULL and NOT NULL stay", "SELECT * FROM t WHERE a IS NULL AND b IS NOT NULL AND c IS TRUE AND d IS NOT FALSE", "SELECT * FROM t WHERE a IS NULL AND b IS NOT NULL AND c IS TRUE AND d IS NOT FALSE", false},
	{"NOT NULL constraint", "CREATE TABLE t (a INT NOT NULL DEFAULT NULL)", "CREATE TABLE t (a INT NOT NULL DEFAULT ?)", false},
	{"typed date time interval", "SELECT * FROM t WHERE d > DATE '2024-01-01' AND ts < TIMESTAMP '2024-01-01 10:00:00' - INTERVAL '1 day'", "SELECT * FROM t WHERE d > DATE ? AND ts < TIMESTAMP ? - INTERVAL ?", false},
	{"interval number", "SELECT NOW() - INTERVAL 1 DAY", "SELECT NOW() - INTERVAL ? DAY", false},
	{"odbc escape", "SELECT { d '2024-01-01' }, {fn UCASE('x')}", "SELECT { d ? }, {fn UCASE(?)}", false},
	{"national, hex and bit strings", "SELECT N'x', X'DEADBEEF', B'0101', x'4d', n'y'", "SELECT ?, ?, ?, ?, ?", false},
	{"unicode string", `SELECT U&'d\0061t\+000061'`, "SELECT ?", false},
	{"question and dollar markers", "SELECT * FROM t WHERE a = ? AND b = $1 AND c = $12", "SELECT * FROM t WHERE a = ? AND b = $1 AND c = $12", false},
	{"named markers", "SELECT * FROM t WHERE a = :name AND b = @p1 AND c = @name AND d = ?2", "SELECT * FROM t WHERE a = :name AND b = @p1 AND c = @name AND d = ?2", false},
	{"python markers", "INSERT INTO t (a, b) VALUES (%s, %(user_id)s)", "INSERT INTO t (a, b) VALUES (%s, %(user_id)s)", false},
	{"modulo is not a marker", "SELECT a % 2, b %(c) FROM t", "SELECT a % ?, b %(c) FROM t", false},
	{"line comment", "SELECT a -- secret note\nFROM t", "SELECT a \nFROM t", false},
	{"block comment", "SELECT a /* secret */ FROM t", "SELECT a  FROM t", false},
	{"comment between tokens keeps them apart", "SELECT a/*x*/FROM t", "SELECT a FROM t", false},
	{"comment between operators keeps them apart", "SELECT 1-/**/-1", "SELECT ?- ?", false},
	{"optimizer hint removed", "SELECT /*+ INDEX(t idx_secret) */ * FROM t", "SELECT  * FROM t", false},
	{"unterminated string", "SELECT * FROM t WHERE a = 'abc", "SELECT * FROM t WHERE a = ?", true},
	{"unterminated block comment", "SELECT a /* secret", "SELECT a ?", true},
	{"NUL byte", "SELECT a\x00 FROM t WHERE b = 'x'", "SELECT a?", true},
	{"control byte", "SELECT a FROM t\x01 secret", "SELECT a FROM t?", true},
	{"invalid utf8 identifier", "SELECT caf\xe9 FROM t", "SELECT caf\uFFFD FROM t", false},
	{"invalid utf8 in literal", "SELECT 'caf\xe9'", "SELECT ?", false},
	{"unicode identifier", "SELECT größe FROM straße WHERE x = 'ü'", "SELECT größe FROM straße WHERE x = ?", false},
	{"credential after IDENTIFIED BY", "CREATE USER app IDENTIFIED BY hunter2", "CREATE USER app IDENTIFIED BY ?", false},
	{"credential after IDENTIFIED WITH … BY", "ALTER USER app IDENTIFIED WITH caching_sha2_password BY 's3cret'", "ALTER USER app IDENTIFIED WITH caching_sha2_password BY ?", false},
	{"CONNECT masks its arguments", "CONNECT scott/tiger@orcl", "CONNECT ?", false},
	{"CONNECT BY is not a login", "SELECT id FROM t START WITH id = 1 CONNECT BY PRIOR id = parent", "SELECT id FROM t START WITH id = ? CONNECT BY PRIOR id = parent", false},
	{"casts keep their type", "SELECT CAST('5' AS INT), CAST(a AS VARCHAR(10))", "SELECT CAST(? AS INT), CAST(a AS VARCHAR(?))", false},
	{"LIMIT OFFSET", "SELECT * FROM t LIMIT 10 OFFSET 20", "SELECT * FROM t LIMIT ? OFFSET ?", false},
	{"keyword before signed number", "SELECT -1, +.5 FROM t WHERE a BETWEEN -2 AND -1", "SELECT ?, ? FROM t WHERE a BETWEEN ? AND ?", false},
	{"nothing to change", "SELECT id, name FROM users WHERE id = $1", "SELECT id, name FROM users WHERE id = $1", false},
	{"empty", "", "", false},
}

func TestCommonSQL(t *testing.T) {
	for _, d := range []Dialect{Generic, PostgreSQL, MySQL, SQLite, MSSQL, Oracle, ClickHouse} {
		t.Run(d.String(), func(t *testing.T) {
			runCases(t, d, Options{}, commonSQLCases)
		})
	}
}

func TestGeneric(t *testing.T) {
	runCases(t, Generic, Options{}, []sanitizeCase{
		{"double quotes are literals", `SELECT "secret" FROM t`, "SELECT ? FROM t", false},
		{"backticks are identifiers", "SELECT `col` FROM `t`", "SELECT `col` FROM `t`", false},
		{"backslash before quote is ambiguous", `SELECT 'a\' , 'secret'`, "SELECT ?", true},
		{"even backslash run is not ambiguous", `SELECT 'a\\', 'b'`, "SELECT ?, ?", false},
		{"hash comment", "SELECT 1 # secret\nFROM t", "SELECT ? \nFROM t", false},
		{"nested comment", "SELECT /* a /* b */ secret */ 1", "SELECT  ?", false},
		{"E string", `SELECT E'a\\b', E'it''s'`, "SELECT ?, ?", false},
		{"E string with escaped quote is ambiguous", `SELECT E'it\'s', 'secret'`, "SELECT ?", true},
		{"dollar quoted", "SELECT $$it's$$, $fn$ body $$ $fn$", "SELECT ?, ?", false},
		{"unterminated dollar quote", "SELECT $tag$ secret", "SELECT ?", true},
		{"q quote", "SELECT q'[abc]' FROM dual", "SELECT ? FROM dual", false},
		{"q quote with a quote inside is ambiguous", "SELECT q'[it's]' FROM dual", "SELECT ?", true},
		{"numeric colon marker is masked", "SELECT * FROM t WHERE a = :1", "SELECT * FROM t WHERE a = :?", false},
		{"json document is fully masked", `{"query": {"match": {"title": "secret"}}}`, "{?: {?: {?: ?}}}", false},
	})
}

func TestPostgreSQL(t *testing.T) {
	runCases(t, PostgreSQL, Options{}, []sanitizeCase{
		{"quoted identifiers stay", `SELECT "User"."id" FROM "User" WHERE "email" = 'a@b.c'`, `SELECT "User"."id" FROM "User" WHERE "email" = ?`, false},
		{"standard strings end at the quote", `SELECT 'C:\', 'x'`, "SELECT ?, ?", false},
		{"E string escapes", `SELECT E'a\'b', e'\\'`, "SELECT ?, ?", false},
		{"dollar quoted function body", "CREATE FUNCTION f() RETURNS int AS $body$ SELECT 'secret' $body$ LANGUAGE sql", "CREATE FUNCTION f() RETURNS int AS ? LANGUAGE sql", false},
		{"empty dollar tag", "SELECT $$secret$$", "SELECT ?", false},
		{"unterminated dollar", "SELECT $$secret", "SELECT ?", true},
		{"casts", "SELECT '1'::int, x::text FROM t", "SELECT ?::int, x::text FROM t", false},
		{"array slices", "SELECT arr[1:2], arr[3] FROM t", "SELECT arr[?:?], arr[?] FROM t", false},
		{"json operators", "SELECT data->>'key', data #> '{a,b}', data ? 'k' FROM t", "SELECT data->>?, data #> ?, data ? ? FROM t", false},
		{"hash is an operator", "SELECT 5 # 3", "SELECT ? # ?", false},
		{"nested comments", "SELECT /* outer /* inner */ secret */ 1", "SELECT  ?", false},
		{"unterminated nested comment", "SELECT /* a /* b */ secret", "SELECT ?", true},
		{"unterminated quoted identifier", `SELECT "secret`, "SELECT ?", true},
		{"bit and hex strings", "SELECT B'0101', X'1F'", "SELECT ?, ?", false},
		{"positional markers", "SELECT * FROM t WHERE a = $1 AND b = ANY($2)", "SELECT * FROM t WHERE a = $1 AND b = ANY($2)", false},
		{"interval string", "SELECT now() - interval '7 days'", "SELECT now() - interval ?", false},
	})
}

func TestMySQL(t *testing.T) {
	runCases(t, MySQL, Options{}, []sanitizeCase{
		{"double quoted strings", `SELECT * FROM users WHERE name = "bob" AND pw = 'x\'y'`, "SELECT * FROM users WHERE name = ? AND pw = ?", false},
		{"backslash escapes", `SELECT 'a\\', "b\"c"`, "SELECT ?, ?", false},
		{"backtick identifiers", "SELECT `user id`, `a``b` FROM `db`.`t`", "SELECT `user id`, `a``b` FROM `db`.`t`", false},
		{"hash comment", "SELECT 1 # secret\n", "SELECT ? \n", false},
		{"dash comment needs a space", "SELECT 1--1", "SELECT ?-?", false},
		{"dash comment", "SELECT 1 -- secret", "SELECT ? ", false},
		{"charset introducer", "SELECT _utf8mb4'secret', _binary'x'", "SELECT _utf8mb4?, _binary?", false},
		{"hex and bit", "SELECT x'4D', b'01', 0x4D", "SELECT ?, ?, ?", false},
		{"user and system variables", "SET @v := 5; SELECT @@session.sql_mode, @v", "SET @v := ?; SELECT @@session.sql_mode, @v", false},
		{"executable comment removed", "SELECT /*!50000 SQL_NO_CACHE */ a FROM t", "SELECT  a FROM t", false},
		{"on duplicate key", "INSERT INTO t (a, b) VALUES (1, 'x') ON DUPLICATE KEY UPDATE b = VALUES(b)", "INSERT INTO t (a, b) VALUES (?, ?) ON DUPLICATE KEY UPDATE b = VALUES(b)", false},
		{"dollar in identifier", "SELECT a$b FROM t$1", "SELECT a$b FROM t$1", false},
	})
	runCases(t, MySQL, Options{MySQLANSIQuotes: true}, []sanitizeCase{
		{"ANSI_QUOTES identifiers", `SELECT "col" FROM "t" WHERE a = 'x'`, `SELECT "col" FROM "t" WHERE a = ?`, false},
	})
}

func TestSQLite(t *testing.T) {
	runCases(t, SQLite, Options{}, []sanitizeCase{
		{"identifier quoting", "SELECT [col], \"c2\", `c3` FROM [my table]", "SELECT [col], \"c2\", `c3` FROM [my table]", false},
		{"all marker styles", "SELECT * FROM t WHERE a = ?1 AND b = :b AND c = @c AND d = $d", "SELECT * FROM t WHERE a = ?1 AND b = :b AND c = @c AND d = $d", false},
		{"blob literal", "INSERT INTO t VALUES (X'00ff')", "INSERT INTO t VALUES (?)", false},
		{"backslash is ordinary", `SELECT 'a\', 'b'`, "SELECT ?, ?", false},
		{"unterminated bracket", "SELECT [secret", "SELECT ?", true},
	})
}

func TestMSSQL(t *testing.T) {
	runCases(t, MSSQL, Options{}, []sanitizeCase{
		{"brackets, temp tables, markers", "SELECT [User Name], #temp.id FROM #temp WHERE x = N'abc' AND y = @p1", "SELECT [User Name], #temp.id FROM #temp WHERE x = ? AND y = @p1", false},
		{"bracket escape", "SELECT [a]]b] FROM t", "SELECT [a]]b] FROM t", false},
		{"global temp table", "SELECT * FROM ##global", "SELECT * FROM ##global", false},
		{"top", "SELECT TOP 10 * FROM t", "SELECT TOP ? * FROM t", false},
		{"system variables", "SELECT @@ROWCOUNT, @@IDENTITY", "SELECT @@ROWCOUNT, @@IDENTITY", false},
		{"sp_executesql", "EXEC sp_executesql N'SELECT * FROM t WHERE id = @id', N'@id int', @id = 5", "EXEC sp_executesql ?, ?, @id = ?", false},
		{"nested comments", "SELECT /* a /* b */ c */ 1", "SELECT  ?", false},
	})
}

func TestOracle(t *testing.T) {
	runCases(t, Oracle, Options{}, []sanitizeCase{
		{"q quotes", "SELECT q'[it's]', Q'{a}', nq'<x>', q'!y!', q'(z)' FROM dual", "SELECT ?, ?, ?, ?, ? FROM dual", false},
		{"unterminated q quote", "SELECT q'[secret' FROM dual", "SELECT ?", true},
		{"bind variables", "SELECT * FROM t WHERE a = :1 AND b = :name", "SELECT * FROM t WHERE a = :1 AND b = :name", false},
		{"hash in identifiers", "SELECT a#b FROM sys.x$y", "SELECT a#b FROM sys.x$y", false},
		{"quoted password", `ALTER USER app IDENTIFIED BY "p@ss w0rd"`, "ALTER USER app IDENTIFIED BY ?", false},
		{"plain strings", "SELECT 'a''b' FROM dual", "SELECT ? FROM dual", false},
	})
}

func TestClickHouse(t *testing.T) {
	runCases(t, ClickHouse, Options{}, []sanitizeCase{
		{"backslash escapes", `SELECT 'a\'b', "col" FROM t`, `SELECT ?, "col" FROM t`, false},
		{"query parameters", "SELECT * FROM t WHERE id = {id:UInt32} AND d = {d:Date}", "SELECT * FROM t WHERE id = {id:UInt32} AND d = {d:Date}", false},
		{"tuple element access", "SELECT t.1, toDate('2024-01-01') FROM x", "SELECT t.?, toDate(?) FROM x", false},
		{"heredoc", "SELECT $doc$secret$doc$", "SELECT ?", false},
		{"hash comment", "SELECT 1 # secret", "SELECT ? ", false},
		{"format clause", "SELECT a FROM t SETTINGS max_threads = 8 FORMAT JSONEachRow", "SELECT a FROM t SETTINGS max_threads = ? FORMAT JSONEachRow", false},
	})
}

func TestMaxLength(t *testing.T) {
	runCases(t, PostgreSQL, Options{MaxLength: 24}, []sanitizeCase{
		{"cut after a word", "SELECT a FROM t WHERE x = 'secret'", "SELECT a FROM t WHERE x ?", true},
		{"cut inside a literal", "SELECT 'aaaaaaaaaaaaaaaaaaaaaaaaaaaa'", "SELECT ?", true},
		{"short query untouched", "SELECT 1", "SELECT ?", false},
	})
	// A cut that would fall inside a multi-byte rune moves back to its start.
	res := Sanitize("SELECT 日本語 FROM t WHERE a = 'x'", PostgreSQL, Options{MaxLength: 9})
	if res.Text != "SELECT ?" || !res.Partial {
		t.Errorf("rune boundary cut: got %q partial=%v", res.Text, res.Partial)
	}
	big := "SELECT '" + strings.Repeat("x", DefaultMaxLength) + "'"
	res = Sanitize(big, PostgreSQL, Options{})
	if res.Text != "SELECT ?" || !res.Partial {
		t.Errorf("default cap: got %.40q partial=%v", res.Text, res.Partial)
	}
}

func TestSQLCommenter(t *testing.T) {
	runCases(t, PostgreSQL, Options{KeepSQLCommenter: true}, []sanitizeCase{
		{"values sanitized", "SELECT * FROM t /*controller='users',traceparent='00-4bf92f-00f067-01'*/", "SELECT * FROM t /*controller='?',traceparent='?'*/", false},
		{"escaped quote in value", `SELECT 1 /*route='/a\'b',db_driver='pg%3A1'*/`, "SELECT ? /*route='?',db_driver='?'*/", false},
		{"other comments still removed", "SELECT 1 /* plain secret */", "SELECT ? ", false},
		{"malformed commenter removed", "SELECT 1 /*a='x' secret*/", "SELECT ? ", false},
	})
	runCases(t, PostgreSQL, Options{}, []sanitizeCase{
		{"commenter removed by default", "SELECT 1 /*controller='users'*/", "SELECT ? ", false},
	})
}

func TestCollapseLists(t *testing.T) {
	runCases(t, PostgreSQL, Options{CollapseLists: true}, []sanitizeCase{
		{"IN literals", "SELECT * FROM t WHERE id IN (1, 2, 3, 'x')", "SELECT * FROM t WHERE id IN (?)", false},
		{"IN question marks", "SELECT * FROM t WHERE id IN (?, ?, ?)", "SELECT * FROM t WHERE id IN (?)", false},
		{"NOT IN", "SELECT * FROM t WHERE id NOT IN (1,2)", "SELECT * FROM t WHERE id NOT IN (?)", false},
		{"numbered markers stay", "SELECT * FROM t WHERE id IN ($1, $2)", "SELECT * FROM t WHERE id IN ($1, $2)", false},
		{"subquery stays", "SELECT * FROM t WHERE id IN (SELECT id FROM u WHERE x = 1)", "SELECT * FROM t WHERE id IN (SELECT id FROM u WHERE x = ?)", false},
		{"tuples stay", "SELECT * FROM t WHERE (a, b) IN ((1, 2), (3, 4))", "SELECT * FROM t WHERE (a, b) IN ((?, ?), (?, ?))", false},
		{"VALUES rows", "INSERT INTO t (a, b) VALUES (1, 'a'), (2, 'b'),\n (3, 'c')", "INSERT INTO t (a, b) VALUES (?)", false},
		{"VALUES then clause", "INSERT INTO t VALUES (1), (2) ON CONFLICT DO NOTHING", "INSERT INTO t VALUES (?) ON CONFLICT DO NOTHING", false},
		{"VALUES with expressions stay", "INSERT INTO t VALUES (1, now()), (2, now())", "INSERT INTO t VALUES (?, now()), (?, now())", false},
		{"VALUES later row with expression", "INSERT INTO t VALUES (1, 2), (3, now())", "INSERT INTO t VALUES (?), (?, now())", false},
		{"comment inside list", "SELECT * FROM t WHERE id IN (1, /* x */ 2)", "SELECT * FROM t WHERE id IN (?)", false},
		{"unclosed list", "SELECT * FROM t WHERE id IN (1, 2", "SELECT * FROM t WHERE id IN (?, ?", false},
		{"empty list", "SELECT * FROM t WHERE id IN ()", "SELECT * FROM t WHERE id IN ()", false},
	})
}

func TestSummary(t *testing.T) {
	cases := []struct {
		d         Dialect
		in        string
		summary   string
		operation string
	}{
		{PostgreSQL, "SELECT * FROM t WHERE name = 'secret'", "SELECT t", "SELECT"},
		{PostgreSQL, "SELECT EXTRACT(YEAR FROM created_at) FROM orders", "SELECT orders", "SELECT"},
		{PostgreSQL, "DELETE FROM t WHERE EXTRACT(YEAR FROM d) = 1", "DELETE t", "DELETE"},
		{PostgreSQL, "WITH x AS (SELECT * FROM a) SELECT * FROM x", "SELECT a SELECT x", "SELECT"},
		{PostgreSQL, `SELECT * FROM "Users" u JOIN "public"."Orders" o ON u.id = o.uid`, `SELECT "Users" "public"."Orders"`, "SELECT"},
		{PostgreSQL, "UPDATE ONLY accounts SET balance = 0 FROM audit WHERE audit.id = accounts.id", "UPDATE accounts audit", "UPDATE"},
		{PostgreSQL, "SELECT 1; SELECT 2", "SELECT SELECT", "BATCH SELECT"},
		{PostgreSQL, "INSERT INTO a VALUES (1); UPDATE b SET x = 1", "INSERT a UPDATE b", "BATCH"},
		{PostgreSQL, "SELECT * FROM a UNION ALL SELECT * FROM b", "SELECT a b", "SELECT"},
		{PostgreSQL, "SELECT * FROM t FOR UPDATE", "SELECT t", "SELECT"},
		{PostgreSQL, "BEGIN", "BEGIN", "BEGIN"},
		{PostgreSQL, "TRUNCATE TABLE logs", "TRUNCATE TABLE logs", "TRUNCATE"},
		{PostgreSQL, "CREATE OR REPLACE MATERIALIZED VIEW IF NOT EXISTS s.v AS SELECT 1", "CREATE VIEW s.v", "CREATE"},
		{PostgreSQL, "CALL refresh_all()", "CALL refresh_all", "CALL"},
		{ClickHouse, "INSERT INTO TABLE events FORMAT JSONEachRow", "INSERT events", "INSERT"},
		{MySQL, "INSERT IGNORE INTO `t` (a) VALUES (1)", "INSERT `t`", "INSERT"},
		{MySQL, "SELECT * FROM t WHERE a = 'x' AND b IN (SELECT c FROM u)", "SELECT t SELECT u", "SELECT"},
		{MSSQL, "SELECT * FROM dbo.t WITH (NOLOCK) WHERE id = @id", "SELECT dbo.t", "SELECT"},
		{Generic, "SELECT * FROM 'secret'", "SELECT", "SELECT"},
		// A dotted name that does not fit is dropped whole, not cut.
		{PostgreSQL, "SELECT * FROM a JOIN s." + strings.Repeat("x", 250), "SELECT a", "SELECT"},
	}
	for _, tc := range cases {
		res := Sanitize(tc.in, tc.d, Options{Summarize: true})
		if res.Summary != tc.summary || res.Operation != tc.operation {
			t.Errorf("%s %q: summary %q op %q, want %q %q", tc.d, tc.in, res.Summary, res.Operation, tc.summary, tc.operation)
		}
	}
	if res := Sanitize("SELECT * FROM t", PostgreSQL, Options{}); res.Summary != "" || res.Operation != "" {
		t.Errorf("summary computed without Summarize: %+v", res)
	}
}

func TestDialectForSystem(t *testing.T) {
	cases := map[string]Dialect{
		"postgresql": PostgreSQL, "mysql": MySQL, "mariadb": MySQL, "sqlite": SQLite,
		"mssql": MSSQL, "microsoft.sql_server": MSSQL, "oracle": Oracle, "oracle.db": Oracle,
		"clickhouse": ClickHouse, "other_sql": Generic, "redis": Redis, "mongodb": MongoDB,
		"elasticsearch": JSON, "": Generic, "somethingnew": Generic, "PostgreSQL": PostgreSQL,
	}
	for system, want := range cases {
		if got := DialectForSystem(system); got != want {
			t.Errorf("DialectForSystem(%q) = %s, want %s", system, got, want)
		}
	}
	for _, d := range Dialects() {
		got, ok := ParseDialect(d.String())
		if !ok || got != d {
			t.Errorf("ParseDialect(%q) = %s, %v", d.String(), got, ok)
		}
	}
	if _, ok := ParseDialect("nosql"); ok {
		t.Error("ParseDialect accepted an unknown name")
	}
}

func TestDigitsEnd(t *testing.T) {
	for _, s := range []string{"", "1", "123456789012345678", "1234567x", "12345678 9", "12:", "9/", "0123456789abcdef", "99999999\xff", "12345678901234567890,1"} {
		want := 0
		for want < len(s) && s[want] >= '0' && s[want] <= '9' {
			want++
		}
		if got := digitsEnd(s, 0); got != want {
			t.Errorf("digitsEnd(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestQuoteEnd(t *testing.T) {
	for _, s := range []string{"", "'", "abc'", "abcdefgh'", "abcdefghijklmnopqrstuvwxyz0123456789'x'", "no quote here at all, not one", "\xff\xfe'\x00", strings.Repeat("a", 40) + "'"} {
		if got, want := quoteEnd(s, 0), strings.IndexByte(s, '\''); got != want {
			t.Errorf("quoteEnd(%q) = %d, want %d", s, got, want)
		}
	}
}
