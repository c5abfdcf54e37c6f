package ledger

import "github.com/docketlabs/docket/ledger/pricing"

// Derive fills the columns that follow from the others — usage source,
// error class and cost — so every writer of call rows (the exporter, replay)
// computes them one way. A nil table leaves the cost unknown_model.
func (c *Call) Derive(prices *pricing.Table) {
	switch {
	case c.InputTokens != nil && (c.OutputTokens != nil || c.Operation == pricing.OperationEmbeddings):
		c.UsageSource = UsageReported
	case c.InputTokens != nil || c.OutputTokens != nil:
		c.UsageSource = UsagePartial
	default:
		c.UsageSource = UsageMissing
	}
	c.ErrorClass = classifyError(c.Status, c.ErrorType, c.HTTPStatus, c.FinishReasons)
	c.CostStatus, c.PriceRef, c.CostUSD = string(pricing.StatusUnknownModel), "", nil
	if prices == nil {
		return
	}
	model := c.ResponseModel
	if model == "" {
		model = c.RequestModel
	}
	cost := prices.Cost(c.Provider, model, c.Operation, c.StartTime, pricing.Usage{
		Input: c.InputTokens, Output: c.OutputTokens, CacheRead: c.CacheReadTokens,
		CacheWrite: c.CacheWriteTokens, Reasoning: c.ReasoningTokens,
	})
	c.CostStatus = string(cost.Status)
	c.PriceRef = cost.PriceRef
	if cost.Status == pricing.StatusOK && c.usageUncertain != "" {
		c.CostStatus, cost.USD = string(c.usageUncertain), nil
	}
	if s := cost.String(); s != "" {
		c.CostUSD = &s
	}
}
