package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Version names the bundle format, the canonical row form, the hash chain
// and the root; it is also the chain's seed. v2: the root covers the
// manifest's metadata, and CSV neutralises formula-like cells.
const Version = "docket-audit-v2"

// CheckpointEvery is how many rows lie between two chain checkpoints in the
// manifest: a verifier that finds a mismatch can name the window of rows it
// lies in without the manifest growing with every row.
const CheckpointEvery = 1000

// chain is the hash chain over one file's canonical rows:
//
//	h_0 = SHA-256("docket-audit-v2")
//	h_i = SHA-256(h_{i-1} || SHA-256(row_i))
//
// with 32-byte binary digests concatenated.
type chain struct {
	head        [32]byte
	rows        uint64
	checkpoints []string
	buf         [64]byte
}

func newChain() *chain {
	return &chain{head: sha256.Sum256([]byte(Version)), checkpoints: []string{}}
}

// add extends the chain by one row and reports whether it just passed a
// checkpoint (then the last of checkpoints is its value).
func (c *chain) add(row []byte) bool {
	copy(c.buf[:32], c.head[:])
	rh := sha256.Sum256(row)
	copy(c.buf[32:], rh[:])
	c.head = sha256.Sum256(c.buf[:])
	c.rows++
	if c.rows%CheckpointEvery == 0 {
		c.checkpoints = append(c.checkpoints, hex.EncodeToString(c.head[:]))
		return true
	}
	return false
}

func (c *chain) headHex() string { return hex.EncodeToString(c.head[:]) }

// bundleRoot binds the manifest's own metadata and its files into one
// value, independent of the files' format: SHA-256 over
//
//	docket-audit-v2\n
//	<name> <hex of value>\n       per metadata field, in rootFields order
//	<table> <rows> <chain head>\n per file in manifest order
//
// where a value is its text in manifest.json (times in RFC 3339 with
// nanoseconds as needed, booleans true/false) in hex, so any text can be
// hashed without escaping rules. The access log records the root, so the
// period, tenant, flags, author and time of an export cannot be changed
// without the root changing.
func bundleRoot(m Manifest) string {
	var b strings.Builder
	b.WriteString(Version + "\n")
	for _, f := range rootFields(m) {
		fmt.Fprintf(&b, "%s %s\n", f[0], hex.EncodeToString([]byte(f[1])))
	}
	for _, f := range m.Files {
		fmt.Fprintf(&b, "%s %d %s\n", f.Table, f.Rows, f.ChainHead)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

// rootFields are the metadata the root covers, as name and value.
func rootFields(m Manifest) [][2]string {
	q := m.Query
	return [][2]string{
		{"generated_at", m.GeneratedAt.Format(time.RFC3339Nano)},
		{"generated_by", m.GeneratedBy},
		{"engine", m.Engine},
		{"access_event_id", m.AccessEventID},
		{"tenant", q.Tenant},
		{"from", q.From.Format(time.RFC3339Nano)},
		{"to", q.To.Format(time.RFC3339Nano)},
		{"format", string(q.Format)},
		{"include_access_log", strconv.FormatBool(q.IncludeAccessLog)},
		{"include_state", strconv.FormatBool(q.IncludeState)},
		{"reason", q.Reason},
	}
}
