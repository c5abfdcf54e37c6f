package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/docketlabs/docket/replay/retirement/internal/schema"
)

// Precisions of a retirement date, as the detailed source file names them.
var precisions = map[string]bool{"exact": true, "earliest": true, "tentative": true}

// report counts what the conversion did; main logs it and the test checks
// it against the numbers PROVENANCE.md quotes.
type report struct {
	Entries    int
	ByProvider map[string]int
	Aliases    int
	Precision  map[string]int
	// Excluded counts detailed observations the source kept out of the main
	// file (not-before floors and unverified dates).
	Excluded int
	// Disagreeing lists detailed observations whose retirement date differs
	// from the main row (the main row's date is used).
	Disagreeing []string
}

type mainRow struct {
	entry schema.Entry
	line  int
}

// convert joins the main file (one row per model: dates, replacement,
// source URLs) with the detailed file (every observation: aliases, date
// precision, vendor page, as-of date) into table entries, in main-file order.
func convert(mainCSV, detailedCSV []byte) ([]schema.Entry, report, error) {
	rep := report{ByProvider: map[string]int{}, Precision: map[string]int{}}
	rows, err := readMain(mainCSV)
	if err != nil {
		return nil, rep, err
	}
	byKey := make(map[string]*mainRow, len(rows))
	for i := range rows {
		e := &rows[i].entry
		k := key(e.Provider, e.Model)
		if byKey[k] != nil {
			return nil, rep, fmt.Errorf("main file line %d: %s/%s is listed twice", rows[i].line, e.Provider, e.Model)
		}
		byKey[k] = &rows[i]
	}
	if err := joinDetailed(detailedCSV, byKey, &rep); err != nil {
		return nil, rep, err
	}

	entries := make([]schema.Entry, 0, len(rows))
	names := map[string]string{} // provider + name → model, to catch a name claimed twice
	for _, r := range rows {
		e := r.entry
		if e.Precision == "" {
			return nil, rep, fmt.Errorf("main file line %d: %s/%s has no primary observation in the detailed file", r.line, e.Provider, e.Model)
		}
		for _, name := range append([]string{e.Model}, e.Aliases...) {
			k := key(e.Provider, strings.ToLower(name))
			if other, dup := names[k]; dup {
				return nil, rep, fmt.Errorf("%s: name %q belongs to both %s and %s", e.Provider, name, other, e.Model)
			}
			names[k] = e.Model
		}
		rep.Entries++
		rep.ByProvider[e.Provider]++
		rep.Aliases += len(e.Aliases)
		rep.Precision[e.Precision]++
		entries = append(entries, e)
	}
	return entries, rep, nil
}

func key(provider, model string) string { return provider + "\x00" + model }

func readMain(data []byte) ([]mainRow, error) {
	recs, col, err := readCSV(data, "provider", "model", "announced", "retired", "replacement", "source_url")
	if err != nil {
		return nil, fmt.Errorf("main file: %w", err)
	}
	rows := make([]mainRow, 0, len(recs))
	for i, rec := range recs {
		line := i + 2
		e := schema.Entry{
			Provider:    rec[col["provider"]],
			Model:       rec[col["model"]],
			Announced:   rec[col["announced"]],
			Retired:     rec[col["retired"]],
			Replacement: rec[col["replacement"]],
		}
		if e.Provider == "" || e.Model == "" {
			return nil, fmt.Errorf("main file line %d: provider and model are required", line)
		}
		if err := checkDates(e.Announced, e.Retired); err != nil {
			return nil, fmt.Errorf("main file line %d: %w", line, err)
		}
		for _, u := range strings.Split(rec[col["source_url"]], " ; ") {
			u = strings.TrimSpace(u)
			if !strings.HasPrefix(u, "https://") {
				return nil, fmt.Errorf("main file line %d: source %q is not an https URL", line, u)
			}
			e.Sources = append(e.Sources, u)
		}
		rows = append(rows, mainRow{entry: e, line: line})
	}
	return rows, nil
}

