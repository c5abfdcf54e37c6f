package retirement

import (
	"regexp"
	"slices"
	"strings"
)

// platforms maps OpenTelemetry gen_ai.provider.name values, legacy
// gen_ai.system values and the table's own IDs to the table platforms to
// search. Partner platforms have schedules of their own (Bedrock's
// extended access, Vertex dates that differ from the Gemini API), so a name
// without a table platform stays unknown rather than borrowing the
// vendor's dates.
var platforms = map[string][]string{
	"openai":             {"openai"},
	"anthropic":          {"anthropic"},
	"google":             {"google"},
	"gcp.gemini":         {"google"},
	"gemini":             {"google"}, // legacy
	"google-vertex":      {"google-vertex"},
	"gcp.vertex_ai":      {"google-vertex"},
	"vertex_ai":          {"google-vertex"}, // legacy
	"aws-bedrock":        {"aws-bedrock"},
	"aws.bedrock":        {"aws-bedrock"},
	"azure-ai-foundry":   {"azure-ai-foundry"},
	"azure.ai.openai":    {"azure-ai-foundry"},
	"az.ai.openai":       {"azure-ai-foundry"}, // legacy
	"azure.ai.inference": {"azure-ai-foundry"},
	"az.ai.inference":    {"azure-ai-foundry"}, // legacy
	// gcp.gen_ai does not say which Google surface answered; both are
	// searched and the earlier retirement wins, so a model retired on either
	// surface is never called.
	"gcp.gen_ai": {"google", "google-vertex"},
	// No provider recorded: the vendors' own APIs, whose model names do not
	// overlap.
	"": {"openai", "anthropic", "google"},
}

// Inputs longer than these are not provider or model names (Bedrock ARNs
// reach about 150 bytes); they are unknown without further work.
const (
	maxModelLen    = 512
	maxProviderLen = 128
)

// fineTunePrefix starts the table's entries for OpenAI fine-tunes of a
// base family ("ft-gpt-4"); the API reports such models as
// "ft:gpt-4-0613:org:suffix:id".
const fineTunePrefix = "ft-"

// bedrockID matches Bedrock model IDs and inference-profile IDs:
// an optional cross-region prefix, the vendor, the vendor's model ID and a
// version suffix — "us.anthropic.claude-3-7-sonnet-20250219-v1:0",
// "amazon.nova-premier-v1:0". The table lists Bedrock models by the
// vendor's ID, which is the third part.
var bedrockID = regexp.MustCompile(`^(?:(?:us|eu|apac|jp|au|ca|global|us-gov)\.)?[a-z0-9-]+\.([a-z0-9][a-z0-9.-]*?)(?:-v\d+(?::\d+)?)?$`)

// Lookup finds the entry for a model on a provider. provider is
// gen_ai.provider.name or the legacy gen_ai.system (or a table platform
// ID); model is the response model. Names are compared case-insensitively.
// Besides exact names and listed aliases, Lookup understands the last
// segment of a path ("models/gemini-2.5-pro", Bedrock ARNs), Bedrock model
// IDs, and OpenAI fine-tune names, which map to their base family's entry.
func (t *Table) Lookup(provider, model string) (Entry, bool) {
	if len(provider) > maxProviderLen || len(model) > maxModelLen {
		return Entry{}, false
	}
	model = strings.ToLower(strings.TrimSpace(model))
	if model == "" {
		return Entry{}, false
	}
	best := -1
	for _, p := range platforms[strings.ToLower(strings.TrimSpace(provider))] {
		i := t.find(p, model)
		if i < 0 {
			continue
		}
		if best < 0 || retiresBefore(t.entries[i], t.entries[best]) {
			best = i
		}
	}
	if best < 0 {
		return Entry{}, false
	}
	e := t.entries[best]
	e.Aliases = slices.Clone(e.Aliases)
	e.Source.URLs = slices.Clone(e.Source.URLs)
	return e, true
}

// retiresBefore orders entries by retirement date, unknown dates last.
func retiresBefore(a, b Entry) bool {
	switch {
	case a.Retired == nil:
		return false
	case b.Retired == nil:
		return true
	}
	return a.Retired.Start().Before(b.Retired.Start())
}

// find returns the index of the entry for model on one platform, or -1.
func (t *Table) find(platform, model string) int {
	names := t.byName[platform]
	if names == nil {
		return -1
	}
	for _, c := range candidates(platform, model) {
		if i, ok := names[c]; ok {
			return i
		}
	}
	if base, ok := fineTuneBase(model); ok {
		for _, i := range t.fineTunes[platform] {
			family := strings.ToLower(strings.TrimPrefix(t.entries[i].Model, fineTunePrefix))
			if inFamily(base, family) {
				return i
			}
		}
	}
	return -1
}

// candidates returns the names model may be listed under, most specific
// first.
func candidates(platform, model string) []string {
	out := []string{model}
	if i := strings.LastIndexByte(model, '/'); i >= 0 && i < len(model)-1 {
		out = append(out, model[i+1:])
	}
	if platform == "aws-bedrock" {
		for _, c := range out {
			if m := bedrockID.FindStringSubmatch(c); m != nil {
				out = append(out, m[1])
			}
		}
	}
	return out
}

// fineTuneBase returns the base model of an OpenAI fine-tune name
// ("ft:gpt-4-0613:acme::8abc" → "gpt-4-0613").
func fineTuneBase(model string) (string, bool) {
	rest, ok := strings.CutPrefix(model, "ft:")
	if !ok {
		return "", false
	}
	base, _, _ := strings.Cut(rest, ":")
	return base, base != ""
}

// inFamily reports whether a base model belongs to a family: the family
// itself or one of its dated or numbered snapshots ("gpt-4" has
// "gpt-4-0613", not "gpt-4o" or "gpt-4.1").
func inFamily(base, family string) bool {
	if base == family {
		return true
	}
	rest, ok := strings.CutPrefix(base, family+"-")
	return ok && rest != "" && rest[0] >= '0' && rest[0] <= '9'
}

// sortLongestFirst orders fine-tune family entries so that the most specific
// family matches first.
func sortLongestFirst(idx []int, entries []Entry) {
	slices.SortStableFunc(idx, func(a, b int) int { return len(entries[b].Model) - len(entries[a].Model) })
}
