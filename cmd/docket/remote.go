package main

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/docketlabs/docket/ledger/audit"
	"github.com/docketlabs/docket/ledger/storage/chdb"
	"github.com/docketlabs/docket/ui/apiclient"
)

// tokenEnv holds the API token of the CLI against a running Docket; kept
// out of flags so it stays out of process listings and shell history.
const tokenEnv = "DOCKET_TOKEN"

// remoteFlags select a running Docket to act through, over its JSON API
// with a service account's token, instead of opening the local data.
type remoteFlags struct {
	server    string
	tokenFile string
}

func (r *remoteFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&r.server, "server", "", "URL of a running Docket's UI (http://127.0.0.1:8080): act through its API with the token in $"+tokenEnv+" or --token-file")
	fs.StringVar(&r.tokenFile, "token-file", "", "file holding the API token for --server (default: $"+tokenEnv+")")
}

func (r *remoteFlags) token() (string, error) {
	if r.tokenFile != "" {
		raw, err := os.ReadFile(r.tokenFile)
		if err != nil {
			return "", fmt.Errorf("--token-file: %w", err)
		}
		return strings.TrimSpace(string(raw)), nil
	}
	return strings.TrimSpace(os.Getenv(tokenEnv)), nil
}

const tokenHelp = "create one on the UI's Admin → API tokens page or with `docket ui tokens create NAME --grant TENANT=ROLE`" //nolint:gosec // G101: help text naming the token, not a credential

// client is the running Docket to act through, or nil to open the local
// data. With --server it is that one. Without, when the embedded ledger
// of dataDir is held by a running Docket that announced its API (see
// apiclient.Announce), it is that one if a token is at hand; otherwise the
// error says how to reach it, instead of a lock error from the storage.
func (r *remoteFlags) client(local *localFlags, stderr io.Writer) (*apiclient.Client, error) {
	tok, err := r.token()
	if err != nil {
		return nil, err
	}
	if r.server != "" {
		if tok == "" {
			return nil, fmt.Errorf("--server needs an API token in $%s or --token-file (%s)", tokenEnv, tokenHelp)
		}
		if local.actor != "" {
			return nil, errors.New("--actor does not apply with --server: the token's service account is put on record")
		}
		return apiclient.WithToken(r.server, tok), nil
	}
	if os.Getenv("DOCKET_CLICKHOUSE_DSN") != "" {
		return nil, nil
	}
	ledgerDir := filepath.Join(local.storage.dataDir, "ledger")
	a, ok := apiclient.Discover(ledgerDir)
	if !ok || !chdb.Held(ledgerDir) {
		// No announcement, or a stale one whose PID another process took.
		return nil, nil
	}
	if tok == "" {
		return nil, fmt.Errorf("the ledger in %s is held by a running docket (pid %d) serving its API at %s: run this again with --server %s and an API token in $%s (%s)",
			local.storage.dataDir, a.PID, a.URL, a.URL, tokenEnv, tokenHelp)
	}
	if local.actor != "" {
		return nil, errors.New("--actor does not apply through a running docket: the token's service account is put on record")
	}
	fmt.Fprintf(stderr, "the ledger in %s is held by docket pid %d: acting through its API at %s\n", local.storage.dataDir, a.PID, a.URL)
	return apiclient.WithToken(a.URL, tok), nil
}

