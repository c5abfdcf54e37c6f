package pricing

import (
	"strings"
	"sync"
	"time"
)

// providerAliases maps OpenTelemetry gen_ai.provider.name values, and the
// legacy gen_ai.system values, to table provider IDs where neither the ID
// nor the source's own provider rules would find them. Names equal to a
// table ID (openai, anthropic, deepseek, groq, perplexity, cohere, …) need
// no entry. Names with no table provider (ibm.watsonx.ai, ollama, …) stay
// unknown rather than borrowing another provider's prices.
var providerAliases = map[string]string{
	"aws.bedrock":        "aws",
	"azure.ai.openai":    "azure",
	"az.ai.openai":       "azure", // legacy
	"azure.ai.inference": "azure",
	"az.ai.inference":    "azure", // legacy
	"gcp.gemini":         "google",
	"gcp.vertex_ai":      "google",
	"gcp.gen_ai":         "google",
	"gemini":             "google", // legacy
	"vertex_ai":          "google", // legacy
	"mistral_ai":         "mistral",
	"x_ai":               "x-ai",
	"xai":                "x-ai", // legacy
}

// Inputs longer than these are not model or provider names (the source caps
// IDs at 100 bytes; Bedrock ARNs reach about 150). They are reported unknown
// without matching or caching.
const (
	maxModelLen    = 512
	maxProviderLen = 128
)

// Lookup finds the price entry for a call and the period in effect at `at`
// (the call's start time). provider is gen_ai.provider.name or the legacy
// gen_ai.system; model is gen_ai.response.model, or the request model when
// the response has none. ok is false when the table has no entry. An entry
// the source lists without a token price is returned with unknown Rates.
//
// Matching follows the source: the provider's entries in order, first match
// wins, then its fallback providers (Azure → OpenAI, Anthropic; Google →
// Anthropic). Names are compared case-insensitively. If nothing matches and
// the model has a path ("models/gemini-2.5-pro", "openai/gpt-4o"), the last
// segment is tried. An empty provider is inferred from the model name by the
// providers' model rules, as genai-prices does.
func (t *Table) Lookup(provider, model string, at time.Time) (Price, bool) {
	m := t.resolve(provider, model)
	if m == nil {
		return Price{}, false
	}
	return m.priceAt(at), true
}

func (m *model) priceAt(at time.Time) Price {
	if len(m.periods) == 0 {
		return m.unpriced
	}
	unix := at.Unix()
	tod := unix % 86400
	if tod < 0 {
		tod += 86400
	}
	// The source's rule: the last period whose condition holds wins; if
	// none holds, the first.
	for i := len(m.periods) - 1; i >= 0; i-- {
		p := &m.periods[i]
		switch p.kind {
		case always:
			return p.price
		case fromDate:
			if unix >= p.start {
				return p.price
			}
		case timeOfDay:
			if inWindow(tod, p.todFrom, p.todTo) {
				return p.price
			}
		}
	}
	return m.periods[0].price
}

func inWindow(tod, from, to int64) bool {
	if from <= to {
		return from <= tod && tod < to
	}
	return tod >= from || tod < to // wraps past midnight
}

func (t *Table) resolve(provider, model string) *model {
	if model == "" || len(model) > maxModelLen || len(provider) > maxProviderLen {
		return nil
	}
	key := cacheKey{provider, model}
	if m, ok := t.cache.get(key); ok {
		return m
	}
	m := t.match(strings.ToLower(strings.TrimSpace(provider)), strings.ToLower(strings.TrimSpace(model)))
	// Clone so the cache does not pin the caller's (possibly larger) buffers.
	t.cache.put(cacheKey{strings.Clone(provider), strings.Clone(model)}, m)
	return m
}

func (t *Table) match(provider, ref string) *model {
	refs := []string{ref}
	if i := strings.LastIndexByte(ref, '/'); i >= 0 && i < len(ref)-1 {
		refs = append(refs, ref[i+1:])
	}
	for _, r := range refs {
		p := t.findProvider(provider, r)
		if p == nil {
			continue
		}
		if m := p.findModel(r, true); m != nil {
			return m
		}
	}
	return nil
}

func (t *Table) findProvider(name, ref string) *provider {
	if name == "" {
		for _, p := range t.providers {
			if p.modelMatch != nil && p.modelMatch.match(ref) {
				return p
			}
		}
		return nil
	}
	if p := t.byID[name]; p != nil {
		return p
	}
	if p := t.byID[providerAliases[name]]; p != nil {
		return p
	}
	for _, p := range t.providers {
		if p.match != nil && p.match.match(name) {
			return p
		}
	}
	return nil
}

// findModel tries the provider's entries, then (one level only, as in the
// source) its fallback providers'.
func (p *provider) findModel(ref string, withFallbacks bool) *model {
	for _, m := range p.models {
		if m.match.match(ref) {
			return m
		}
	}
	if withFallbacks {
		for _, fb := range p.fallbacks {
			if m := fb.findModel(ref, false); m != nil {
				return m
			}
		}
	}
	return nil
}

// maxCacheEntries bounds the lookup cache: model names come from telemetry,
// so their number is not ours to choose. When full, the cache starts over.
const maxCacheEntries = 4096

type cacheKey struct{ provider, model string }

// lookupCache remembers the entry (or the absence of one) for a raw
// (provider, model) pair, so repeated calls skip matching.
type lookupCache struct {
	mu sync.RWMutex
	m  map[cacheKey]*model
}

func (c *lookupCache) get(k cacheKey) (*model, bool) {
	c.mu.RLock()
	m, ok := c.m[k]
	c.mu.RUnlock()
	return m, ok
}

func (c *lookupCache) put(k cacheKey, m *model) {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCacheEntries {
		c.m = make(map[cacheKey]*model, 64)
	}
	c.m[k] = m
	c.mu.Unlock()
}
