package main

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/docketlabs/docket/processors/sqlsanitizerprocessor/sanitize"
)

// Query is one corpus entry together with what the oracle checks in the
// sanitized output.
type Query struct {
	System string // db.system.name as an instrumentation would send it
	Kind   string // generator that produced it
	Text   string
	// Literals are tokens placed inside literals; none may reach the output.
	Literals []string
	// Comments are tokens placed inside comments; none may reach the output.
	Comments []string
	// Identifiers are names with digits that must survive unchanged.
	Identifiers []string
	// Markers are parameter markers ($1, :name, @p0, %s …) that must
	// survive unchanged.
	Markers []string
}

// gen builds queries; all randomness comes from one seeded source, so the
// corpus is identical for identical seeds.
type gen struct {
	r *rand.Rand
	q Query
}

// Corpus returns n queries generated from seed.
func Corpus(seed uint64, n int) []Query {
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x5eed))}
	kinds := []struct {
		weight int
		build  func(*gen)
	}{
		{14, (*gen).ormPostgres},
		{8, (*gen).ormPostgresParams},
		{10, (*gen).ormMySQL},
		{8, (*gen).efSQLServer},
		{5, (*gen).oracle},
		{9, (*gen).clickhouse},
		{5, (*gen).sqlite},
		{10, (*gen).analytics},
		{10, (*gen).bulkInsert},
		{9, (*gen).longIN},
		{7, (*gen).updateWithComments},
		{5, (*gen).otherSQL},
	}
	total := 0
	for _, k := range kinds {
		total += k.weight
	}
	out := make([]Query, 0, n)
	for len(out) < n {
		pick := g.r.IntN(total)
		for _, k := range kinds {
			if pick < k.weight {
				g.q = Query{}
				k.build(g)
				out = append(out, g.q)
				break
			}
			pick -= k.weight
		}
	}
	return out
}

// DialectOf is how the processor picks the dialect for a query.
func DialectOf(q Query) sanitize.Dialect { return sanitize.DialectForSystem(q.System) }

const alnum = "abcdefghijklmnopqrstuvwxyz0123456789"

// token is a unique, searchable payload word.
func (g *gen) token() string {
	b := []byte("zq")
	for range 10 {
		b = append(b, alnum[g.r.IntN(len(alnum))])
	}
	return string(b)
}

// Escape rules of a string literal in the dialect being generated.
type esc uint8

const (
	escStd       esc = iota // standard SQL: only '' escapes (PostgreSQL, SQL Server, SQLite, Oracle)
	escBackslash            // backslash escapes too (MySQL, ClickHouse)
	escPortable             // no backslash before a quote: valid under either rule (no system given)
)

