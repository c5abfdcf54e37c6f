// Command convert turns genai-prices' v2 data.json (plus the prices_checked
// dates from its provider YAML files) into Docket's price table format.
//
//	go run ./internal/convert -in source/data.json -providers source/providers \
//	    -commit <sha> -date <YYYY-MM-DD> -out data/prices.json
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
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/docketlabs/docket/internal/atomicfile"
	"github.com/docketlabs/docket/ledger/pricing/internal/schema"
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
	in, providers, out string
	src                schema.Source
}

func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	var c config
	fs.StringVar(&c.in, "in", "", "genai-prices v2 data.json")
	fs.StringVar(&c.providers, "providers", "", "directory of genai-prices provider YAML files (for prices_checked dates)")
	fs.StringVar(&c.out, "out", "", "output price table")
	fs.StringVar(&c.src.Repo, "repo", "pydantic/genai-prices", "source repository")
	fs.StringVar(&c.src.Path, "path", "prices/new_data/v2/data.json", "path of -in inside the source repository")
	fs.StringVar(&c.src.Commit, "commit", "", "source commit")
	fs.StringVar(&c.src.Date, "date", "", "source commit date (YYYY-MM-DD)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.in == "" || c.out == "" || c.src.Commit == "" {
		return c, errors.New("-in, -out and -commit are required")
	}
	c.src.Name, c.src.License = "genai-prices", "MIT"
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
	slog.Info("converted", "providers", rep.Providers, "models", rep.Models, "periods", rep.Periods,
		"prices_checked", rep.Checked, "free", len(rep.Free), "unpriced", len(rep.Unpriced), "bytes", len(encoded))
	for _, key := range slices.Sorted(maps.Keys(rep.Dropped)) {
		slog.Info("dropped price key", "key", key, "price_sets", rep.Dropped[key])
	}
	for _, r := range rep.Rounded {
		slog.Info("rounded", "value", r)
	}
	for _, u := range rep.Unpriced {
		slog.Info("kept without a price", "model", u)
	}
	return nil
}

// generate reads the sources and returns the encoded table; the test calls
// it to check that the shipped table is current.
func generate(c config) ([]byte, report, error) {
	data, err := os.ReadFile(c.in)
	if err != nil {
		return nil, report{}, fmt.Errorf("read source: %w", err)
	}
	checked, err := readChecked(c.providers)
	if err != nil {
		return nil, report{}, err
	}
	return build(data, checked, c.src)
}

func build(data []byte, checked checkedDates, src schema.Source) ([]byte, report, error) {
	sum := sha256.Sum256(data)
	src.SHA256 = hex.EncodeToString(sum[:])
	file, rep, err := convert(data, checked, src)
	if err != nil {
		return nil, rep, err
	}
	encoded, err := encode(file)
	return encoded, rep, err
}

// readChecked collects prices_checked dates from the provider YAML files.
// Only that field is read; the prices themselves come from data.json.
func readChecked(dir string) (checkedDates, error) {
	out := checkedDates{}
	if dir == "" {
		return out, nil
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yml"))
	if err != nil {
		return nil, fmt.Errorf("list provider files: %w", err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read provider file: %w", err)
		}
		var doc struct {
			ID     string `yaml:"id"`
			Models []struct {
				ID            string `yaml:"id"`
				PricesChecked string `yaml:"prices_checked"`
			} `yaml:"models"`
		}
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			return nil, fmt.Errorf("parse %s: %w", filepath.Base(f), err)
		}
		dates := map[string]string{}
		for _, m := range doc.Models {
			if m.PricesChecked != "" {
				dates[m.ID] = m.PricesChecked
			}
		}
		out[doc.ID] = dates
	}
	return out, nil
}

// encode writes the table with one model per line: compact, yet a price
// change shows up as a one-line diff.
func encode(f schema.File) ([]byte, error) {
	var b bytes.Buffer
	line := func(prefix string, v any, suffix string) error {
		j, err := marshal(v)
		if err != nil {
			return err
		}
		b.WriteString(prefix)
		b.Write(j)
		b.WriteString(suffix)
		return nil
	}
	if err := line(fmt.Sprintf(`{"schema":%d,"source":`, f.Schema), f.Source, ",\n\"providers\":[\n"); err != nil {
		return nil, err
	}
	for i, p := range f.Providers {
		models := p.Models
		p.Models = nil
		head, err := marshal(p)
		if err != nil {
			return nil, err
		}
		// Reopen the provider object to append its models.
		b.Write(bytes.TrimSuffix(head, []byte(`,"models":null}`)))
		b.WriteString(",\"models\":[\n")
		for j, m := range models {
			sep := ",\n"
			if j == len(models)-1 {
				sep = "\n"
			}
			if err := line("", m, sep); err != nil {
				return nil, err
			}
		}
		if i == len(f.Providers)-1 {
			b.WriteString("]}\n")
		} else {
			b.WriteString("]},\n")
		}
	}
	b.WriteString("]}\n")
	if !json.Valid(b.Bytes()) {
		return nil, errors.New("encoded table is not valid JSON")
	}
	return b.Bytes(), nil
}

// marshal is json.Marshal without HTML escaping, so model names stay
// readable in diffs.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(b.String(), "\n")), nil
}
