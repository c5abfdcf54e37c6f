package retirement

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func table(t testing.TB) *Table {
	t.Helper()
	tbl, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

func dateString(d *Date) string {
	if d == nil {
		return ""
	}
	return d.String()
}

const (
	modelEOL       = "https://github.com/thossullivan/model-eol/blob/3d56010dda03febc2beab1a8c7d366e1f0807006/feeds/"
	anthropicPage  = "https://platform.claude.com/docs/en/about-claude/model-deprecations"
	openaiPage     = "https://developers.openai.com/api/docs/deprecations"
	geminiPage     = "https://ai.google.dev/gemini-api/docs/deprecations"
	providerWatch  = "https://github.com/ottto-ai/ai-provider-watch/blob/351f92cf4c3ce1e4f86b5fa7f3b4abea90f24abf/data/events/"
	modelpinCommit = "https://github.com/samarthputhraya/Modelpin/blob/0422c5db04e5fdc290f2f16f969353a86f176650/data/models.json"
)

// Rows read by hand from source/model_retirements.csv (dates, replacement,
// source URLs) and source/model_retirements_detailed.csv (precision, vendor
// page, as-of date and aliases of the observation marked primary).
func TestLookupAgainstSourceRows(t *testing.T) {
	tbl := table(t)
	if tbl.Len() != 211 || tbl.Prepared() != "2026-11-29" {
		t.Errorf("table has %d entries prepared %q", tbl.Len(), tbl.Prepared())
	}
	cases := []struct {
		provider, model string // as a ledger row would carry them
		wantModel       string
		announced       string
		retired         string
		precision       Precision
		replacement     string
		sources         []string
		vendorPage      string
		asOf            string
	}{
		{"anthropic", "claude-sonnet-4-20250514", "claude-sonnet-4-20250514", "2026-04-14", "2026-06-15", PrecisionExact, "claude-sonnet-4-6",
			[]string{modelEOL + "anthropic.json"}, anthropicPage, "2026-08-18"},
		{"anthropic", "claude-opus-4-5-20251101", "claude-opus-4-5-20251101", "2026-11-23", "2027-01-22", PrecisionTentative, "claude-opus-5-5",
			[]string{"https://github.com/samarthputhraya/Modelpin/releases/tag/v0.5.7"}, anthropicPage, "2026-11-26"},
		{"openai", "gpt-4-0613", "gpt-4-0613", "2026-04-22", "2026-10-23", PrecisionExact, "gpt-5.6-sol",
			[]string{modelEOL + "openai.json"}, openaiPage, "2026-08-18"},
		{"openai", "o1-mini", "o1-mini", "2025-04-28", "2025-10-27", PrecisionExact, "o4-mini",
			[]string{modelEOL + "openai.json"}, openaiPage, "2026-08-18"},
		// Two sources in one row; the Gemini API gives earliest-possible dates.
		{"gcp.gemini", "gemini-2.0-flash", "gemini-2.0-flash", "2026-02-18", "2026-06-01", PrecisionEarliest, "gemini-3.6-flash",
			[]string{modelEOL + "google.json", providerWatch + "2026-06-01-google-gemini-api-20-flash-shutdown.json"}, geminiPage, "2026-08-18"},
		{"gcp.gemini", "gemini-2.5-pro", "gemini-2.5-pro", "", "2026-12-01", PrecisionExact, "gemini-3.8-flash",
			[]string{"https://dev.to/aideprecations/what-to-do-before-gemini-25-pro-and-25-flash-are-retired-on-december-1-2026-5gg9"}, geminiPage, "2026-11-10"},
		// The same model on Vertex AI has a date of its own.
		{"gcp.vertex_ai", "gemini-2.5-pro", "gemini-2.5-pro", "", "2026-10-20", PrecisionEarliest, "gemini-3.5-flash",
			[]string{modelEOL + "google.json", modelpinCommit}, "https://docs.cloud.google.com/gemini-enterprise-agent-platform/models/model-versions", "2026-08-18"},
		{"aws.bedrock", "claude-3-7-sonnet-20250219", "claude-3-7-sonnet-20250219", "2026-01-30", "2026-07-30", PrecisionExact, "",
			[]string{modelEOL + "anthropic.json"}, "https://docs.aws.amazon.com/bedrock/latest/userguide/model-lifecycle.html", "2026-08-18"},
		{"azure.ai.openai", "o3-deep-research-2025-06-26", "o3-deep-research-2025-06-26", "", "2026-12-26", PrecisionExact, "",
			[]string{modelEOL + "openai.json"}, "https://learn.microsoft.com/en-us/azure/ai-foundry/openai/concepts/model-retirements", "2026-08-18"},
	}
	for _, c := range cases {
		e, ok := tbl.Lookup(c.provider, c.model)
		if !ok {
			t.Errorf("%s %s: not found", c.provider, c.model)
			continue
		}
		if e.Model != c.wantModel || dateString(e.Announced) != c.announced || dateString(e.Retired) != c.retired ||
			e.Precision != c.precision || e.Replacement != c.replacement {
			t.Errorf("%s %s: got %s announced %q retired %q %s replacement %q", c.provider, c.model,
				e.Model, dateString(e.Announced), dateString(e.Retired), e.Precision, e.Replacement)
		}
		if !slices.Equal(e.Source.URLs, c.sources) || e.Source.VendorPage != c.vendorPage || dateString(e.Source.AsOf) != c.asOf {
			t.Errorf("%s %s: source %+v (as of %s)", c.provider, c.model, e.Source, dateString(e.Source.AsOf))
		}
	}
}

func TestLookupNames(t *testing.T) {
	tbl := table(t)
	cases := []struct {
		provider, model string
		want            string // table model; "" = not found
		wantProvider    string
	}{
		// Aliases from the detailed file retire with their snapshot.
		{"openai", "gpt-4", "gpt-4-0613", "openai"},
		{"anthropic", "claude-sonnet-4", "claude-sonnet-4-20250514", "anthropic"},
		{"openai", "o1-mini-2024-09-12", "o1-mini", "openai"}, // an observation's model ID
		// Case and whitespace do not matter.
		{" OpenAI ", "GPT-4-0613 ", "gpt-4-0613", "openai"},
		// Paths: the Gemini API's "models/…" and gateway prefixes.
		{"gcp.gemini", "models/gemini-2.0-flash", "gemini-2.0-flash", "google"},
		{"gemini", "gemini-2.0-flash", "gemini-2.0-flash", "google"},       // legacy gen_ai.system
		{"vertex_ai", "gemini-2.5-pro", "gemini-2.5-pro", "google-vertex"}, // legacy
		// Bedrock model IDs, inference profiles and ARNs.
		{"aws.bedrock", "anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3-5-sonnet-20241022", "aws-bedrock"},
		{"aws.bedrock", "us.anthropic.claude-3-7-sonnet-20250219-v1:0", "claude-3-7-sonnet-20250219", "aws-bedrock"},
		{"aws.bedrock", "global.anthropic.claude-sonnet-4-20250514-v1:0", "claude-sonnet-4-20250514", "aws-bedrock"},
		{"aws.bedrock", "us.amazon.nova-premier-v1:0", "nova-premier", "aws-bedrock"},
		{"aws.bedrock", "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-haiku-20240307-v1:0", "claude-3-haiku-20240307", "aws-bedrock"},
		// Bedrock dates are not Anthropic's, and the other way round.
		{"aws.bedrock", "anthropic.claude-opus-4-20250514-v1:0", "", ""},
		{"anthropic", "anthropic.claude-3-7-sonnet-20250219-v1:0", "", ""},
		// OpenAI fine-tunes map to their base family, not to look-alikes.
		{"openai", "ft:gpt-4-0613:acme::8abcDEF", "ft-gpt-4", "openai"},
		{"openai", "ft:gpt-3.5-turbo-1106:acme:support:9xyz", "ft-gpt-3.5-turbo", "openai"},
		{"openai", "ft:gpt-4.1-nano-2025-04-14:acme::1a2b", "ft-gpt-4.1-nano-2025-04-14", "openai"},
		{"openai", "ft:gpt-4o-mini-2024-07-18:acme::1a2b", "", ""},
		{"openai", "ft:", "", ""},
		// gcp.gen_ai does not say which surface: the earlier retirement wins.
		{"gcp.gen_ai", "gemini-2.5-pro", "gemini-2.5-pro", "google-vertex"},
		// No provider recorded: the vendors' own APIs.
		{"", "claude-3-opus-20240229", "claude-3-opus-20240229", "anthropic"},
		// Not in the table, or not a provider the table covers.
		{"openai", "gpt-4o-mini-2024-07-18", "", ""},
		{"ibm.watsonx.ai", "gpt-4-0613", "", ""},
		{"openai", "", "", ""},
		{"openai", strings.Repeat("a", maxModelLen+1), "", ""},
	}
	for _, c := range cases {
		e, ok := tbl.Lookup(c.provider, c.model)
		if ok != (c.want != "") || e.Model != c.want || e.Provider != c.wantProvider {
			t.Errorf("Lookup(%q, %q) = %s/%s, %v; want %s/%s", c.provider, c.model, e.Provider, e.Model, ok, c.wantProvider, c.want)
		}
	}
}

func TestLookupReturnsACopy(t *testing.T) {
	tbl := table(t)
	e, _ := tbl.Lookup("openai", "gpt-4-0613")
	e.Aliases[0] = "changed"
	e.Source.URLs[0] = "changed"
	again, _ := tbl.Lookup("openai", "gpt-4-0613")
	if again.Aliases[0] == "changed" || again.Source.URLs[0] == "changed" {
		t.Error("a caller's change reached the table")
	}
}

func TestStatus(t *testing.T) {
	tbl := table(t)
	cases := []struct {
		provider, model string
		now             time.Time
		state           State
		text            string
	}{
		// claude-sonnet-4-5-20250929: announced 2026-09-30, retired 2026-11-30.
		{"anthropic", "claude-sonnet-4-5-20250929", day("2026-09-29"), Active, "active"},
		{"anthropic", "claude-sonnet-4-5-20250929", day("2026-09-30"), Announced, "announced, retires on 2026-11-30"},
		{"anthropic", "claude-sonnet-4-5-20250929", day("2026-11-30").Add(-time.Nanosecond), Announced, "announced, retires on 2026-11-30"},
		{"anthropic", "claude-sonnet-4-5-20250929", day("2026-11-30"), Retired, "retired on 2026-11-30"},
		// A retirement is reported the same way through an alias.
		{"anthropic", "claude-sonnet-4", day("2026-11-29"), Retired, "retired on 2026-06-15"},
		{"anthropic", "claude-opus-4-5-20251101", day("2026-11-29"), Announced, "announced, retires on 2027-01-22 (tentative)"},
		// No announcement date: deprecated as soon as it is in the table.
		{"gcp.gemini", "gemini-2.5-flash", day("2026-01-01"), Announced, "announced, retires on 2026-12-01"},
		{"gcp.vertex_ai", "gemini-2.5-flash", day("2026-11-29"), Retired, "retired on 2026-10-20 (earliest possible date)"},
		// A time zone other than UTC is compared as the same instant.
		{"openai", "gpt-4-0613", time.Date(2026, 10, 23, 1, 0, 0, 0, time.FixedZone("CEST", 2*3600)), Announced, "announced, retires on 2026-10-23"},
		{"openai", "gpt-4o-2024-08-06", day("2026-11-29"), Unknown, "unknown"},
	}
	for _, c := range cases {
		st := tbl.Status(c.provider, c.model, c.now)
		if st.State != c.state || st.String() != c.text {
			t.Errorf("Status(%s, %s, %s) = %s %q, want %s %q", c.provider, c.model, c.now, st.State, st.String(), c.state, c.text)
		}
	}
}

func TestParseRejects(t *testing.T) {
	entry := func(fields string) string {
		return `{"schema":1,"source":{"name":"x"},"entries":[{"provider":"p","model":"m","sources":["https://x"]` + fields + `}]}`
	}
	cases := map[string]string{
		"not JSON":          `{"schema":`,
		"other schema":      `{"schema":2,"entries":[]}`,
		"bad date":          entry(`,"precision":"exact","retired":"2026-13-01"`),
		"no dates":          entry(`,"precision":"exact"`),
		"unknown precision": entry(`,"precision":"soon","retired":"2026-01-01"`),
		"no model":          `{"schema":1,"entries":[{"provider":"p","precision":"exact","retired":"2026-01-01"}]}`,
		"name twice":        `{"schema":1,"entries":[{"provider":"p","model":"m","precision":"exact","retired":"2026-01-01"},{"provider":"p","model":"n","aliases":["M"],"precision":"exact","retired":"2026-01-01"}]}`,
	}
	for name, data := range cases {
		if _, err := Parse([]byte(data)); err == nil {
			t.Errorf("%s: Parse accepted it", name)
		}
	}
	if _, err := Parse([]byte(entry(`,"precision":"exact","retired":"2026-01-01"`))); err != nil {
		t.Errorf("a minimal table: %v", err)
	}
}