// str returns the body of a string literal (already escaped for the
// dialect's quote character q and escape rules) and records its tokens.
func (g *gen) str(e esc, q byte) string {
	a, b := g.token(), g.token()
	qq := string(q) + string(q)
	var body string
	// Shapes weighted roughly as application data looks: mostly plain
	// words, names and e-mail addresses; escapes and paths are rarer.
	shape := 8 // plain token
	if p := g.r.IntN(100); p < 60 {
		shape = []int{0, 1, 4, 8}[p%4]
	} else {
		shape = []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 2}[p%10]
	}
	switch shape {
	case 0:
		body = a + "@example.com"
	case 1:
		body = "O" + qq + a // O''Brien-style doubled quote
	case 2:
		if e == escBackslash {
			body = a + `\` + string(q) + "s " + b // backslash-escaped quote
		} else {
			body = a + qq + "s " + b
		}
	case 3:
		body = `{"name": "` + a + `", "id": ` + strconv.Itoa(g.r.IntN(1e6)) + `}`
		if q == '"' {
			body = strings.ReplaceAll(body, `"`, `""`)
		}
	case 4:
		body = "Zoë " + a + " — " + b
	case 5:
		if e == escBackslash {
			body = `C:\\Users\\` + a
		} else {
			body = `C:\Users\` + a + " " + b
		}
	case 6:
		body = a + " -- not a comment /* " + b + " */"
	case 7:
		// A Windows directory: in standard strings the literal ends with
		// a backslash, which is not an escape there.
		switch e {
		case escStd:
			body = `D:\shares\` + a + `\`
		case escBackslash:
			body = `D:\\shares\\` + a + `\\`
		default:
			body = `D:/shares/` + a + `/`
		}
	default:
		body = a
	}
	g.q.Literals = append(g.q.Literals, a)
	if strings.Contains(body, b) {
		g.q.Literals = append(g.q.Literals, b)
	}
	return body
}

func (g *gen) sq(e esc) string { return "'" + g.str(e, '\'') + "'" }

// num returns a numeric literal whose digits are recorded.
func (g *gen) num() string {
	n := strconv.FormatInt(1_000_000+g.r.Int64N(9_000_000_000), 10)
	g.q.Literals = append(g.q.Literals, n)
	switch g.r.IntN(4) {
	case 0:
		return n + "." + strconv.Itoa(10+g.r.IntN(90))
	case 1:
		return "-" + n
	}
	return n
}

// date returns a date (and with withTime a timestamp) literal body and
// records it.
func (g *gen) date(withTime bool) string {
	d := fmt.Sprintf("%04d-%02d-%02d", 2015+g.r.IntN(10), 1+g.r.IntN(12), 1+g.r.IntN(28))
	if withTime {
		d += fmt.Sprintf(" %02d:%02d:%02d.%06d", g.r.IntN(24), g.r.IntN(60), g.r.IntN(60), g.r.IntN(1e6))
	}
	g.q.Literals = append(g.q.Literals, d)
	return d
}

func (g *gen) ident(names ...string) {
	for _, n := range names {
		if strings.ContainsAny(n, "0123456789") {
			g.q.Identifiers = append(g.q.Identifiers, n)
		}
	}
}

func (g *gen) marker(m string) string {
	g.q.Markers = append(g.q.Markers, m)
	return m
}

func (g *gen) pick(s ...string) string { return s[g.r.IntN(len(s))] }

var (
	pgTables = []string{"users", "orders", "order_items", "covid19_cases", "invoices", "accounts", "sessions", "audit_log2"}
	pgCols   = []string{"id", "email", "name", "created_at", "status", "address_line2", "total_cents", "tenant_id", "sha256_digest"}
)

// ormPostgres: Django/Rails style queries with values inlined.
func (g *gen) ormPostgres() {
	g.q.System, g.q.Kind = "postgresql", "orm-postgres"
	t := pgTables[g.r.IntN(len(pgTables))]
	cols := make([]string, 0, 6)
	for range 3 + g.r.IntN(4) {
		c := pgCols[g.r.IntN(len(pgCols))]
		cols = append(cols, fmt.Sprintf(`"%s"."%s"`, t, c))
		g.ident(c)
	}
	g.ident(t)
	conds := []func() string{
		func() string { return fmt.Sprintf(`"%s"."email" = %s`, t, g.sq(escStd)) },
		func() string { return fmt.Sprintf(`"%s"."id" = %s`, t, g.num()) },
		func() string { return fmt.Sprintf(`"%s"."created_at" >= '%s'::timestamptz`, t, g.date(true)) },
		func() string { return fmt.Sprintf(`"%s"."status" IN (%s, %s)`, t, g.sq(escStd), g.sq(escStd)) },
		func() string {
			return fmt.Sprintf(`"%s"."tenant_id" = %s AND "%s"."deleted_at" IS NULL`, t, g.num(), t)
		},
		func() string {
			return fmt.Sprintf(`UPPER("%s"."name"::text) LIKE UPPER(%s)`, t, "'%"+g.str(escStd, '\'')+"%'")
		},
	}
	g.r.Shuffle(len(conds), func(i, j int) { conds[i], conds[j] = conds[j], conds[i] })
	where := make([]string, 1+g.r.IntN(4))
	for i := range where {
		where[i] = conds[i]()
	}
	g.q.Text = fmt.Sprintf(`SELECT %s FROM "%s" WHERE %s ORDER BY "%s"."id" DESC LIMIT %d`,
		strings.Join(cols, ", "), t, strings.Join(where, " AND "), t, 1+g.r.IntN(100))
}

// ormPostgresParams: prepared statements as pgx/psycopg log them.
func (g *gen) ormPostgresParams() {
	g.q.System, g.q.Kind = "postgresql", "orm-postgres-params"
	t := pgTables[g.r.IntN(len(pgTables))]
	g.ident(t)
	switch g.r.IntN(3) {
	case 0:
		g.q.Text = fmt.Sprintf("SELECT id, email, address_line2 FROM %s WHERE tenant_id = %s AND email = %s AND created_at > now() - interval '%d days'",
			t, g.marker("$1"), g.marker("$2"), 1+g.r.IntN(90))
		g.ident("address_line2")
	case 1:
		g.q.Text = fmt.Sprintf("INSERT INTO %s (tenant_id, email, payload) VALUES (%s, %s, %s) RETURNING id",
			t, g.marker("%(tenant_id)s"), g.marker("%(email)s"), g.marker("%s"))
	default:
		g.q.Text = fmt.Sprintf("UPDATE %s SET status = %s, updated_at = now() WHERE id = %s AND status <> %s",
			t, g.marker("$1"), g.marker("$2"), g.sq(escStd))
	}
}

// ormMySQL: ActiveRecord/GORM on MySQL with backticks and backslash escapes.
func (g *gen) ormMySQL() {
	g.q.System, g.q.Kind = g.pick("mysql", "mariadb"), "orm-mysql"
	t := pgTables[g.r.IntN(len(pgTables))]
	g.ident(t, "address_line2")
	dq := `"` + g.str(escBackslash, '"') + `"`
	g.q.Text = fmt.Sprintf("SELECT `%s`.`id`, `%s`.`address_line2` FROM `%s` WHERE `%s`.`email` = %s AND `%s`.`name` = %s AND `%s`.`total_cents` > %s AND `%s`.`flags` = x'%x' LIMIT %d, %d",
		t, t, t, t, g.sq(escBackslash), t, dq, t, g.num(), t, g.r.Uint32(), g.r.IntN(1000), 1+g.r.IntN(50))
	if g.r.IntN(3) == 0 {
		// go-sql-driver/mysql with interpolateParams writes []byte
		// arguments as _binary'…'.
		g.q.Text += " AND `" + t + "`.`token` = _binary" + g.sq(escBackslash)
	}
	if g.r.IntN(2) == 0 {
		tok := g.token()
		g.q.Comments = append(g.q.Comments, tok)
		g.q.Text += " # request " + tok
	}
}

// efSQLServer: Entity Framework style T-SQL.
func (g *gen) efSQLServer() {
	g.q.System, g.q.Kind = g.pick("microsoft.sql_server", "mssql"), "ef-sqlserver"
	g.ident("Address2")
	g.q.Text = fmt.Sprintf("SELECT TOP(%d) [u].[Id], [u].[Email], [u].[Address2] FROM [dbo].[Users] AS [u] WHERE [u].[Email] = N%s AND [u].[TenantId] = %s AND [u].[CreatedAt] > %s AND [u].[Status] IN (%s, %s) ORDER BY [u].[Id]",
		1+g.r.IntN(100), g.sq(escStd), g.marker("@p0"), "'"+g.date(true)+"'", g.sq(escStd), g.marker("@p1"))
}

// oracle: JDBC/OCI style queries; q'[…]' exists so that apostrophes need no
// doubling, and account DDL carries passwords as bare or quoted words.
func (g *gen) oracle() {
	g.q.System, g.q.Kind = g.pick("oracle", "oracle.db"), "oracle"
	if g.r.IntN(5) == 0 {
		pw := g.token()
		g.q.Literals = append(g.q.Literals, pw)
		if g.r.IntN(2) == 0 {
			pw = `"` + pw + `"`
		}
		g.q.Text = fmt.Sprintf("ALTER USER app_user2 IDENTIFIED BY %s ACCOUNT UNLOCK", pw)
		g.ident("app_user2")
		return
	}
	g.ident("ORDERS2")
	note := g.pick("it's ", "O'Brien's ", "can't ") + g.token()
	g.q.Literals = append(g.q.Literals, note[len(note)-12:])
	g.q.Text = fmt.Sprintf("SELECT o.id, o.note FROM ORDERS2 o WHERE o.customer_id = %s AND o.note = q'[%s]' AND o.ref = %s AND o.created > TO_DATE('%s', 'YYYY-MM-DD HH24:MI:SS.FF') AND ROWNUM <= %d",
		g.marker(":1"), note, g.marker(":ref"), g.date(true), 1+g.r.IntN(50))
}

// clickhouse: analytics queries over event tables.
func (g *gen) clickhouse() {
	g.q.System, g.q.Kind = "clickhouse", "clickhouse"
	g.ident("events_v2", "p95")
	g.q.Text = fmt.Sprintf("SELECT toStartOfHour(ts) AS h, count() AS n, quantile(0.95)(duration_ms) AS p95 FROM events_v2 WHERE tenant = %s AND ts >= toDateTime('%s') AND user_agent LIKE %s AND status_code IN (%s, %s) GROUP BY h ORDER BY h SETTINGS max_threads = %d",
		g.sq(escBackslash), g.date(false), "'%"+g.str(escBackslash, '\'')+"%'", g.num(), g.num(), 1+g.r.IntN(16))
}

// sqlite: mobile/desktop app queries.
func (g *gen) sqlite() {
	g.q.System, g.q.Kind = "sqlite", "sqlite"
	g.ident("kv2")
	g.q.Text = fmt.Sprintf("INSERT OR REPLACE INTO kv2 (k, v, blob, updated) VALUES (%s, %s, X'%x', %s)",
		g.marker("?1"), g.sq(escStd), g.r.Uint64(), g.num())
}

// analytics: hand-written reporting SQL.
func (g *gen) analytics() {
	g.q.System, g.q.Kind = g.pick("postgresql", "postgresql", "other_sql"), "analytics"
	e := escStd
	if g.q.System == "other_sql" {
		e = escPortable
	}
	g.ident("covid19_cases", "q1", "t2")
	g.q.Text = fmt.Sprintf(`WITH q1 AS (
  SELECT region, date_trunc('week', reported_at) AS wk, SUM(cases) AS total
  FROM covid19_cases
  WHERE reported_at BETWEEN DATE '%s' AND DATE '%s' + INTERVAL '7 days'
    AND region <> %s
  GROUP BY 1, 2
)
SELECT t2.region, t2.wk, t2.total,
       CASE WHEN t2.total > %s THEN 'high' WHEN t2.total > %s THEN 'mid' ELSE 'low' END AS band,
       RANK() OVER (PARTITION BY t2.wk ORDER BY t2.total DESC) AS rnk
FROM q1 t2
WHERE t2.total >= %s -- threshold %s
ORDER BY t2.wk, rnk`,
		g.date(false), g.date(false), g.sq(e), g.num(), g.num(), g.num(), g.commentToken())
}

func (g *gen) commentToken() string {
	t := g.token()
	g.q.Comments = append(g.q.Comments, t)
	return t
}

// bulkInsert: multi-row INSERT … VALUES.
func (g *gen) bulkInsert() {
	sys := g.pick("postgresql", "mysql", "clickhouse", "sqlite")
	g.q.System, g.q.Kind = sys, "bulk-insert"
	e := escStd
	if sys == "mysql" || sys == "clickhouse" {
		e = escBackslash
	}
	rows := 20 + g.r.IntN(280)
	var b strings.Builder
	b.WriteString("INSERT INTO audit_log2 (tenant_id, actor, action, amount, at) VALUES ")
	g.ident("audit_log2")
	for i := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "(%s, %s, '%s', %s, '%s')", g.num(), g.sq(e), g.pick("login", "logout", "purchase"), g.num(), g.date(true))
	}
	g.q.Text = b.String()
}

