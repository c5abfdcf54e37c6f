// Package schema defines the on-disk format of Docket's price table
// (data/prices.json and user-supplied override files). The converter writes
// it and the pricing package reads it, so both share these types.
package schema

// Version is the value of File.Schema this code reads and writes.
const Version = 1

// File is a whole price table.
type File struct {
	Schema    int        `json:"schema"`
	Source    Source     `json:"source"`
	Providers []Provider `json:"providers"`
}

// Source says where the prices come from. Name prefixes every price
// reference ("genai-prices:openai/gpt-4o"), so override files should pick
// their own name.
type Source struct {
	Name    string `json:"name"`
	Repo    string `json:"repo,omitempty"`
	Commit  string `json:"commit,omitempty"`
	Path    string `json:"path,omitempty"`
	Date    string `json:"date,omitempty"`
	License string `json:"license,omitempty"`
	SHA256  string `json:"sha256,omitempty"`
}

// Provider is one inference provider and its models, in match order.
type Provider struct {
	ID string `json:"id"`
	// Match finds the provider from a provider name that is not its ID.
	Match *Rule `json:"match,omitempty"`
	// ModelMatch finds the provider from a model name when no provider name
	// is known.
	ModelMatch *Rule `json:"model_match,omitempty"`
	// Fallbacks are provider IDs whose models are tried when none of this
	// provider's match (e.g. Azure serves OpenAI's models at OpenAI's prices).
	Fallbacks []string `json:"fallbacks,omitempty"`
	Models    []Model  `json:"models"`
}

// Model is one price entry. The first entry whose Match accepts a model
// name wins.
type Model struct {
	ID    string `json:"id"`
	Match Rule   `json:"match"`
	// PricesChecked is the date (YYYY-MM-DD) the source last checked the
	// prices, if it says.
	PricesChecked string `json:"prices_checked,omitempty"`
	Deprecated    bool   `json:"deprecated,omitempty"`
	// Periods is empty when the source lists the model without a usable
	// token price: such calls are costed as unknown, never as free.
	Periods []Period `json:"periods"`
}

// Period is a set of prices with the condition under which it applies.
// Periods are tried last to first and the first whose condition holds is
// used; if none holds, the first period is used (the source's rule).
type Period struct {
	// StartDate (YYYY-MM-DD, UTC) is the date the prices take effect.
	StartDate string `json:"start_date,omitempty"`
	// TimeOfDay limits the prices to a daily window, e.g. off-peak rates.
	TimeOfDay *TimeWindow `json:"time_of_day,omitempty"`
	Prices    Prices      `json:"prices"`
	// Tiers replace Prices when a call's input tokens exceed a threshold;
	// ascending by AboveInputTokens.
	Tiers []Tier `json:"tiers,omitempty"`
}

// TimeWindow is a daily interval [Start, End) such as "00:30:00Z"; it may
// wrap past midnight.
type TimeWindow struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

// Tier holds the full set of prices that applies, to all tokens of the
// call, once its input tokens exceed AboveInputTokens.
type Tier struct {
	AboveInputTokens int64  `json:"above_input_tokens"`
	Prices           Prices `json:"prices"`
}

// Prices are decimal strings in USD per million tokens (Requests: USD per
// thousand requests), at most 6 fractional digits. An empty string means the
// source gives no price; "0" means free.
type Prices struct {
	Input      string `json:"input,omitempty"`
	Output     string `json:"output,omitempty"`
	CacheRead  string `json:"cache_read,omitempty"`
	CacheWrite string `json:"cache_write,omitempty"`
	Reasoning  string `json:"reasoning,omitempty"`
	Requests   string `json:"requests_kcount,omitempty"`
}

// Rule is genai-prices' match logic: exactly one field is set.
type Rule struct {
	Equals     *string `json:"equals,omitempty"`
	StartsWith *string `json:"starts_with,omitempty"`
	EndsWith   *string `json:"ends_with,omitempty"`
	Contains   *string `json:"contains,omitempty"`
	Regex      *string `json:"regex,omitempty"`
	Or         []Rule  `json:"or,omitempty"`
	And        []Rule  `json:"and,omitempty"`
}