// joinDetailed fills precision, vendor page, as-of date and aliases into the
// main rows. Aliases come from every observation that agrees with the main
// row's retirement date: the source unifies aliases across observations.
func joinDetailed(data []byte, byKey map[string]*mainRow, rep *report) error {
	recs, col, err := readCSV(data, "provider", "row_model", "model", "aliases", "retired", "retired_precision",
		"vendor_page", "as_of", "used_for_main_row", "retired_agrees_with_main")
	if err != nil {
		return fmt.Errorf("detailed file: %w", err)
	}
	for i, rec := range recs {
		line := i + 2
		provider, rowModel, use := rec[col["provider"]], rec[col["row_model"]], rec[col["used_for_main_row"]]
		r := byKey[key(provider, rowModel)]
		if r == nil {
			if !strings.HasPrefix(use, "excluded") {
				return fmt.Errorf("detailed file line %d: %s/%s is not in the main file and not marked excluded", line, provider, rowModel)
			}
			rep.Excluded++
			continue
		}
		e := &r.entry
		retired := rec[col["retired"]]
		if use == "primary" {
			if e.Precision != "" {
				return fmt.Errorf("detailed file line %d: second primary observation for %s/%s", line, provider, rowModel)
			}
			if retired != e.Retired {
				return fmt.Errorf("detailed file line %d: primary observation of %s/%s retires on %q, main file on %q", line, provider, rowModel, retired, e.Retired)
			}
			p := rec[col["retired_precision"]]
			if !precisions[p] {
				return fmt.Errorf("detailed file line %d: unknown precision %q", line, p)
			}
			e.Precision, e.VendorPage, e.AsOf = p, rec[col["vendor_page"]], rec[col["as_of"]]
			if e.AsOf != "" {
				if _, err := time.Parse(time.DateOnly, e.AsOf); err != nil {
					return fmt.Errorf("detailed file line %d: as_of %q is not a date", line, e.AsOf)
				}
			}
		}
		if rec[col["retired_agrees_with_main"]] != "yes" || retired != e.Retired {
			rep.Disagreeing = append(rep.Disagreeing, fmt.Sprintf("%s/%s retired %s (main %s)", provider, rowModel, retired, e.Retired))
			continue
		}
		names := strings.Split(rec[col["aliases"]], ";")
		names = append(names, rec[col["model"]])
		for _, a := range names {
			a = strings.TrimSpace(a)
			if a != "" && !strings.EqualFold(a, e.Model) && !slices.ContainsFunc(e.Aliases, func(b string) bool { return strings.EqualFold(a, b) }) {
				e.Aliases = append(e.Aliases, a)
			}
		}
		slices.Sort(e.Aliases)
	}
	return nil
}

func checkDates(announced, retired string) error {
	if announced == "" && retired == "" {
		return errors.New("neither an announcement nor a retirement date")
	}
	var a, r time.Time
	var err error
	if announced != "" {
		if a, err = time.Parse(time.DateOnly, announced); err != nil {
			return fmt.Errorf("announced %q is not a date", announced)
		}
	}
	if retired != "" {
		if r, err = time.Parse(time.DateOnly, retired); err != nil {
			return fmt.Errorf("retired %q is not a date", retired)
		}
	}
	if announced != "" && retired != "" && r.Before(a) {
		return fmt.Errorf("retired %s before announced %s", retired, announced)
	}
	return nil
}

// readCSV reads a CSV file with a header row and returns the records after
// it and the index of each wanted column. Extra columns are ignored; a
// missing one is an error.
func readCSV(data []byte, want ...string) ([][]string, map[string]int, error) {
	r := csv.NewReader(bytes.NewReader(data))
	recs, err := r.ReadAll()
	if err != nil {
		return nil, nil, err
	}
	if len(recs) == 0 {
		return nil, nil, errors.New("empty file")
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, w := range want {
		if _, ok := col[w]; !ok {
			return nil, nil, fmt.Errorf("no %q column", w)
		}
	}
	return recs[1:], col, nil
}