// longIN: large IN lists of ids or strings.
func (g *gen) longIN() {
	sys := g.pick("postgresql", "mysql", "microsoft.sql_server", "other_sql")
	g.q.System, g.q.Kind = sys, "long-in"
	n := 50 + g.r.IntN(950)
	parts := make([]string, n)
	strs := g.r.IntN(3) == 0
	e := escStd
	switch sys {
	case "mysql":
		e = escBackslash
	case "other_sql":
		e = escPortable
	}
	for i := range parts {
		if strs {
			parts[i] = g.sq(e)
		} else {
			parts[i] = g.num()
		}
	}
	g.ident("order_items", "sku2")
	g.q.Text = "SELECT id, sku2, qty FROM order_items WHERE order_id IN (" + strings.Join(parts, ", ") + ") AND qty > 0"
}

// updateWithComments: sqlcommenter tags and free comments around DML.
func (g *gen) updateWithComments() {
	sys := g.pick("postgresql", "mysql", "other_sql")
	g.q.System, g.q.Kind = sys, "dml-comments"
	e := map[string]esc{"postgresql": escStd, "mysql": escBackslash, "other_sql": escPortable}[sys]
	g.ident("address_line2")
	g.q.Text = fmt.Sprintf("/* job %s */ UPDATE accounts SET address_line2 = %s, balance = balance - %s, verified = TRUE WHERE id = %s /*controller='billing',traceparent='00-%s-01'*/",
		g.commentToken(), g.sq(e), g.num(), g.num(), g.commentToken())
}

// otherSQL: statements sent without a known system.
func (g *gen) otherSQL() {
	g.q.System, g.q.Kind = "", "no-system"
	g.ident("t1", "col2")
	g.q.Text = fmt.Sprintf("DELETE FROM t1 WHERE t1.col2 = %s OR t1.col2 LIKE %s OR t1.id = %s",
		g.sq(escPortable), "'"+g.str(escPortable, '\'')+"%'", g.num())
}
