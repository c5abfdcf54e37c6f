// Package s3test runs a real S3 server for tests: versitygw with its posix
// backend (versioning and Object Lock included) on a free loopback port,
// with a temporary root. scripts/install-versitygw.sh installs the binary;
// tests find it through VERSITYGW_BIN or <repo>/bin/versitygw.
//
// Without the binary a test is skipped — unless the CI environment variable
// is set, where a missing S3 server is a failure, not a skip.
package s3test

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docketlabs/docket/internal/proctest"
	"github.com/docketlabs/docket/internal/shorttest"
)

// Server is one running versitygw.
type Server struct {
	// Endpoint is host:port, plain HTTP unless started by StartTLS.
	Endpoint  string
	AccessKey string
	SecretKey string

	t                   testing.TB
	bin, root, versions string
	logPath             string
	tlsArgs             []string
	cmd                 *exec.Cmd
	exited              chan struct{}
}

// Start starts a server and stops it when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	return start(t, nil)
}

// StartTLS starts a server that speaks HTTPS with the given certificate,
// for clients that verify it the way they would in production.
func StartTLS(t testing.TB, certFile, keyFile string) *Server {
	t.Helper()
	return start(t, []string{"--cert", certFile, "--key", keyFile})
}

func start(t testing.TB, tlsArgs []string) *Server {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	s := &Server{
		t: t, bin: bin,
		root:      filepath.Join(dir, "root"),
		versions:  filepath.Join(dir, "versions"),
		logPath:   filepath.Join(dir, "versitygw.log"),
		Endpoint:  "127.0.0.1:" + proctest.FreePort(t),
		AccessKey: randomHex(t, 10),
		SecretKey: randomHex(t, 20),
		tlsArgs:   tlsArgs,
	}
	for _, d := range []string{s.root, s.versions} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	s.start()
	t.Cleanup(s.Stop)
	return s
}

// Binary returns the versitygw binary, skipping or failing the test when
// it is missing (see the package documentation).
func Binary(t testing.TB) string {
	t.Helper()
	shorttest.Needs(t, shorttest.S3)
	bin := os.Getenv("VERSITYGW_BIN")
	if bin == "" {
		root, err := repoRoot()
		if err != nil {
			t.Fatalf("s3test: %v", err)
		}
		bin = filepath.Join(root, "bin", "versitygw")
	}
	if _, err := os.Stat(bin); err != nil {
		msg := fmt.Sprintf("s3test: no S3 server binary at %s (%v): run scripts/install-versitygw.sh or set VERSITYGW_BIN", bin, err)
		if os.Getenv("CI") != "" {
			t.Fatal(msg + " — CI is set, so this is a failure")
		}
		t.Skip(msg)
	}
	return bin
}

// repoRoot walks up from the working directory to the module root.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(b, []byte("module github.com/docketlabs/docket\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("module root not found above the working directory")
		}
		dir = parent
	}
}

func randomHex(t testing.TB, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func (s *Server) start() {
	s.t.Helper()
	log, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		s.t.Fatal(err)
	}
	defer func() { _ = log.Close() }()
	args := append([]string{"--port", s.Endpoint, "-a", s.AccessKey, "-s", s.SecretKey, "-q"}, s.tlsArgs...)
	cmd := exec.Command(s.bin, append(args, "posix", "--versioning-dir", s.versions, s.root)...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("s3test: start versitygw: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	s.cmd, s.exited = cmd, exited
	deadline := time.Now().Add(15 * time.Second)
	client, scheme := &http.Client{Timeout: time.Second}, "http"
	if len(s.tlsArgs) > 0 {
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // readiness probe only; clients of the server verify it
		scheme = "https"
	}
	for {
		resp, err := client.Get(scheme + "://" + s.Endpoint + "/")
		if err == nil {
			resp.Body.Close()
			return
		}
		select {
		case <-exited:
			s.t.Fatalf("s3test: versitygw exited at start:\n%s", s.logTail())
		default:
		}
		if time.Now().After(deadline) {
			s.Stop()
			s.t.Fatalf("s3test: versitygw not ready on %s within 15s: %v\n%s", s.Endpoint, err, s.logTail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop stops the server; its data stays for Restart.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	s.cmd = nil
}

// Restart starts a stopped server again on the same port with the same data.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.start()
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(s.logPath)
	if len(b) > 4096 {
		b = b[len(b)-4096:]
	}
	return strings.TrimSpace(string(b))
}
