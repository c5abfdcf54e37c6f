package conventions

// Column is a ledger column whose value the libraries put under varying
// keys.
type Column uint8

const (
	ColOperation Column = iota
	ColProvider
	ColRequestModel
	ColResponseModel
	ColResponseID
	ColFinishReasons
	ColTTFT
	ColInputTokens
	ColOutputTokens
	ColCacheReadTokens
	ColCacheWriteTokens
	ColReasoningTokens
	ColTemperature
	ColTopP
	ColTopK
	ColMaxTokens
	ColSeed
	ColStopSequences
	// ColStream is no column of its own: it tells whether a key marked
	// NotStreamed holds.
	ColStream
	ColErrorType
	ColHTTPStatus
	ColRetryAttempt
	ColEndUser
	NumColumns
)

// Unit is the unit of a duration key; the ledger stores milliseconds.
type Unit uint8

const (
	UnitNone Unit = iota
	UnitSeconds
	UnitMilliseconds
)

// Key is one place a column's value may be: an attribute, or a top-level
// field of the JSON object in an attribute (Field).
type Key struct {
	Name  string
	Field string
	Unit  Unit
	// NotStreamed: the key holds the column's value only on a call that
	// did not stream (OpenInference's llm.model_name is the response model
	// then, and the requested name otherwise).
	NotStreamed bool
}

func k(name string) Key { return Key{Name: name} }

func keys(names ...string) []Key {
	out := make([]Key, len(names))
	for i, n := range names {
		out[i] = k(n)
	}
	return out
}

// Columns are the keys every family is read by, after its own, best first:
// the GenAI conventions, their deprecated names, and the common HTTP ones.
var Columns = [NumColumns][]Key{
	ColOperation:     keys(OperationName, "llm.request.type"),
	ColProvider:      keys(ProviderName, System, "llm.provider", "llm.system"),
	ColRequestModel:  keys(RequestModel),
	ColResponseModel: keys(ResponseModel),
	ColResponseID:    keys(ResponseID),
	ColFinishReasons: keys(FinishReasons),
	ColTTFT: {
		{Name: TimeToFirstChunk, Unit: UnitSeconds},
		// AI SDK 7 names the span attribute after the metric.
		{Name: "gen_ai.client.operation.time_to_first_chunk", Unit: UnitSeconds},
	},
	ColInputTokens:      keys(UsageInput, "gen_ai.usage.prompt_tokens"),
	ColOutputTokens:     keys(UsageOutput, "gen_ai.usage.completion_tokens"),
	ColCacheReadTokens:  keys(UsageCacheRead, "gen_ai.usage.cache_read_input_tokens"),
	ColCacheWriteTokens: keys(UsageCacheCreation, "gen_ai.usage.cache_creation_input_tokens"),
	ColReasoningTokens:  keys(UsageReasoning, "gen_ai.usage.reasoning_tokens"),
	ColTemperature:      keys(RequestTemperature),
	ColTopP:             keys(RequestTopP),
	ColTopK:             keys(RequestTopK),
	ColMaxTokens:        keys(RequestMaxTokens),
	ColSeed:             keys(RequestSeed),
	ColStopSequences:    keys(RequestStop),
	ColStream:           keys(RequestStream),
	ColErrorType:        keys(ErrorType),
	ColHTTPStatus:       keys(HTTPResponseStatusCode, HTTPStatusCodeOld),
	ColRetryAttempt:     keys("http.request.resend_count", "gen_ai.request.retry_attempt"),
	ColEndUser:          keys(EndUser),
}

// ParamColumns are the request parameters with columns of their own; the
// rest of gen_ai.request.* goes to the request_params map.
var ParamColumns = []Column{ColRequestModel, ColTemperature, ColTopP, ColTopK, ColMaxTokens, ColSeed, ColStopSequences, ColRetryAttempt}

// Semantics says whether a token count includes another one.
type Semantics uint8

const (
	// Included: the count includes the part (the GenAI conventions: cache
	// tokens are part of the input, reasoning tokens of the output).
	Included Semantics = iota
	// Excluded: the count leaves the part out; the ledger adds it.
	Excluded
	// Unknown: nobody documents it; a call reporting the part is not
	// priced (cost status UncertainCacheTokens / UncertainReasoningTokens).
	Unknown
)

// TokenRule is a family's semantics for a part of a count, per provider
// where the family passes the provider's own numbers through.
type TokenRule struct {
	Default    Semantics
	ByProvider map[string]Semantics
}

// For is the semantics on calls to provider (normalised).
func (r TokenRule) For(provider string) Semantics {
	if s, ok := r.ByProvider[provider]; ok {
		return s
	}
	return r.Default
}

// AutomaticCaches are the providers that cache a prompt without being
// asked, by the smallest prompt (input tokens) they cache: OpenAI's and
// Azure OpenAI's prompt caching applies to every chat and responses request
// of 1,024 tokens or more. Embeddings are not cached.
var AutomaticCaches = map[string]int64{"openai": 1024, "azure.ai.openai": 1024}

// OperationEmbeddings is the gen_ai.operation.name of embedding calls.
const OperationEmbeddings = "embeddings"

// CacheReadUnreported reports whether a call to provider (normalised) of
// operation with input tokens may have been billed for cache reads its span
// does not report (cacheReadReported: a count under any key the contract
// reads, 0 included): its cost is then an upper bound, not a known value.
func CacheReadUnreported(provider, operation string, input int64, cacheReadReported bool) bool {
	minInput, ok := AutomaticCaches[provider]
	return ok && !cacheReadReported && operation != OperationEmbeddings && input >= minInput
}

// Providers the libraries name other than by the conventions' values:
// Vercel's provider IDs (openai.chat, openai.responses, google.vertex.chat,
// …), as AI SDK 7's @ai-sdk/otel maps them, and the libraries' capitalised
// names. Matched as prefix followed by ".", "-" or nothing.
var ProviderAliases = []struct{ Prefix, Provider string }{
	{"openai", "openai"},
	{"anthropic", "anthropic"},
	{"google.vertex", "gcp.vertex_ai"},
	{"google-vertex", "gcp.vertex_ai"},
	{"google.generative-ai", "gcp.gemini"},
	{"amazon-bedrock", "aws.bedrock"},
	{"azure-openai", "azure.ai.openai"},
	{"mistral", "mistral_ai"},
	{"cohere", "cohere"},
	{"groq", "groq"},
	{"deepseek", "deepseek"},
	{"xai", "x_ai"},
	{"OpenAI", "openai"},
	{"Anthropic", "anthropic"},
}

// NormalizeProvider maps a library's provider name to the conventions'
// value; names it does not know are kept.
func NormalizeProvider(s string) string {
	for _, a := range ProviderAliases {
		rest, ok := cutPrefix(s, a.Prefix)
		if ok && (rest == "" || rest[0] == '.' || rest[0] == '-') {
			return a.Provider
		}
	}
	return s
}

func cutPrefix(s, p string) (string, bool) {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):], true
	}
	return s, false
}
