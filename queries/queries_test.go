package queries

import (
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
			if strings.HasSuffix(s, ";") || strings.TrimSpace(s) == "" {
				t.Errorf("%s: bad statement %q", m.Name, s)
			}
		}
	}
	if got := len(ms[0].Statements); got != 2 {
		t.Fatalf("0001 has %d statements, want 2", got)
	}
}

func TestSplitStatements(t *testing.T) {
	got := splitStatements("-- comment\nCREATE TABLE a (x String);\n\nCREATE TABLE b\n(\n  y String -- trailing\n);\nSELECT 1")
	want := []string{"CREATE TABLE a (x String)", "CREATE TABLE b\n(\n  y String -- trailing\n)", "SELECT 1"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q", got)
	}
}

func TestGetUnknown(t *testing.T) {
	if _, err := Get("no_such_query"); err == nil {
		t.Fatal("no error")
	}
}
