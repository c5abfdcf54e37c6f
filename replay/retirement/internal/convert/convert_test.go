package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/docketlabs/docket/internal/gentest"
	"github.com/docketlabs/docket/replay/retirement/internal/schema"
)

const pkgDir = "../.." // replay/retirement, where go:generate runs

// Output is the table the converter writes, for gentest.Current.
func (c config) Output() string { return c.out }

func TestShippedTableIsCurrent(t *testing.T) {
	rep := gentest.Current(t, pkgDir, parseFlags, generate)
	// Numbers PROVENANCE.md quotes (the per-provider counts are the
	// source's own completeness table).
	wantProviders := map[string]int{"anthropic": 21, "openai": 123, "google": 45, "google-vertex": 10, "aws-bedrock": 11, "azure-ai-foundry": 1}
	for p, n := range wantProviders {
		if rep.ByProvider[p] != n {
			t.Errorf("%s: %d entries, want %d", p, rep.ByProvider[p], n)
		}
	}
	if rep.Entries != 211 || len(rep.ByProvider) != len(wantProviders) || rep.Aliases != 38 || rep.Excluded != 7 ||
		rep.Precision["exact"] != 159 || rep.Precision["earliest"] != 51 || rep.Precision["tentative"] != 1 ||
		len(rep.Disagreeing) != 1 || !strings.HasPrefix(rep.Disagreeing[0], "google-vertex/gemini-2.5-flash-image ") {
		t.Errorf("report %+v", rep)
	}
}

const (
	mainHeader     = "provider,model,announced,retired,replacement,source_url\n"
	detailedHeader = "provider,row_model,model,aliases,announced,retired,retired_precision,replacement,vendor_page,as_of,used_for_main_row,retired_agrees_with_main,notes\n"
)

func TestConvert(t *testing.T) {
	mainCSV := mainHeader +
		"acme,big-2025-01-01,2025-06-01,2026-01-01,big-2,https://a.example/feed.json ; https://b.example/event.json\n" +
		"acme,small,,2026-03-01,,https://a.example/feed.json\n"
	detailedCSV := detailedHeader +
		"acme,big-2025-01-01,big-2025-01-01,big;big-latest,2025-06-01,2026-01-01,exact,big-2,https://acme.example/deprecations,2025-12-01,primary,yes,\n" +
		// A corroborating observation under another ID adds that ID as an alias.
		"acme,big-2025-01-01,big-v1,big,2025-06-01,2026-01-01,exact,,https://acme.example/deprecations,,corroboration,yes,\n" +
		// One that disagrees on the date adds nothing and is reported.
		"acme,small,small,small-old,,2026-09-01,earliest,,https://acme.example/deprecations,2025-11-01,corroboration,NO,\n" +
		"acme,small,small,,,2026-03-01,earliest,,https://acme.example/deprecations,,primary,yes,\n" +
		"acme,floor,floor,,,2027-01-01,earliest,,https://acme.example/deprecations,,excluded from the main file: a not-before floor,yes,\n"
	entries, rep, err := convert([]byte(mainCSV), []byte(detailedCSV))
	if err != nil {
		t.Fatal(err)
	}
	want := []schema.Entry{
		{Provider: "acme", Model: "big-2025-01-01", Aliases: []string{"big", "big-latest", "big-v1"}, Announced: "2025-06-01", Retired: "2026-01-01",
			Precision: "exact", Replacement: "big-2", Sources: []string{"https://a.example/feed.json", "https://b.example/event.json"},
			VendorPage: "https://acme.example/deprecations", AsOf: "2025-12-01"},
		{Provider: "acme", Model: "small", Retired: "2026-03-01", Precision: "earliest", Sources: []string{"https://a.example/feed.json"},
			VendorPage: "https://acme.example/deprecations"},
	}
	gotJSON, _ := json.Marshal(entries)
	wantJSON, _ := json.Marshal(want)
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("converted:\n%s\nwant:\n%s", gotJSON, wantJSON)
	}
	if rep.Entries != 2 || rep.Aliases != 3 || rep.Excluded != 1 || len(rep.Disagreeing) != 1 || rep.Precision["earliest"] != 1 {
		t.Errorf("report %+v", rep)
	}

	// The encoded form is the same table, one entry per line.
	enc, err := encode(schema.File{Schema: schema.Version, Source: schema.Source{Name: "x"}, Entries: entries})
	if err != nil {
		t.Fatal(err)
	}
	var back schema.File
	if err := json.Unmarshal(enc, &back); err != nil {
		t.Fatal(err)
	}
	if j, _ := json.Marshal(back.Entries); string(j) != string(wantJSON) {
		t.Errorf("encode round trip differs:\n%s", j)
	}
	if lines := bytes.Count(enc, []byte("\n")); lines != 2+len(entries)+1 {
		t.Errorf("encoded table has %d lines:\n%s", lines, enc)
	}
}

func TestConvertRejects(t *testing.T) {
	okDetail := "acme,m,m,,,2026-01-01,exact,,https://v.example,,primary,yes,\n"
	cases := []struct{ name, main, detailed, want string }{
		{"missing column", "provider,model,retired\nacme,m,2026-01-01\n", detailedHeader + okDetail, `no "announced" column`},
		{"bad date", mainHeader + "acme,m,,2026-02-30,,https://s.example\n", detailedHeader + okDetail, "not a date"},
		{"no dates", mainHeader + "acme,m,,,,https://s.example\n", detailedHeader + okDetail, "neither"},
		{"retired before announced", mainHeader + "acme,m,2026-02-01,2026-01-01,,https://s.example\n", detailedHeader + okDetail, "before announced"},
		{"source not a URL", mainHeader + "acme,m,,2026-01-01,,see notes\n", detailedHeader + okDetail, "not an https URL"},
		{"duplicate row", mainHeader + "acme,m,,2026-01-01,,https://s.example\nacme,m,,2026-01-01,,https://s.example\n", detailedHeader + okDetail, "listed twice"},
		{"no primary", mainHeader + "acme,m,,2026-01-01,,https://s.example\n", detailedHeader, "no primary observation"},
		{"two primaries", mainHeader + "acme,m,,2026-01-01,,https://s.example\n", detailedHeader + okDetail + okDetail, "second primary"},
		{"primary disagrees", mainHeader + "acme,m,,2026-01-02,,https://s.example\n", detailedHeader + okDetail, "primary observation"},
		{"unknown precision", mainHeader + "acme,m,,2026-01-01,,https://s.example\n", detailedHeader + "acme,m,m,,,2026-01-01,approx,,https://v.example,,primary,yes,\n", "unknown precision"},
		{"orphan observation", mainHeader + "acme,m,,2026-01-01,,https://s.example\n", detailedHeader + okDetail + "acme,x,x,,,2026-01-01,exact,,https://v.example,,corroboration,yes,\n", "not in the main file"},
		{"alias claimed twice", mainHeader + "acme,m,,2026-01-01,,https://s.example\nacme,n,,2026-01-01,,https://s.example\n",
			detailedHeader + "acme,m,m,shared,,2026-01-01,exact,,https://v.example,,primary,yes,\nacme,n,n,shared,,2026-01-01,exact,,https://v.example,,primary,yes,\n", "belongs to both"},
		{"ragged CSV", mainHeader + "acme,m\n", detailedHeader, "wrong number of fields"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := convert([]byte(c.main), []byte(c.detailed))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
}

func TestParseFlagsRequiresInputs(t *testing.T) {
	if _, err := parseFlags([]string{"-main", "a"}); err == nil {
		t.Error("accepted missing -detailed and -out")
	}
}
