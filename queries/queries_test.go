package queries

import (
	"reflect"
	"strings"
	"testing"
)

func TestMigrationsParse(t *testing.T) {
	ms, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 || ms[0].Version != 1 {
		t.Fatalf("migrations: %+v", ms)
	}
	for _, m := range ms {
		for _, s := range m.Statements {
			if strings.HasSuffix(s.SQL, ";") || strings.TrimSpace(s.SQL) == "" {
				t.Errorf("%s: bad statement %q", m.Name, s)
			}
		}
	}
	if got := len(ms[0].Statements); got != 2 {
		t.Fatalf("0001 has %d statements, want 2", got)
	}
}

func TestSplitStatements(t *testing.T) {
	got := splitStatements("-- comment\nCREATE TABLE a (x String);\n\n-- only if: SELECT 1 AS run\nCREATE TABLE b\n(\n  y String -- trailing\n);\nSELECT 1")
	want := []Statement{{SQL: "CREATE TABLE a (x String)"}, {SQL: "CREATE TABLE b\n(\n  y String -- trailing\n)", OnlyIf: "SELECT 1 AS run"}, {SQL: "SELECT 1"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q", got)
	}
}

func TestGetUnknown(t *testing.T) {
	if _, err := Get("no_such_query"); err == nil {
		t.Fatal("no error")
	}
}

func TestGetIncludesFragments(t *testing.T) {
	q, err := Get("lifecycle_expire_calls")
	if err != nil {
		t.Fatal(err)
	}
	frag, err := files.ReadFile("fragments/held_by_end_user.sql")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(q, include) || !strings.Contains(q, strings.TrimSpace(string(frag))) {
		t.Fatalf("the fragment is not in the query:\n%s", q)
	}
	// A fragment that compares a time column gets the one the line names.
	q, err = Get("lifecycle_expire_log_refs")
	if err != nil || strings.Contains(q, rowTime) || !strings.Contains(q, "AND time >= s.3 AND time < s.4") {
		t.Fatalf("the column is not in the fragment's text (%v):\n%s", err, q)
	}
	for _, bad := range []string{
		"-- include: held_by_trace_or_time",            // the column is missing
		"-- include: held_by_end_user(start_time)",     // the fragment takes none
		"-- include: held_by_trace_or_time(time) OR 1", // not one column
		"-- include: held_by_trace_or_time(x, y)",      // not one column
		"-- include: held_by_trace_or_time(start_time", // not closed
	} {
		if q, err := expand("test", "SELECT 1 WHERE\n"+bad); err == nil {
			t.Errorf("%q expanded to %q", bad, q)
		}
	}
	entries, err := files.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".sql"); ok {
			if _, err := Get(name); err != nil {
				t.Error(err)
			}
		}
	}
}
