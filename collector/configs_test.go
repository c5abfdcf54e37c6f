package collector_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestShippedConfigsValidate runs `docket collector validate` on the
// configs the project ships: the dev stack and the production shape in
// deploy/.
func TestShippedConfigsValidate(t *testing.T) {
	bin := docketBinary(t)
	dir := t.TempDir()
	deployEnv := []string{
		"DOCKET_CLICKHOUSE_DSN=clickhouse://docket:secret@clickhouse:9440/docket?secure=true",
		"DOCKET_S3_ENDPOINT=s3.internal:9000", "DOCKET_S3_ACCESS_KEY=docket", "DOCKET_S3_SECRET_KEY=secret",
		"DOCKET_CONTENT_SECRET=" + strings.Repeat("k", 32), "DOCKET_TRACES_BACKEND=tempo.internal:4317",
		"DOCKET_DATA=" + dir, "DOCKET_UI_CERT=" + filepath.Join(dir, "ui.crt"), "DOCKET_UI_KEY=" + filepath.Join(dir, "ui.key"),
	}
	validate := func(path string, env []string, extra ...string) (string, error) {
		cmd := exec.Command(bin, append([]string{"collector", "validate", "--config", path}, extra...)...)
		cmd.Env = append(cmd.Environ(), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := validate("dev.yaml", []string{"DATA_DIR=" + dir}); err != nil {
		t.Errorf("dev.yaml does not validate: %v\n%s", err, out)
	}
	if out, err := validate("../deploy/collector.yaml", deployEnv); err != nil {
		t.Errorf("deploy/collector.yaml does not validate: %v\n%s", err, out)
	}
	// The same config with one unknown key is refused, naming it.
	out, err := validate("../deploy/collector.yaml", deployEnv, "--set=processors::sqlsanitizer::no_such_key=1")
	if err == nil || !strings.Contains(out, "no_such_key") {
		t.Errorf("an unknown key validated (%v):\n%s", err, out)
	}
}
