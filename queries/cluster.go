package queries

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Schema is how the migrations are rendered: for one node (Cluster empty,
// the files as they are), or for a ClickHouse cluster, where every
// statement runs ON CLUSTER.
//
// On a cluster each table X of the files becomes two: X_local, the data,
// a Replicated*MergeTree on every node (path by table UUID and shard), and
// X, a Distributed table over X_local sharded by the table's
// "-- cluster: shard by EXPR" marker (rand() for an append-only MergeTree
// without one; a ReplacingMergeTree must have one). Queries keep naming X: reads and
// inserts go through Distributed. Materialized views are created on the
// local tables and write to local tables, so an insert forwarded to a shard
// fires them there, and the versions of a row land on the shard of the row
// (row_versions is sharded by the same key). Only the ledger's own SQL
// files are rendered; a statement the renderer does not know is an error,
// not passed through.
type Schema struct {
	Cluster string
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Validate checks the cluster name (it is written into DDL).
func (s Schema) Validate() error {
	if s.Cluster != "" && !identifier.MatchString(s.Cluster) {
		return fmt.Errorf("queries: cluster name %q is not a plain identifier", s.Cluster)
	}
	return nil
}

// Migrations returns the migrations rendered for the schema.
func (s Schema) Migrations() ([]Migration, error) {
	ms, err := Migrations()
	if err != nil || s.Cluster == "" {
		return ms, err
	}
	r, err := s.renderer()
	if err != nil {
		return nil, err
	}
	for i := range ms {
		var out []Statement
		for j, stmt := range ms[i].Statements {
			rendered, err := r.render(stmt)
			if err != nil {
				return nil, fmt.Errorf("queries: migration %s statement %d: %w", ms[i].Name, j+1, err)
			}
			out = append(out, rendered...)
		}
		ms[i].Statements = out
	}
	return ms, nil
}

// Bootstrap returns the statements run before any migration: the
// migration record table, and the lease table (migration LeasesMigration),
// whose lease "schema" makes processes sharing a ledger migrate it one at a
// time (ledgerstore.MigrateTo). The lease table's statements are the
// migration's own, so running the migration afterwards changes nothing.
func (s Schema) Bootstrap() ([]Statement, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	stmts := splitStatements(MustGet("schema_migrations"))
	ms, err := Migrations()
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(ms, func(m Migration) bool { return m.Name == LeasesMigration })
	if i < 0 {
		return nil, fmt.Errorf("queries: no migration %s", LeasesMigration)
	}
	stmts = append(stmts, ms[i].Statements...)
	if s.Cluster == "" {
		return stmts, nil
	}
	r := &renderer{cluster: s.Cluster, sharded: map[string]bool{}}
	var out []Statement
	for _, stmt := range stmts {
		rendered, err := r.render(stmt)
		if err != nil {
			return nil, fmt.Errorf("queries: bootstrap: %w", err)
		}
		out = append(out, rendered...)
	}
	return out, nil
}

// LeasesMigration creates the lease table; Bootstrap runs it first.
const LeasesMigration = "0015_leases"

// renderer turns single-node statements into cluster ones; it learns the
// sharded tables from the CREATE TABLEs it renders, so it must see the
// migrations in order.
type renderer struct {
	cluster string
	sharded map[string]bool
}

func (s Schema) renderer() (*renderer, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &renderer{cluster: s.Cluster, sharded: map[string]bool{}}, nil
}

var (
	createTable  = regexp.MustCompile(`(?s)^CREATE TABLE IF NOT EXISTS (\w+)\s*(\(.*)$`)
	tableEngine  = regexp.MustCompile(`\bENGINE = (Replacing)?MergeTree(?:\(([^)]*)\))?`)
	createView   = regexp.MustCompile(`(?s)^CREATE (VIEW IF NOT EXISTS|OR REPLACE VIEW) (\w+) AS\b(.*)$`)
	createMV     = regexp.MustCompile(`(?s)^CREATE MATERIALIZED VIEW IF NOT EXISTS (\w+) TO (\w+) AS\b(.*)$`)
	mvSource     = regexp.MustCompile(`\bFROM (\w+)\s*$`)
	alterTable   = regexp.MustCompile(`(?s)^ALTER TABLE (\w+) (.*)$`)
	alterColumn  = regexp.MustCompile(`^(ADD|DROP|MODIFY|RENAME|COMMENT) COLUMN\b`)
	alterLocal   = regexp.MustCompile(`^((ADD|DROP|MATERIALIZE|CLEAR) (INDEX|PROJECTION)|MODIFY SETTING)\b`)
	systemMerges = regexp.MustCompile(`^SYSTEM (STOP|START) MERGES (\w+)$`)
	exchange     = regexp.MustCompile(`^EXCHANGE TABLES (\w+) AND (\w+)$`)
	dropTable    = regexp.MustCompile(`^DROP TABLE IF EXISTS (\w+)$`)
	insertInto   = regexp.MustCompile(`^INSERT INTO (\w+)\b`)
	guardTable   = regexp.MustCompile(`\btable = '(\w+)'`)
)

// replicatedPath keys a replicated table by its UUID, which ON CLUSTER
// gives every replica alike and which a RENAME or EXCHANGE does not change.
const replicatedPath = `'/clickhouse/tables/{uuid}/{shard}', '{replica}'`

func local(table string) string { return table + "_local" }

// replaced is where the table that table replaced is kept on a cluster.
func replaced(table string) string { return table + "_replaced_local" }

func (r *renderer) render(st Statement) ([]Statement, error) {
	sql := strings.TrimSpace(st.SQL)
	on := " ON CLUSTER " + r.cluster
	guard := guardTable.ReplaceAllStringFunc(st.OnlyIf, func(m string) string {
		t := guardTable.FindStringSubmatch(m)[1]
		if r.sharded[t] {
			return "table = '" + local(t) + "'"
		}
		return m
	})
	one := func(sqls ...string) []Statement {
		out := make([]Statement, len(sqls))
		for i, q := range sqls {
			out[i] = Statement{SQL: q, OnlyIf: guard}
		}
		return out
	}
	if m := createTable.FindStringSubmatch(sql); m != nil {
		table, body := m[1], m[2]
		engine := tableEngine.FindStringSubmatch(body)
		if engine == nil {
			return nil, fmt.Errorf("table %s: engine not (Replacing)MergeTree", table)
		}
		key := st.ShardBy
		if key == "" {
			// An append-only table may put a row on any shard; a
			// Replacing one must keep every copy of a key on one.
			if engine[1] != "" {
				return nil, fmt.Errorf("table %s replaces rows and has no %q marker", table, shardBy)
			}
			key = "rand()"
		}
		args := replicatedPath
		if engine[2] != "" {
			args += ", " + engine[2]
		}
		body = strings.Replace(body, engine[0], "ENGINE = Replicated"+engine[1]+"MergeTree("+args+")", 1)
		r.sharded[table] = true
		return one(
			"CREATE TABLE IF NOT EXISTS "+local(table)+on+"\n"+body,
			"CREATE TABLE IF NOT EXISTS "+table+on+" AS "+local(table)+
				"\nENGINE = Distributed("+r.cluster+", currentDatabase(), "+local(table)+", "+key+")",
		), nil
	}
	if m := createView.FindStringSubmatch(sql); m != nil {
		return one("CREATE " + m[1] + " " + m[2] + on + " AS" + m[3]), nil
	}
	if m := createMV.FindStringSubmatch(sql); m != nil {
		src := mvSource.FindStringSubmatch(m[3])
		if src == nil || !r.sharded[src[1]] || !r.sharded[m[2]] {
			return nil, fmt.Errorf("materialized view %s: want one sharded source table at the end and a sharded target", m[1])
		}
		selectSQL := strings.TrimSuffix(strings.TrimRight(m[3], " \n"), src[0]) + "FROM " + local(src[1])
		return one("CREATE MATERIALIZED VIEW IF NOT EXISTS " + m[1] + on + " TO " + local(m[2]) + " AS" + selectSQL), nil
	}
	if m := alterTable.FindStringSubmatch(sql); m != nil {
		table, change := m[1], m[2]
		if !r.sharded[table] {
			return nil, fmt.Errorf("ALTER of %s, not a table the migrations created", table)
		}
		switch {
		case alterLocal.MatchString(change):
			// Indexes, projections and settings belong to the data.
			return one("ALTER TABLE " + local(table) + on + " " + change), nil
		case alterColumn.MatchString(change):
			// The Distributed table needs the column too.
			return one("ALTER TABLE "+local(table)+on+" "+change, "ALTER TABLE "+table+on+" "+change), nil
		}
		return nil, fmt.Errorf("ALTER TABLE %s: only column, index, projection and setting changes are rendered", table)
	}
	if m := systemMerges.FindStringSubmatch(sql); m != nil && r.sharded[m[2]] {
		return one("SYSTEM " + m[1] + " MERGES" + on + " " + local(m[2])), nil
	}
	if m := exchange.FindStringSubmatch(sql); m != nil && r.sharded[m[1]] && r.sharded[m[2]] {
		// Not EXCHANGE: two processes migrating at once could both pass
		// the guard, and the second exchange would swap the old table
		// back. The second RENAME fails instead (its target exists),
		// loudly. The replaced data stays in <new>_replaced_local for the
		// operator (README). The Distributed tables keep their names, so
		// m[1] now reads the new data; they keep their column lists too.
		return one("RENAME TABLE " + local(m[1]) + " TO " + replaced(m[2]) + ", " + local(m[2]) + " TO " + local(m[1]) + on), nil
	}
	if m := dropTable.FindStringSubmatch(sql); m != nil && r.sharded[m[1]] {
		delete(r.sharded, m[1])
		return one("DROP TABLE IF EXISTS "+m[1]+on+" SYNC", "DROP TABLE IF EXISTS "+local(m[1])+on+" SYNC"), nil
	}
	if m := insertInto.FindStringSubmatch(sql); m != nil && r.sharded[m[1]] {
		// Through the Distributed table, from one node; the server
		// adapter makes it synchronous (distributed_foreground_insert).
		return one(sql), nil
	}
	return nil, fmt.Errorf("no cluster form for %.80q", sql)
}

var deleteFrom = regexp.MustCompile(`(?m)^DELETE FROM (\w+)$`)

// Statement returns the named query as the schema runs it. Reads and
// inserts name the Distributed tables and run as written; a lightweight
// DELETE cannot go through a Distributed table, so on a cluster it runs on
// every shard's local table, ON CLUSTER (its subqueries still read the
// Distributed tables, so a shard judges its rows by the whole ledger).
func (s Schema) Statement(name string) (string, error) {
	sql, err := Get(name)
	if err != nil || s.Cluster == "" {
		return sql, err
	}
	if err = s.Validate(); err != nil {
		return "", err
	}
	sharded, err := clusterTables()
	if err != nil {
		return "", err
	}
	var unknown string
	out := deleteFrom.ReplaceAllStringFunc(sql, func(stmt string) string {
		table := deleteFrom.FindStringSubmatch(stmt)[1]
		if !sharded[table] {
			unknown = table
		}
		return "DELETE FROM " + local(table) + " ON CLUSTER " + s.Cluster
	})
	if unknown != "" {
		return "", fmt.Errorf("queries: %s deletes from %s, not a table the migrations created", name, unknown)
	}
	return out, nil
}

// clusterTables are the tables the migrations leave on a cluster as a
// local table under a Distributed one, learnt by rendering them once (the
// set does not depend on the cluster's name).
var clusterTables = sync.OnceValues(func() (map[string]bool, error) {
	r := &renderer{cluster: "c", sharded: map[string]bool{}}
	ms, err := Migrations()
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		for _, st := range m.Statements {
			if _, err := r.render(st); err != nil {
				return nil, fmt.Errorf("queries: migration %s: %w", m.Name, err)
			}
		}
	}
	return r.sharded, nil
})
