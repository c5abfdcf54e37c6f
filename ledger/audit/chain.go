package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Version names the bundle format, the canonical row form and the hash
// chain; it is also the chain's seed.
const Version = "docket-audit-v1"

// CheckpointEvery is how many rows lie between two chain checkpoints in the
// manifest: a verifier that finds a mismatch can name the window of rows it
// lies in without the manifest growing with every row.
const CheckpointEvery = 1000

// chain is the hash chain over one file's canonical rows:
//
//	h_0 = SHA-256("docket-audit-v1")
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

// bundleRoot binds the files of a bundle into one value, independent of
// their format: SHA-256 over "docket-audit-v1\n" followed by one line
// "<table> <rows> <chain head>\n" per file in manifest order. The access
// log records it, so a manifest can be checked against the ledger later.
func bundleRoot(files []File) string {
	var b strings.Builder
	b.WriteString(Version + "\n")
	for _, f := range files {
		fmt.Fprintf(&b, "%s %d %s\n", f.Table, f.Rows, f.ChainHead)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}
