package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketlabs/docket/internal/gentest"
	"github.com/docketlabs/docket/ledger/pricing/internal/schema"
)

const pkgDir = "../.." // ledger/pricing, where go:generate runs

// Output is the table the converter writes, for gentest.Current.
func (c config) Output() string { return c.out }

func TestShippedTableIsCurrent(t *testing.T) {
	rep := gentest.Current(t, pkgDir, parseFlags, generate)
	// Numbers PROVENANCE.md quotes.
	if rep.Providers != 36 || rep.Models != 1466 || rep.Checked != 385 || len(rep.Free) != 151 ||
		len(rep.Unpriced) != 6 || len(rep.Rounded) != 7 {
		t.Errorf("report: providers %d models %d checked %d free %d unpriced %d rounded %d",
			rep.Providers, rep.Models, rep.Checked, len(rep.Free), len(rep.Unpriced), len(rep.Rounded))
	}
}

func TestConvert(t *testing.T) {
	src := `[{"id":"acme","name":"Acme","api_pattern":"x","provider_match":{"contains":"acme"},
	  "fallback_model_providers":["other"],"models":[
	{"id":"tiered","name":"T","match":{"starts_with":"tiered"},"prices":{
	  "input_mtok":{"base":1,"tiers":[{"start":200000,"price":2}]},
	  "output_mtok":{"base":10,"tiers":[{"start":128000,"price":15},{"start":200000,"price":20}]},
	  "cache_read_mtok":0.1,"web_searches_kcount":10,"input_audio_mtok":3}},
	{"id":"dated","match":{"equals":"dated"},"deprecated":true,"prices":[
	  {"prices":{"input_mtok":10,"output_mtok":40}},
	  {"constraint":{"start_date":"2025-06-10"},"prices":{"input_mtok":2,"output_mtok":8,"output_reasoning_mtok":3,"requests_kcount":12}},
	  {"constraint":{"start_time":"00:30:00Z","end_time":"16:30:00Z"},"prices":{"input_mtok":0.18000000000000002,"output_mtok":0.08333333333333334}}]},
	{"id":"m:free","match":{"equals":"m:free"},"prices":{}},
	{"id":"gratis","name":"Gratis (free)","match":{"equals":"gratis"},"prices":{}},
	{"id":"placeholder","match":{"equals":"placeholder"},"prices":{}}]}]`
	checked := checkedDates{"acme": {"dated": "2025-07-12"}}
	got, rep, err := convert([]byte(src), checked, schema.Source{Name: "genai-prices", Commit: "c"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"schema":1,"source":{"name":"genai-prices","commit":"c"},"providers":[{"id":"acme","match":{"contains":"acme"},"fallbacks":["other"],"models":[` +
		// Per-field tiers become full price sets at each threshold: above
		// 128k only output changes; above 200k both do.
		`{"id":"tiered","match":{"starts_with":"tiered"},"periods":[{"prices":{"input":"1","output":"10","cache_read":"0.1"},"tiers":[` +
		`{"above_input_tokens":128000,"prices":{"input":"1","output":"15","cache_read":"0.1"}},` +
		`{"above_input_tokens":200000,"prices":{"input":"2","output":"20","cache_read":"0.1"}}]}]},` +
		`{"id":"dated","match":{"equals":"dated"},"prices_checked":"2025-07-12","deprecated":true,"periods":[` +
		`{"prices":{"input":"10","output":"40"}},` +
		`{"start_date":"2025-06-10","prices":{"input":"2","output":"8","reasoning":"3","requests_kcount":"12"}},` +
		`{"time_of_day":{"start":"00:30:00Z","end":"16:30:00Z"},"prices":{"input":"0.18","output":"0.083333"}}]},` +
		`{"id":"m:free","match":{"equals":"m:free"},"periods":[{"prices":{"input":"0","output":"0"}}]},` +
		`{"id":"gratis","match":{"equals":"gratis"},"periods":[{"prices":{"input":"0","output":"0"}}]},` +
		`{"id":"placeholder","match":{"equals":"placeholder"},"periods":[]}]}]}`
	j, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(j) != want {
		t.Errorf("converted:\n%s\nwant:\n%s", j, want)
	}
	if rep.Dropped["web_searches_kcount"] != 1 || rep.Dropped["input_audio_mtok"] != 1 || len(rep.Rounded) != 2 ||
		len(rep.Free) != 2 || len(rep.Unpriced) != 1 || rep.Checked != 1 {
		t.Errorf("report %+v", rep)
	}
	// The encoded form is the same table, one model per line.
	enc, err := encode(got)
	if err != nil {
		t.Fatal(err)
	}
	var back schema.File
	if err := json.Unmarshal(enc, &back); err != nil {
		t.Fatal(err)
	}
	if j2, _ := json.Marshal(back); string(j2) != want {
		t.Errorf("encode round trip differs:\n%s", j2)
	}
	if lines := bytes.Count(enc, []byte("\n")); lines != 2+1+5+2 {
		t.Errorf("encoded table has %d lines:\n%s", lines, enc)
	}
}

func TestConvertRejects(t *testing.T) {
	model := func(m string) string { return `[{"id":"p","models":[` + m + `]}]` }
	cases := []struct{ name, src, want string }{
		{"unknown price key", model(`{"id":"m","match":{"equals":"m"},"prices":{"input_mtok":1,"cache_write_5m_mtok":2}}`), "unknown price key"},
		{"negative price", model(`{"id":"m","match":{"equals":"m"},"prices":{"input_mtok":-1}}`), "negative"},
		{"tiers not ascending", model(`{"id":"m","match":{"equals":"m"},"prices":{"input_mtok":{"base":1,"tiers":[{"start":5,"price":2},{"start":5,"price":3}]}}}`), "not ascending"},
		{"tiered request fee", model(`{"id":"m","match":{"equals":"m"},"prices":{"requests_kcount":{"base":1,"tiers":[]}}}`), "cannot be tiered"},
		{"unknown constraint", model(`{"id":"m","match":{"equals":"m"},"prices":[{"constraint":{"weekday":"mon"},"prices":{}}]}`), "unknown field"},
		{"half a time window", model(`{"id":"m","match":{"equals":"m"},"prices":[{"constraint":{"start_time":"01:00:00Z"},"prices":{}}]}`), "constraint must be"},
		{"unknown match operation", model(`{"id":"m","match":{"not":"m"},"prices":{}}`), "exactly one"},
		{"regex Go cannot compile", model(`{"id":"m","match":{"regex":"(?<=a)b"},"prices":{}}`), "regex"},
		{"bad provider rule", `[{"id":"p","provider_match":{"or":[]},"models":[]}]`, "empty or/and"},
		{"not an array", `{}`, "cannot unmarshal"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := convert([]byte(c.src), nil, schema.Source{Name: "x"})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
}

func TestReadChecked(t *testing.T) {
	dir := t.TempDir()
	yml := "id: acme\nmodels:\n  - id: a\n    prices_checked: 2025-11-06\n    prices: {input_mtok: 1}\n  - id: b\n    prices: {}\n"
	if err := os.WriteFile(filepath.Join(dir, "acme.yml"), []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := readChecked(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got["acme"]["a"] != "2025-11-06" || len(got["acme"]) != 1 {
		t.Errorf("readChecked = %v", got)
	}
}

func TestParseFlagsRequiresInputs(t *testing.T) {
	if _, err := parseFlags([]string{"-in", "a"}); err == nil {
		t.Error("accepted missing -out and -commit")
	}
}
