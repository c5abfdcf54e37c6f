package views

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/storage"
)

// LatencyBoundsMS are the upper bounds of the latency histogram's buckets,
// in milliseconds; a last bucket without bound holds the slower calls.
var LatencyBoundsMS = []int64{100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000}

// LatencyBucket counts the calls whose duration d falls in (previous bound,
// LeMS], or above the last bound when LeMS is nil. Counts are per bucket,
// not cumulative.
type LatencyBucket struct {
	LeMS  *int64 `json:"le_ms"`
	Count uint64 `json:"count"`
}

// LatencyReport is the distribution of call durations.
type LatencyReport struct {
	Buckets []LatencyBucket `json:"buckets"`
	// P50MS, P95MS and P99MS are exact quantiles (ClickHouse quantileExact:
	// the duration at position floor(level × calls) in ascending order), nil
	// when there are no calls.
	P50MS *float64 `json:"p50_ms"`
	P95MS *float64 `json:"p95_ms"`
	P99MS *float64 `json:"p99_ms"`
	Calls uint64   `json:"calls"`
}

// Latency reports the durations of the calls f selects.
func Latency(ctx context.Context, store *ledgerstore.Store, f Filter) (LatencyReport, error) {
	bounds := make([]string, len(LatencyBoundsMS))
	for i, b := range LatencyBoundsMS {
		bounds[i] = strconv.FormatInt(b, 10)
	}
	var rows []struct {
		Calls     uint64    `json:"calls"`
		AtMost    []uint64  `json:"at_most"`
		Quantiles []float64 `json:"quantiles"`
	}
	if err := query(ctx, store, "views_latency", f, map[string]any{"bounds": strings.Join(bounds, ",")}, storage.DecodeRows(&rows)); err != nil {
		return LatencyReport{}, err
	}
	if len(rows) != 1 {
		return LatencyReport{}, errors.New("views: latency: the engine returned no row")
	}
	row := rows[0]
	r := LatencyReport{Buckets: make([]LatencyBucket, 0, len(LatencyBoundsMS)+1), Calls: row.Calls}
	if r.Calls > 0 && (len(row.AtMost) != len(LatencyBoundsMS) || len(row.Quantiles) != 3) {
		return LatencyReport{}, errors.New("views: latency: the engine returned a row of another shape")
	}
	// Without calls every bucket is empty and no quantile exists.
	var below uint64
	for _, b := range LatencyBoundsMS {
		bucket := LatencyBucket{LeMS: &b}
		if r.Calls > 0 {
			i := len(r.Buckets)
			bucket.Count = row.AtMost[i] - below
			below = row.AtMost[i]
		}
		r.Buckets = append(r.Buckets, bucket)
	}
	r.Buckets = append(r.Buckets, LatencyBucket{Count: r.Calls - below})
	if r.Calls > 0 {
		r.P50MS, r.P95MS, r.P99MS = &row.Quantiles[0], &row.Quantiles[1], &row.Quantiles[2]
	}
	return r, nil
}
