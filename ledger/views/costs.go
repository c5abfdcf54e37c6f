package views

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/storage"
)

// CostTotals sum the calls of a group. Unknown is not zero: CostUSD sums only
// the known costs and is nil when no call has one; CostUnknownCalls counts
// the calls without a known cost, so a total with unknown parts shows "+?"
// (FormatCost). Token sums likewise cover the calls that reported usage and
// are nil when none did.
type CostTotals struct {
	Calls            uint64  `json:"calls"`
	CostUSD          *string `json:"cost_usd"`
	CostUnknownCalls uint64  `json:"cost_unknown_calls"`
	InputTokens      *int64  `json:"input_tokens"`
	OutputTokens     *int64  `json:"output_tokens"`
}

// CostRow is one group of a CostReport.
type CostRow struct {
	// Key is the day (YYYY-MM-DD, UTC), the model or the tenant.
	Key string `json:"key"`
	CostTotals
}

// CostReport is the cost of the calls a Filter selects, by group.
type CostReport struct {
	Group string     `json:"group"`
	Rows  []CostRow  `json:"rows"`
	Total CostTotals `json:"total"`
}

// Groups of Costs.
const (
	GroupDay    = "day"
	GroupModel  = "model"
	GroupTenant = "tenant"
)

// MaxCostRows bounds a report; a wider one asks for a narrower filter.
const MaxCostRows = 10000

// Costs sums the calls f selects per day, model (the response model, else
// the requested one) or tenant, in key order, with their total.
func Costs(ctx context.Context, store *ledgerstore.Store, f Filter, group string) (CostReport, error) {
	switch group {
	case GroupDay, GroupModel, GroupTenant:
	default:
		return CostReport{}, invalid("costs: group must be %s, %s or %s", GroupDay, GroupModel, GroupTenant)
	}
	report := CostReport{Group: group, Rows: []CostRow{}}
	// The total row comes last; one row beyond it tells that rows were cut.
	err := query(ctx, store, "views_costs", f, map[string]any{"group": group, "limit": uint32(MaxCostRows + 2)}, func(row []byte) error {
		var r struct {
			CostRow
			IsTotal uint8 `json:"is_total"`
		}
		if err := json.Unmarshal(row, &r); err != nil {
			return fmt.Errorf("decode row: %w", err)
		}
		if r.IsTotal == 1 {
			report.Total = r.CostTotals
		} else {
			report.Rows = append(report.Rows, r.CostRow)
		}
		return nil
	})
	if err != nil {
		return CostReport{}, err
	}
	if len(report.Rows) > MaxCostRows {
		return CostReport{}, invalid("costs: more than %d groups; narrow the filter", MaxCostRows)
	}
	return report, nil
}

// Point is one bucket of a time series.
type Point struct {
	// T is the start of the bucket.
	T                time.Time `json:"t"`
	Calls            uint64    `json:"calls"`
	Errors           uint64    `json:"errors"`
	CostUSD          *string   `json:"cost_usd"`
	CostUnknownCalls uint64    `json:"cost_unknown_calls"`
}

// Series is a time series of calls.
type Series struct {
	Bucket string  `json:"bucket"`
	Points []Point `json:"points"`
}

// Buckets of Timeseries.
const (
	BucketHour = "hour"
	BucketDay  = "day"
)

// MaxPoints bounds a time series.
const MaxPoints = 2000

// Timeseries counts the calls f selects, their errors (span status error)
// and their cost per hour or day (UTC). Every bucket from the start of the
// range (From, or the first call's bucket) to its end (To, or the last
// call's bucket) has a point, zero when no call fell in it; a range of more
// than MaxPoints buckets is refused.
func Timeseries(ctx context.Context, store *ledgerstore.Store, f Filter, bucket string) (Series, error) {
	var width time.Duration
	switch bucket {
	case BucketHour:
		width = time.Hour
	case BucketDay:
		width = 24 * time.Hour
	default:
		return Series{}, invalid("timeseries: bucket must be %s or %s", BucketHour, BucketDay)
	}
	tooMany := invalid("timeseries: the range spans more than %d %s buckets; narrow it", MaxPoints, bucket)
	if !f.From.IsZero() && !f.To.IsZero() && buckets(f.From, f.To, width) > MaxPoints {
		return Series{}, tooMany
	}
	var data []Point
	err := query(ctx, store, "views_timeseries", f, map[string]any{"bucket_seconds": uint32(width / time.Second), "limit": uint32(MaxPoints + 1)}, storage.DecodeRows(&data))
	if err != nil {
		return Series{}, err
	}
	if len(data) > MaxPoints {
		return Series{}, tooMany
	}
	first, end := f.From.UTC().Truncate(width), f.To.UTC()
	if f.From.IsZero() && len(data) > 0 {
		first = data[0].T
	}
	if f.To.IsZero() && len(data) > 0 {
		end = data[len(data)-1].T.Add(width)
	}
	points := []Point{}
	if len(data) == 0 && (f.From.IsZero() || f.To.IsZero()) {
		return Series{Bucket: bucket, Points: points}, nil
	}
	if buckets(first, end, width) > MaxPoints {
		return Series{}, tooMany
	}
	for t, i := first, 0; t.Before(end); t = t.Add(width) {
		if i < len(data) && data[i].T.Equal(t) {
			points = append(points, data[i])
			i++
			continue
		}
		points = append(points, Point{T: t})
	}
	return Series{Bucket: bucket, Points: points}, nil
}

// buckets is the number of buckets of the given width (whole hours or days,
// aligned to UTC) that [from, to) touches. It counts in seconds: the engine's
// range is wider than a time.Duration.
func buckets(from, to time.Time, width time.Duration) int64 {
	secs := to.Unix() - from.UTC().Truncate(width).Unix()
	if to.Nanosecond() > 0 {
		secs++
	}
	w := int64(width / time.Second)
	return (secs + w - 1) / w
}
