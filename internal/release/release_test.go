package release

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

// testKey is generated per test: no signing key exists outside tests.
func testKey(t *testing.T) (ssh.PublicKey, ssh.Signer) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return signer.PublicKey(), signer
}

// sign writes what `ssh-keygen -Y sign -n NAMESPACE` writes (the ssh-keygen
// test below checks that it does).
func sign(t *testing.T, signer ssh.Signer, namespace string, message []byte) []byte {
	t.Helper()
	data, err := signedData(namespace, "sha512", message)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := signer.Sign(rand.Reader, data)
	if err != nil {
		t.Fatal(err)
	}
	blob := append([]byte(sigMagic), ssh.Marshal(sshSig{
		Version:   1,
		PublicKey: signer.PublicKey().Marshal(),
		Namespace: namespace,
		HashAlg:   "sha512",
		Signature: ssh.Marshal(sig),
	})...)
	return pem.EncodeToMemory(&pem.Block{Type: "SSH SIGNATURE", Bytes: blob})
}

func sumsOf(files map[string]string) []byte {
	var b bytes.Buffer
	for _, name := range []string{"docket_linux_amd64", "docket_linux_amd64.cdx.json", "docket_linux_arm64"} {
		if content, ok := files[name]; ok {
			h := sha256.Sum256([]byte(content))
			fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(h[:]), name)
		}
	}
	return b.Bytes()
}

// writeRelease lays out a small signed release directory.
func writeRelease(t *testing.T, signer ssh.Signer) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"docket_linux_amd64":          "\x7fELF amd64 binary",
		"docket_linux_arm64":          "\x7fELF arm64 binary",
		"docket_linux_amd64.cdx.json": `{"bomFormat":"CycloneDX"}`,
	}
	for name, content := range files {
		writeFile(t, filepath.Join(dir, name), content)
	}
	sums := sumsOf(files)
	writeFile(t, filepath.Join(dir, SumsFile), string(sums))
	writeFile(t, filepath.Join(dir, SigFile), string(sign(t, signer, Namespace, sums)))
	return dir
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustFail(t *testing.T, dir string, pub ssh.PublicKey, want string) {
	t.Helper()
	entries, err := Verify(dir, pub)
	if err == nil {
		t.Fatalf("Verify accepted a bad release: %v", entries)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("Verify error %q does not say %q", err, want)
	}
}

func TestVerifyAcceptsGoodRelease(t *testing.T) {
	pub, signer := testKey(t)
	dir := writeRelease(t, signer)
	entries, err := Verify(dir, pub)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name)
	}
	if got := strings.Join(names, " "); got != "docket_linux_amd64 docket_linux_amd64.cdx.json docket_linux_arm64" {
		t.Fatalf("verified %q", got)
	}
}

func TestVerifyRejectsChangedBinary(t *testing.T) {
	pub, signer := testKey(t)
	dir := writeRelease(t, signer)
	writeFile(t, filepath.Join(dir, "docket_linux_arm64"), "\x7fELF arm64 binary, backdoored")
	mustFail(t, dir, pub, "docket_linux_arm64: SHA-256")
}

func TestVerifyRejectsChangedChecksums(t *testing.T) {
	pub, signer := testKey(t)
	dir := writeRelease(t, signer)
	// The attacker swaps a binary and lists its new hash.
	files := map[string]string{
		"docket_linux_amd64":          "\x7fELF amd64 binary, backdoored",
		"docket_linux_arm64":          "\x7fELF arm64 binary",
		"docket_linux_amd64.cdx.json": `{"bomFormat":"CycloneDX"}`,
	}
	writeFile(t, filepath.Join(dir, "docket_linux_amd64"), files["docket_linux_amd64"])
	writeFile(t, filepath.Join(dir, SumsFile), string(sumsOf(files)))
	mustFail(t, dir, pub, "signature: does not match")
}

func TestVerifyRejectsWrongKey(t *testing.T) {
	_, signer := testKey(t)
	other, _ := testKey(t)
	mustFail(t, writeRelease(t, signer), other, "made by another key")
}

func TestVerifyRejectsResignedByAnotherKey(t *testing.T) {
	pub, signer := testKey(t)
	_, attacker := testKey(t)
	dir := writeRelease(t, signer)
	sums, err := os.ReadFile(filepath.Join(dir, SumsFile))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, SigFile), string(sign(t, attacker, Namespace, sums)))
	mustFail(t, dir, pub, "made by another key")
}

func TestVerifyRejectsOtherNamespace(t *testing.T) {
	pub, signer := testKey(t)
	dir := writeRelease(t, signer)
	sums, err := os.ReadFile(filepath.Join(dir, SumsFile))
	if err != nil {
		t.Fatal(err)
	}
	// The same key's signature for git, say, is not a release signature.
	writeFile(t, filepath.Join(dir, SigFile), string(sign(t, signer, "git", sums)))
	mustFail(t, dir, pub, `namespace "git"`)
}

