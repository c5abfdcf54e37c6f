package shorttest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The skip is checked in a child test process, run with and without -short.
func TestNeedsSkipsOnlyUnderShort(t *testing.T) {
	if os.Getenv("SHORTTEST_CHILD") != "" {
		Needs(t, ChDB, S3)
		t.Log("ran")
		return
	}
	for _, c := range []struct {
		short bool
		want  string
	}{
		{true, "-short: needs the embedded chDB engine (libchdb) and the versitygw S3 server"},
		{false, "ran"},
	} {
		args := []string{"-test.run=^TestNeedsSkipsOnlyUnderShort$", "-test.v"}
		if c.short {
			args = append(args, "-test.short")
		}
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "SHORTTEST_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child (short=%t): %v\n%s", c.short, err, out)
		}
		if !strings.Contains(string(out), c.want) {
			t.Errorf("child (short=%t) output lacks %q:\n%s", c.short, c.want, out)
		}
	}
}