// exportRemote asks the server for the bundle, downloads it into out and
// checks every file against the manifest the server answered with.
// Progress goes to stderr.
func exportRemote(ctx context.Context, c *apiclient.Client, req audit.Request, out string, stdout, stderr io.Writer) (err error) {
	created, err := emptyDir(out)
	if err != nil {
		return err
	}
	defer func() {
		// Like a local export: a failed one leaves no partial bundle.
		if err != nil {
			removeBundle(out, created)
		}
	}()
	body := map[string]any{"tenant": req.Tenant, "from": req.From, "to": req.To, "format": req.Format, "reason": req.Reason,
		"include_access_log": req.IncludeAccessLog, "include_state": req.IncludeState}
	var res struct {
		ID       string         `json:"id"`
		Manifest audit.Manifest `json:"manifest"`
		Download string         `json:"download"`
	}
	done := make(chan struct{})
	go func() {
		start := time.Now()
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				fmt.Fprintf(stderr, "export: the server is writing the bundle (%s)\n", time.Since(start).Round(time.Second))
			}
		}
	}()
	fmt.Fprintln(stderr, "export: asking the server for the bundle")
	err = c.Post(ctx, "/api/v1/exports", body, &res)
	close(done)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if !strings.HasPrefix(res.Download, "/api/v1/exports/") {
		return fmt.Errorf("export: the server answered no download for bundle %s", res.ID)
	}
	fmt.Fprintf(stderr, "export: bundle %s written (%d calls); downloading\n", res.ID, res.Manifest.Totals.Calls)
	zipFile, err := os.CreateTemp("", "docket-export-*.zip")
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer func() { _ = os.Remove(zipFile.Name()) }()
	defer func() { _ = zipFile.Close() }()
	var reported int64
	n, err := c.Download(ctx, res.Download, zipFile, func(n int64) {
		if n-reported >= 4<<20 {
			reported = n
			fmt.Fprintf(stderr, "export: downloaded %d MiB\n", n>>20)
		}
	})
	if err != nil {
		return fmt.Errorf("export: download: %w", err)
	}
	fmt.Fprintf(stderr, "export: downloaded %d bytes\n", n)
	if err := unzipBundle(zipFile, n, out, res.Manifest); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	printManifest(stdout, out, res.Manifest)
	return nil
}

// emptyDir creates dir, or accepts it if empty, as a local export does,
// and says whether it created it.
func emptyDir(dir string) (bool, error) {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return false, fmt.Errorf("export: create bundle directory: %w", err)
		}
		return true, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, fmt.Errorf("export: bundle directory: %w", err)
	}
	if len(entries) > 0 {
		return false, errors.New("export: the bundle directory must be empty")
	}
	return false, nil
}

// removeBundle empties dir (found empty before the export) and removes it
// if the export created it.
func removeBundle(dir string, created bool) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		_ = os.Remove(filepath.Join(dir, e.Name()))
	}
	if created {
		_ = os.Remove(dir)
	}
}

// unzipBundle writes the zip's files into dir; every file the manifest
// lists must arrive with its SHA-256, and nothing else but the manifest.
func unzipBundle(f *os.File, size int64, dir string, m audit.Manifest) error {
	zr, err := zip.NewReader(f, size)
	if err != nil {
		return fmt.Errorf("read the downloaded bundle: %w", err)
	}
	want := map[string]audit.File{}
	for _, file := range m.Files {
		want[file.Name] = file
	}
	got := map[string]bool{}
	for _, zf := range zr.File {
		name := zf.Name
		file, listed := want[name]
		if name != filepath.Base(name) || strings.HasPrefix(name, ".") || got[name] || (!listed && name != audit.ManifestName) {
			return fmt.Errorf("the downloaded bundle holds an unexpected entry %q", name)
		}
		limit := file.Bytes
		if !listed {
			limit = maxManifestBytes
		}
		sum, err := extract(zf, filepath.Join(dir, name), limit) //nolint:gosec // G305: name is checked above to be a plain file name the manifest lists
		if err != nil {
			return err
		}
		if listed && file.SHA256 != sum {
			return fmt.Errorf("%s arrived with SHA-256 %s, the manifest says %s", name, sum, file.SHA256)
		}
		got[name] = true
	}
	for name := range want {
		if !got[name] {
			return fmt.Errorf("%s is in the manifest but not in the download", name)
		}
	}
	return nil
}

// maxManifestBytes bounds the manifest a server sends; the tables are
// bounded by the sizes it lists.
const maxManifestBytes = 16 << 20

// extract writes zf to path and returns its SHA-256; an entry that
// inflates past limit bytes is refused, so a hostile server cannot fill the
// disk with a small download.
func extract(zf *zip.File, path string, limit int64) (string, error) {
	rc, err := zf.Open()
	if err != nil {
		return "", err
	}
	defer func() { _ = rc.Close() }()
	out, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), io.LimitReader(rc, limit+1))
	if err == nil && n > limit {
		err = fmt.Errorf("larger than the %d bytes expected", limit)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
