package conventions

// CostStatus says whether a call could be priced. The values are stored in
// the ledger's cost_status column; a status other than CostOK leaves the
// cost NULL, shown as "—", and totals over such calls carry "+?".
type CostStatus string

const (
	// CostOK: the cost is known (possibly zero, for a free model).
	CostOK CostStatus = "ok"
	// CostUnknownModel: the price table has no entry for the provider and
	// model, or the entry has no input or output price the call needs.
	CostUnknownModel CostStatus = "unknown_model"
	// CostMissingUsage: input or output tokens were not reported
	// (embeddings need only input tokens).
	CostMissingUsage CostStatus = "missing_usage"
	// CostInvalidUsage: a negative count, cache tokens exceeding input,
	// reasoning exceeding output, or a cost beyond the bound.
	CostInvalidUsage CostStatus = "invalid_usage"
	// CostUnpricedCacheRead, CostUnpricedCacheWrite: the call reported
	// cache reads (writes) and the price entry has no price for them;
	// charging them as plain input would be a guess.
	CostUnpricedCacheRead  CostStatus = "unpriced_cache_read"
	CostUnpricedCacheWrite CostStatus = "unpriced_cache_write"
	// CostUncertainCache: the call reported cache tokens, and its family
	// does not document whether its input count includes them.
	CostUncertainCache CostStatus = "uncertain_cache_tokens"
	// CostUncertainReasoning: likewise for reasoning tokens and the output
	// count.
	CostUncertainReasoning CostStatus = "uncertain_reasoning_tokens"
	// CostUnreportedCacheRead: the provider caches prompts of this size
	// without being asked (AutomaticCaches) and the span reports no
	// cache-read count, so the bill may hold cache reads at their lower
	// rate; the cost priced as plain input is only an upper bound.
	CostUnreportedCacheRead CostStatus = "unreported_cache_read"
)

// CostStatuses are every cost status, for metrics labels and filters.
var CostStatuses = []CostStatus{CostOK, CostUnknownModel, CostMissingUsage, CostInvalidUsage,
	CostUnpricedCacheRead, CostUnpricedCacheWrite, CostUncertainCache, CostUncertainReasoning, CostUnreportedCacheRead}
