package sanitize

import "testing"

// Rows carried after the statement, in a format of their own, are data.
var inlineRowsCases = []sanitizeCase{
	{"clickhouse JSONEachRow", `INSERT INTO users FORMAT JSONEachRow {"name":"jane doe","email":"jane@example.com"}`,
		"INSERT INTO users FORMAT JSONEachRow ?", false},
	{"clickhouse JSONEachRow rows on their own lines", "INSERT INTO users (name, email) FORMAT JSONEachRow\n{\"name\":\"jane\"}\n{\"name\":\"john\"}\n",
		"INSERT INTO users (name, email) FORMAT JSONEachRow\n?", false},
	{"clickhouse CSV", "INSERT INTO users FORMAT CSV\njane,doe,\"1 Main St\"\n", "INSERT INTO users FORMAT CSV\n?", false},
	{"clickhouse TSV with bare words", "INSERT INTO users FORMAT TSV\njane\tdoe\tsecret", "INSERT INTO users FORMAT TSV\n?", false},
	{"clickhouse TabSeparatedWithNames", "INSERT INTO users FORMAT TabSeparatedWithNames\nname\temail\njane\tjane@example.com",
		"INSERT INTO users FORMAT TabSeparatedWithNames\n?", false},
	{"clickhouse Values format", "INSERT INTO users (id, name) FORMAT Values (1, 'jane'), (2, 'john')",
		"INSERT INTO users (id, name) FORMAT Values ?", false},
	{"clickhouse format named Null", "INSERT INTO users FORMAT Null jane", "INSERT INTO users FORMAT ? ?", false},
	{"clickhouse JSONCompactEachRow after settings", `INSERT INTO users SETTINGS async_insert=1 FORMAT JSONCompactEachRow ["jane", 42]`,
		"INSERT INTO users SETTINGS async_insert=? FORMAT JSONCompactEachRow ?", false},
	{"clickhouse INSERT SELECT from input()", "INSERT INTO users SELECT lower(name) FROM input('name String') FORMAT CSV jane",
		"INSERT INTO users SELECT lower(name) FROM input(?) FORMAT CSV ?", false},
	{"clickhouse rows glued to the format name", `INSERT INTO users FORMAT JSONEachRow{"name":"jane"}`, "INSERT INTO users FORMAT JSONEachRow?", false},
	{"clickhouse binary rows", "INSERT INTO users FORMAT RowBinary \x04jane\x00\x01", "INSERT INTO users FORMAT RowBinary ?", false},
	{"lower case", "insert into users format csv\njane", "insert into users format csv\n?", false},
	{"format without rows", "INSERT INTO users FORMAT CSV", "INSERT INTO users FORMAT CSV", false},
	{"format column in parentheses stays", "INSERT INTO t (format, b) VALUES ('csv', 1)", "INSERT INTO t (format, b) VALUES (?, ?)", false},
	{"select output format stays", "SELECT name FROM users WHERE id = 1 FORMAT JSON", "SELECT name FROM users WHERE id = ? FORMAT JSON", false},
	{"postgresql copy from stdin", "COPY users (name, email) FROM STDIN;\njane\tjane@example.com\njohn\t\\N\n\\.\nSELECT 1",
		"COPY users (name, email) FROM STDIN;\n?\n\\.\nSELECT ?", false},
	{"postgresql copy csv with options, no end marker", "COPY users FROM stdin WITH (FORMAT csv, DELIMITER ',')\njane,secret",
		"COPY users FROM stdin WITH (FORMAT csv, DELIMITER ?)\n?", false},
	{"psql \\copy", "\\copy users from stdin\njane\tdoe\n\\.", "\\copy users from stdin\n?\n\\.", false},
	{"copy with CRLF lines", "COPY users FROM STDIN;\r\njane\tdoe\r\n\\.\r\n", "COPY users FROM STDIN;\r\n?\n\\.\r\n", false},
	{"copy from a file is a plain statement", "COPY users FROM '/home/jane/users.csv' WITH (FORMAT csv)",
		"COPY users FROM ? WITH (FORMAT csv)", false},
	{"copy to stdout has no rows", "COPY (SELECT * FROM users WHERE id = 7) TO STDOUT", "COPY (SELECT * FROM users WHERE id = ?) TO STDOUT", false},
	{"mysql load data literals", `LOAD DATA LOCAL INFILE '/home/jane/export.csv' INTO TABLE t FIELDS TERMINATED BY ',' ENCLOSED BY '"' IGNORE 1 LINES (a, @b) SET c = @b * 2`,
		"LOAD DATA LOCAL INFILE ? INTO TABLE t FIELDS TERMINATED BY ? ENCLOSED BY ? IGNORE ? LINES (a, @b) SET c = @b * ?", false},
	{"sql*loader BEGINDATA", "LOAD DATA INFILE * INTO TABLE emp FIELDS TERMINATED BY ',' (name, ssn) BEGINDATA\njane,123-45-6789\n",
		"LOAD DATA INFILE * INTO TABLE emp FIELDS TERMINATED BY ? (name, ssn) BEGINDATA\n?", false},
	{"second statement", "SELECT 1; INSERT INTO users FORMAT CSV jane", "SELECT ?; INSERT INTO users FORMAT CSV ?", false},
}

func TestInlineRows(t *testing.T) {
	for _, d := range []Dialect{Generic, ClickHouse, PostgreSQL, MySQL, SQLite, MSSQL, Oracle} {
		t.Run(d.String(), func(t *testing.T) {
			for _, tc := range inlineRowsCases {
				runCases(t, d, Options{}, []sanitizeCase{tc})
			}
		})
	}
}

// The rows are data whatever the options; with a summary, the statement's
// operation and table are still known.
func TestInlineRowsWithOptions(t *testing.T) {
	res := Sanitize(`INSERT INTO users FORMAT JSONEachRow {"name":"jane"}`, ClickHouse,
		Options{CollapseLists: true, KeepSQLCommenter: true, Summarize: true})
	if res.Text != "INSERT INTO users FORMAT JSONEachRow ?" || res.Operation != "INSERT" || res.Summary != "INSERT users" {
		t.Fatalf("%+v", res)
	}
	res = Sanitize("INSERT INTO users FORMAT CSV\njane", ClickHouse, Options{MaxLength: 30})
	if res.Text != "INSERT INTO users FORMAT CSV\n?" {
		t.Fatalf("rows past the length cap: %+v", res)
	}
}
