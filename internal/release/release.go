// Package release checks a Docket release directory: the SHA-256 checksum
// file is signed by the release owner's key, and every file in the
// directory is listed in it with the hash it has.
package release

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/crypto/ssh"
)

// File names in a release directory, written by scripts/release-sign.sh.
const (
	SumsFile = "SHA256SUMS"
	SigFile  = SumsFile + ".sig"
)

// Bounds on what is read before the signature is checked.
const (
	maxSumsSize = 1 << 20
	maxSigSize  = 16 << 10
)

// A sums line as sha256sum writes it: hash, space, text (" ") or binary
// ("*") mode marker, file name.
var sumsLine = regexp.MustCompile(`^([0-9a-f]{64}) [ *](.+)$`)

// Entry is one verified file.
type Entry struct {
	Name string
	Size int64
}

// Verify checks dir against pub: the signature over SHA256SUMS first, then
// each listed file's hash, and that no file in dir is left out of the list.
// It reports every mismatch, not only the first.
func Verify(dir string, pub ssh.PublicKey) ([]Entry, error) {
	sums, err := readBounded(filepath.Join(dir, SumsFile), maxSumsSize)
	if err != nil {
		return nil, err
	}
	sig, err := readBounded(filepath.Join(dir, SigFile), maxSigSize)
	if err != nil {
		return nil, err
	}
	if err = VerifySignature(pub, sums, sig); err != nil {
		return nil, fmt.Errorf("%s: %w", SigFile, err)
	}
	want, err := ParseSums(sums)
	if err != nil {
		return nil, err
	}

	var problems []error
	entries := make([]Entry, 0, len(want))
	for _, name := range slices.Sorted(maps.Keys(want)) {
		size, checkFileErr := checkFile(filepath.Join(dir, name), want[name])
		if checkFileErr != nil {
			problems = append(problems, checkFileErr)
			continue
		}
		entries = append(entries, Entry{Name: name, Size: size})
	}
	listing, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("release directory: %w", err)
	}
	for _, e := range listing {
		if _, listed := want[e.Name()]; !listed && e.Name() != SumsFile && e.Name() != SigFile {
			problems = append(problems, fmt.Errorf("%s: in the directory but not in %s, so not covered by the signature", e.Name(), SumsFile))
		}
	}
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	return entries, nil
}

// ParseSums reads a sha256sum listing of plain file names (no directories).
func ParseSums(data []byte) (map[string]string, error) {
	sums := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		m := sumsLine.FindStringSubmatch(sc.Text())
		if m == nil {
			return nil, fmt.Errorf("%s line %d: not \"SHA256  NAME\"", SumsFile, n)
		}
		name := m[2]
		if name != filepath.Base(name) || strings.ContainsAny(name, `/\`) || name == "." || name == ".." || name == SumsFile || name == SigFile {
			return nil, fmt.Errorf("%s line %d: %q is not a file name of the release", SumsFile, n, name)
		}
		if _, dup := sums[name]; dup {
			return nil, fmt.Errorf("%s line %d: %s listed twice", SumsFile, n, name)
		}
		sums[name] = m[1]
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", SumsFile, err)
	}
	if len(sums) == 0 {
		return nil, fmt.Errorf("%s: lists no files", SumsFile)
	}
	return sums, nil
}

// checkFile hashes a regular file (a symlink could point anywhere) and
// compares it with the listed hash.
func checkFile(path, want string) (int64, error) {
	name := filepath.Base(path)
	info, err := os.Lstat(path)
	if err != nil {
		return 0, fmt.Errorf("%s: listed in %s: %w", name, SumsFile, err)
	}
	if !info.Mode().IsRegular() {
		return 0, fmt.Errorf("%s: not a regular file", name)
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	size, err := io.Copy(h, f)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return 0, fmt.Errorf("%s: SHA-256 %s, %s lists %s", name, got, SumsFile, want)
	}
	return size, nil
}

func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("release directory: %w", err)
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", filepath.Base(path), limit)
	}
	return data, nil
}
