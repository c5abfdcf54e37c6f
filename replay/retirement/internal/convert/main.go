// Command convert turns the model-retirement source files (a main CSV with
// one row per model and a detailed CSV with every observation behind it)
// into Docket's model-lifecycle table.
//
//	go run ./internal/convert -main source/model_retirements.csv \
//	    -detailed source/model_retirements_detailed.csv -prepared <YYYY-MM-DD> -out data/retirements.json
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/docketlabs/docket/internal/atomicfile"
	"github.com/docketlabs/docket/replay/retirement/internal/schema"
)

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err == nil {
		err = run(cfg)
	}
	if err != nil {
		slog.Error("convert failed", "err", err)
		os.Exit(1)
	}
}

type config struct {
	main, detailed, out, prepared string
}

func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	var c config
	fs.StringVar(&c.main, "main", "", "main CSV: provider,model,announced,retired,replacement,source_url")
	fs.StringVar(&c.detailed, "detailed", "", "detailed CSV: every observation, joined on provider + row_model")
	fs.StringVar(&c.prepared, "prepared", "", "date the source files were compiled (YYYY-MM-DD)")
	fs.StringVar(&c.out, "out", "", "output table")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.main == "" || c.detailed == "" || c.out == "" {
		return c, errors.New("-main, -detailed and -out are required")
	}
	return c, nil
}

func run(c config) error {
	encoded, rep, err := generate(c)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(c.out, encoded, 0o644); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	slog.Info("converted", "entries", rep.Entries, "aliases", rep.Aliases, "excluded", rep.Excluded, "bytes", len(encoded))
	for _, p := range slices.Sorted(maps.Keys(rep.ByProvider)) {
		slog.Info("provider", "id", p, "entries", rep.ByProvider[p])
	}
	for _, p := range slices.Sorted(maps.Keys(rep.Precision)) {
		slog.Info("precision", "kind", p, "entries", rep.Precision[p])
	}
	for _, d := range rep.Disagreeing {
		slog.Info("observation disagrees with the main row (main row used)", "observation", d)
	}
	return nil
}

// generate reads the sources and returns the encoded table; the test calls
// it to check that the shipped table is current.
func generate(c config) ([]byte, report, error) {
	mainCSV, err := os.ReadFile(c.main)
	if err != nil {
		return nil, report{}, fmt.Errorf("read main file: %w", err)
	}
	detailedCSV, err := os.ReadFile(c.detailed)
	if err != nil {
		return nil, report{}, fmt.Errorf("read detailed file: %w", err)
	}
	entries, rep, err := convert(mainCSV, detailedCSV)
	if err != nil {
		return nil, rep, err
	}
	f := schema.File{
		Schema: schema.Version,
		Source: schema.Source{
			Name:     "model_retirements",
			Prepared: c.prepared,
			Files:    []schema.SourceFile{sourceFile(c.main, mainCSV), sourceFile(c.detailed, detailedCSV)},
		},
		Entries: entries,
	}
	encoded, err := encode(f)
	return encoded, rep, err
}

// sourceFile names a source by its path inside source/ (not the path it
// was read from, which depends on where the converter runs).
func sourceFile(path string, data []byte) schema.SourceFile {
	sum := sha256.Sum256(data)
	if i := strings.LastIndex(path, "source/"); i >= 0 {
		path = path[i:]
	}
	return schema.SourceFile{Path: path, SHA256: hex.EncodeToString(sum[:])}
}

// encode writes the table with one entry per line, so a changed date shows
// up as a one-line diff.
func encode(f schema.File) ([]byte, error) {
	var b bytes.Buffer
	src, err := marshal(f.Source)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(&b, "{\"schema\":%d,\"source\":%s,\n\"entries\":[\n", f.Schema, src)
	for i, e := range f.Entries {
		j, err := marshal(e)
		if err != nil {
			return nil, err
		}
		b.Write(j)
		if i < len(f.Entries)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]}\n")
	if !json.Valid(b.Bytes()) {
		return nil, errors.New("encoded table is not valid JSON")
	}
	return b.Bytes(), nil
}

// marshal is json.Marshal without HTML escaping, so names stay readable.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
