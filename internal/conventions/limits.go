package conventions

import "time"

// Bounds on the values and the size of one ledger record. A value outside
// its bound is dropped from the row (NULL) with an attribute_issues flag;
// what is over a size bound is flagged, not stored.
const (
	// MaxTokenCount bounds every token count of one call (usage and
	// gen_ai.request.max_tokens): a thousand times the largest context
	// window offered today, far below where sums of counts overflow.
	MaxTokenCount int64 = 10_000_000_000
	// MaxEventsPerRecord and MaxAttributesPerRecord bound what the ledger
	// reads of one span; the rest is flagged over_limit.
	MaxEventsPerRecord     = 128
	MaxAttributesPerRecord = 1024
	// MaxIssues bounds the attribute_issues entries of one row, and
	// MaxIssueKeyLen the prefix of an attribute key an entry quotes.
	MaxIssues      = 32
	MaxIssueKeyLen = 64

	// DefaultMaxClockSkew and DefaultMaxAge are the window around receipt
	// in which a span's timestamps are believed.
	DefaultMaxClockSkew = time.Hour
	DefaultMaxAge       = 30 * 24 * time.Hour
)

// Issue kinds of attribute_issues entries ("kind:key") for values outside
// the contract.
const (
	IssueOutOfRange     = "out_of_range"
	IssueOutOfWindow    = "out_of_window"
	IssueEndBeforeStart = "end_before_start"
	IssueInvalidID      = "invalid_id"
	IssueOverLimit      = "over_limit"
)
