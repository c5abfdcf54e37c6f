// Package queries holds the ClickHouse SQL of the ledger: versioned schema
// migrations and named queries. Both storage backends execute these texts,
// so the SQL lives here once and is tested against the real engine.
package queries

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

//go:embed *.sql migrations/*.sql fragments/*.sql
var files embed.FS

// include starts a line of a query that stands for a fragment: a condition
// several queries share, written once in fragments/NAME.sql. A fragment
// that compares a column the queries name differently says ROW_TIME, and
// the line names the column: "-- include: NAME(column)".
const include = "-- include:"

// rowTime is the fragments' word for the column a line of include names.
const rowTime = "ROW_TIME"

// column is what an include line may name: an identifier.
var column = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// Get returns the named query (file name without ".sql"), each line
// "-- include: NAME" or "-- include: NAME(column)" replaced by
// fragments/NAME.sql, with the column for ROW_TIME.
func Get(name string) (string, error) {
	b, err := files.ReadFile(name + ".sql")
	if err != nil {
		return "", fmt.Errorf("queries: %q: %w", name, err)
	}
	return expand(name, string(b))
}

// expand replaces the include lines of the text of query name.
func expand(name, text string) (string, error) {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	for i, line := range lines {
		frag, ok := strings.CutPrefix(strings.TrimSpace(line), include)
		if !ok {
			continue
		}
		frag, arg, hasArg := strings.Cut(strings.TrimSpace(frag), "(")
		arg, closed := strings.CutSuffix(arg, ")")
		if hasArg && (!closed || !column.MatchString(arg)) {
			return "", fmt.Errorf("queries: %q: an include names one column: %q", name, line)
		}
		f, err := files.ReadFile(path.Join("fragments", frag+".sql"))
		if err != nil {
			return "", fmt.Errorf("queries: %q includes %w", name, err)
		}
		body := strings.TrimSpace(string(f))
		if hasArg != strings.Contains(body, rowTime) {
			return "", fmt.Errorf("queries: %q: fragment %s takes a column if and only if it says %s", name, frag, rowTime)
		}
		lines[i] = strings.ReplaceAll(body, rowTime, arg)
	}
	return strings.Join(lines, "\n"), nil
}

// MustGet is Get for queries that are part of the binary and checked by tests.
func MustGet(name string) string {
	q, err := Get(name)
	if err != nil {
		panic(err)
	}
	return q
}

// Migration is one versioned schema step. A file may hold several
// statements separated by ";" at the end of a line.
type Migration struct {
	Version    uint32
	Name       string
	Statements []Statement
}

// Statement is one statement of a migration. A statement that cannot be
// written to run again harmlessly (EXCHANGE TABLES) is preceded by a line
// "-- only if: SELECT ... AS run": it runs only while that query returns a
// true run, so a migration interrupted by a crash can be applied again.
//
// A CREATE TABLE is preceded by a line "-- cluster: shard by EXPR": the
// sharding key of its Distributed table on a cluster (Schema).
type Statement struct {
	SQL     string
	OnlyIf  string
	ShardBy string
}

// Migrations returns the schema migrations in version order.
func Migrations() ([]Migration, error) {
	entries, err := fs.ReadDir(files, "migrations")
	if err != nil {
		return nil, fmt.Errorf("queries: read migrations: %w", err)
	}
	var out []Migration
	for _, e := range entries {
		name := e.Name()
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.ParseUint(num, 10, 32)
		if !ok || err != nil {
			return nil, fmt.Errorf("queries: migration %q: name must start with a version number", name)
		}
		b, err := files.ReadFile(path.Join("migrations", name))
		if err != nil {
			return nil, fmt.Errorf("queries: read migration %q: %w", name, err)
		}
		out = append(out, Migration{Version: uint32(v), Name: strings.TrimSuffix(name, ".sql"), Statements: splitStatements(string(b))})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i := 1; i < len(out); i++ {
		if out[i].Version == out[i-1].Version {
			return nil, fmt.Errorf("queries: duplicate migration version %d", out[i].Version)
		}
	}
	return out, nil
}

// onlyIf starts the comment line that guards the next statement; shardBy
// the one that gives its sharding key.
const (
	onlyIf  = "-- only if:"
	shardBy = "-- cluster: shard by"
)

// splitStatements splits on ";" at line ends; migrations are our own files,
// so a full SQL lexer is not needed.
func splitStatements(s string) []Statement {
	var out []Statement
	var cur strings.Builder
	var guard, shard string
	for _, line := range strings.Split(s, "\n") {
		trimmed := strings.TrimSpace(line)
		if g, ok := strings.CutPrefix(trimmed, onlyIf); ok && cur.Len() == 0 {
			guard = strings.TrimSpace(g)
			continue
		}
		if k, ok := strings.CutPrefix(trimmed, shardBy); ok && cur.Len() == 0 {
			shard = strings.TrimSpace(k)
			continue
		}
		if strings.HasPrefix(trimmed, "--") || (trimmed == "" && cur.Len() == 0) {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(trimmed, ";") {
			out = append(out, Statement{SQL: strings.TrimSuffix(strings.TrimSpace(cur.String()), ";"), OnlyIf: guard, ShardBy: shard})
			cur.Reset()
			guard, shard = "", ""
		}
	}
	if rest := strings.TrimSpace(cur.String()); rest != "" {
		out = append(out, Statement{SQL: rest, OnlyIf: guard, ShardBy: shard})
	}
	return out
}
