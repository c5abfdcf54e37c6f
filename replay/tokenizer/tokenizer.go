// Package tokenizer gives the distribution analysis the tokenizer of a
// model where one is public: the OpenAI families' byte-pair encodings
// (o200k_base, cl100k_base), embedded in the binary by
// github.com/tiktoken-go/tokenizer (MIT) so that nothing is fetched at run
// time. Other families (Anthropic, Gemini, …) publish no tokenizer: For
// says so, and divergence stays in characters.
package tokenizer

import (
	"strings"
	"sync"

	"github.com/tiktoken-go/tokenizer/codec"

	"github.com/docketlabs/docket/replay/distribution"
)

// Encodings.
const (
	O200kBase  = "o200k_base"
	Cl100kBase = "cl100k_base"
)

// openAIFamilies maps model name prefixes to encodings, most specific
// first (gpt-4o before gpt-4). The one place a model meets its encoding.
var openAIFamilies = []struct{ prefix, encoding string }{
	{"gpt-4o", O200kBase},
	{"chatgpt-4o", O200kBase},
	{"gpt-4.1", O200kBase},
	{"gpt-4.5", O200kBase},
	{"gpt-5", O200kBase},
	{"gpt-oss", O200kBase},
	{"o1", O200kBase},
	{"o3", O200kBase},
	{"o4", O200kBase},
	{"gpt-4", Cl100kBase},
	{"gpt-3.5", Cl100kBase},
	{"text-embedding-3", Cl100kBase},
	{"text-embedding-ada-002", Cl100kBase},
}

// openAIProviders are the gen_ai.provider.name values whose models are
// OpenAI's.
var openAIProviders = map[string]bool{"openai": true, "azure.ai.openai": true}

// Encoding returns the encoding of an OpenAI model ("" if unknown). A
// fine-tuned model ("ft:gpt-4o-mini:org::id") has its base model's.
func Encoding(provider, model string) string {
	if !openAIProviders[provider] {
		return ""
	}
	model = strings.ToLower(strings.TrimPrefix(model, "ft:"))
	for _, f := range openAIFamilies {
		if rest, ok := strings.CutPrefix(model, f.prefix); ok && (rest == "" || rest[0] == '-' || rest[0] == '.' || rest[0] == ':') {
			return f.encoding
		}
	}
	return ""
}

// For returns the tokenizer of provider's model, or nil and the reason
// the report gives instead.
func For(provider, model string) (distribution.Tokenizer, string) {
	switch enc := Encoding(provider, model); {
	case enc != "":
		return codecs[enc], ""
	case openAIProviders[provider]:
		return nil, "no tokenizer is known for this OpenAI model: divergence is given in characters only"
	default:
		return nil, "no public tokenizer for " + providerLabel(provider) + " models: divergence is given in characters only, or in the tokens the provider reports it sampled"
	}
}

func providerLabel(p string) string {
	if p == "" || len(p) > 40 || strings.ContainsFunc(p, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r == '.' || r == '_') }) {
		return "this provider's"
	}
	return p
}

// MaxText bounds the text split; a longer output gets no token position
// (the split's work grows with the text).
const MaxText = 256 << 10

type bpe struct {
	name string
	get  func() *codec.Codec
}

// codecs load their ranks on first use (tens of MB in memory each).
var codecs = map[string]*bpe{
	O200kBase:  {O200kBase, sync.OnceValue(codec.NewO200kBase)},
	Cl100kBase: {Cl100kBase, sync.OnceValue(codec.NewCl100kBase)},
}

func (b *bpe) Name() string { return b.name }

// Tokens splits text into its tokens' bytes; nil when it cannot (too long,
// or the encoder failed), which gives no token position.
func (b *bpe) Tokens(text string) []string {
	if len(text) > MaxText {
		return nil
	}
	_, tokens, err := b.get().Encode(text)
	if err != nil {
		return nil
	}
	return tokens
}
