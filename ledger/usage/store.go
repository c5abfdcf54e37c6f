package usage

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/storage"
	"github.com/docketlabs/docket/queries"
)

// Save stores one import: its rows (merged per day and group) and then its
// provenance. imp names the actor, source, origin and provider; Save sets
// its ID, time and row count and, unless given, the days it covers (those
// of the rows). It returns the import as recorded.
func Save(ctx context.Context, st *ledgerstore.Store, imp Import, rows []Row) (Import, error) {
	if err := CheckProvider(imp.Provider); err != nil {
		return imp, err
	}
	if imp.Source != SourceAPI && imp.Source != SourceFile {
		return imp, invalid("source must be %s or %s", SourceAPI, SourceFile)
	}
	if imp.Actor == "" {
		return imp, invalid("an import needs an actor (who imported it)")
	}
	for _, r := range rows {
		if r.Provider != imp.Provider {
			return imp, invalid("a %s row in a %s import", r.Provider, imp.Provider)
		}
	}
	rows = Aggregate(rows)
	if imp.FromDay == "" {
		imp.FromDay, imp.ToDay = Span(rows)
	}
	if imp.FromDay == "" {
		return imp, invalid("the report has no rows and no day range")
	}
	id := make([]byte, 16)
	rand.Read(id)
	imp.ID, imp.At, imp.Rows = hex.EncodeToString(id), time.Now().UTC().Truncate(time.Millisecond), uint64(len(rows))
	if len(rows) > 0 {
		var b []byte
		for _, r := range rows {
			line, err := json.Marshal(struct {
				ImportID   string    `json:"import_id"`
				ImportedAt time.Time `json:"imported_at"`
				Row
			}{imp.ID, imp.At, r})
			if err != nil {
				return imp, fmt.Errorf("usage: encode row: %w", err)
			}
			b = append(append(b, line...), '\n')
		}
		if err := st.Engine().Insert(ctx, queries.MustGet("usage_insert_rows"), "JSONEachRow", b); err != nil {
			return imp, fmt.Errorf("usage: insert %d rows: %w", len(rows), err)
		}
	}
	line, err := json.Marshal(imp)
	if err != nil {
		return imp, fmt.Errorf("usage: encode import: %w", err)
	}
	if err := st.Engine().Insert(ctx, queries.MustGet("usage_insert_import"), "JSONEachRow", line); err != nil {
		return imp, fmt.Errorf("usage: record import: %w", err)
	}
	return imp, nil
}

// Imports lists the latest imports, newest first; provider "" means all.
func Imports(ctx context.Context, st *ledgerstore.Store, provider string, limit int) ([]Import, error) {
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	out, err := storage.QueryRows[Import](ctx, st.Engine(), queries.MustGet("usage_imports"), map[string]any{"provider": provider, "limit": limit})
	if err != nil {
		return nil, fmt.Errorf("usage: list imports: %w", err)
	}
	return out, nil
}

// Import pulls the days [from, to) and saves them as one import by actor,
// covering exactly those days.
func (c Client) Import(ctx context.Context, st *ledgerstore.Store, from, to time.Time, actor string) (Import, error) {
	rows, err := c.Pull(ctx, from, to)
	if err != nil {
		return Import{}, err
	}
	return Save(ctx, st, Import{Actor: actor, Source: SourceAPI, Origin: strings.Join(c.Endpoints(), " "), Provider: c.Provider,
		FromDay: from.UTC().Format(time.DateOnly), ToDay: to.UTC().Format(time.DateOnly)}, rows)
}

// ImportFile parses a provider's CSV export at path and saves it as one
// import by actor (see ImportCSV).
func ImportFile(ctx context.Context, st *ledgerstore.Store, provider, path, actor string) (Import, error) {
	f, err := os.Open(path)
	if err != nil {
		return Import{}, fmt.Errorf("usage: %w", err)
	}
	defer func() { _ = f.Close() }()
	return ImportCSV(ctx, st, provider, filepath.Base(path), f, actor)
}

// ImportCSV parses a provider's CSV export named name and saves it as one
// import by actor; the provenance names the file and its SHA-256, so the
// import can be matched to the very file later.
func ImportCSV(ctx context.Context, st *ledgerstore.Store, provider, name string, r io.Reader, actor string) (Import, error) {
	h := sha256.New()
	rows, err := ParseCSV(provider, io.TeeReader(r, h))
	if err != nil {
		return Import{}, fmt.Errorf("%s: %w", name, err)
	}
	origin := fmt.Sprintf("%s (sha256 %x)", name, h.Sum(nil))
	return Save(ctx, st, Import{Actor: actor, Source: SourceFile, Origin: origin, Provider: provider}, rows)
}