func TestVerifyRejectsUnlistedMissingAndSymlinkedFiles(t *testing.T) {
	pub, signer := testKey(t)

	dir := writeRelease(t, signer)
	writeFile(t, filepath.Join(dir, "install.sh"), "curl | sh")
	mustFail(t, dir, pub, "install.sh: in the directory but not in SHA256SUMS")

	dir = writeRelease(t, signer)
	if err := os.Remove(filepath.Join(dir, "docket_linux_amd64.cdx.json")); err != nil {
		t.Fatal(err)
	}
	mustFail(t, dir, pub, "docket_linux_amd64.cdx.json: listed in SHA256SUMS")

	dir = writeRelease(t, signer)
	target := filepath.Join(t.TempDir(), "elsewhere")
	writeFile(t, target, "\x7fELF arm64 binary")
	if err := os.Remove(filepath.Join(dir, "docket_linux_arm64")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "docket_linux_arm64")); err != nil {
		t.Fatal(err)
	}
	mustFail(t, dir, pub, "docket_linux_arm64: not a regular file")
}

func TestVerifyRejectsMissingSignature(t *testing.T) {
	pub, signer := testKey(t)
	dir := writeRelease(t, signer)
	if err := os.Remove(filepath.Join(dir, SigFile)); err != nil {
		t.Fatal(err)
	}
	mustFail(t, dir, pub, SigFile)
}

func TestVerifyBoundsTheChecksumFile(t *testing.T) {
	pub, signer := testKey(t)
	dir := writeRelease(t, signer)
	writeFile(t, filepath.Join(dir, SumsFile), strings.Repeat("x", maxSumsSize+1))
	mustFail(t, dir, pub, "larger than")
}

func TestParseSumsRejectsPathsAndDuplicates(t *testing.T) {
	h := strings.Repeat("ab", 32)
	for name, sums := range map[string]string{
		"traversal":  h + "  ../../etc/passwd\n",
		"subdir":     h + "  bin/docket\n",
		"duplicate":  h + "  docket\n" + h + "  docket\n",
		"sums entry": h + "  SHA256SUMS\n",
		"short hash": "abcd  docket\n",
		"upper hash": strings.ToUpper(h) + "  docket\n",
		"empty":      "",
	} {
		if _, err := ParseSums([]byte(sums)); err == nil {
			t.Errorf("%s: ParseSums accepted %q", name, sums)
		}
	}
	got, err := ParseSums([]byte(h + "  docket\n" + h + " *docket.cdx.json\n"))
	if err != nil || len(got) != 2 {
		t.Fatalf("ParseSums(text and binary mode) = %v, %v", got, err)
	}
}

func TestParsePublicKeyWantsOneEd25519Key(t *testing.T) {
	pub, _ := testKey(t)
	line := ssh.MarshalAuthorizedKey(pub)
	if _, err := ParsePublicKey(line); err != nil {
		t.Fatal(err)
	}
	if _, err := ParsePublicKey(append(line, line...)); err == nil {
		t.Error("two keys accepted")
	}
	if _, err := ParsePublicKey([]byte("not a key")); err == nil {
		t.Error("garbage accepted")
	}
}

// The format is OpenSSH's: ssh-keygen accepts what sign writes, and Verify
// accepts what ssh-keygen writes.
func TestSignatureFormatMatchesSSHKeygen(t *testing.T) {
	keygen, err := exec.LookPath("ssh-keygen")
	if err != nil {
		t.Skip("ssh-keygen not installed")
	}
	dir := t.TempDir()
	keyPath := filepath.Join(dir, "release-key")
	run(t, exec.Command(keygen, "-q", "-t", "ed25519", "-N", "", "-C", "test", "-f", keyPath))
	pubLine, err := os.ReadFile(keyPath + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	pub, err := ParsePublicKey(pubLine)
	if err != nil {
		t.Fatal(err)
	}
	message := []byte("0123  docket\n")
	msgPath := filepath.Join(dir, "msg")
	writeFile(t, msgPath, string(message))
	run(t, exec.Command(keygen, "-q", "-Y", "sign", "-n", Namespace, "-f", keyPath, msgPath))
	armored, err := os.ReadFile(msgPath + ".sig")
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifySignature(pub, message, armored); err != nil {
		t.Fatalf("ssh-keygen's signature: %v", err)
	}
	if err := VerifySignature(pub, []byte("0124  docket\n"), armored); err == nil {
		t.Fatal("ssh-keygen's signature verified for another message")
	}

	_, signer := testKey(t)
	ours := filepath.Join(dir, "ours.sig")
	writeFile(t, ours, string(sign(t, signer, Namespace, message)))
	cmd := exec.Command(keygen, "-Y", "check-novalidate", "-n", Namespace, "-s", ours)
	cmd.Stdin = bytes.NewReader(message)
	run(t, cmd)
}

func run(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
}
