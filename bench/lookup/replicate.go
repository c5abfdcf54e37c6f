package main

import (
	"context"
	"fmt"
	"time"

	"github.com/docketlabs/docket/ledger/storage"
)

// replicateTables are the statements that copy each table holding calls,
// their spans and content links (sql/replicate_*.sql). row_versions is
// filled by its materialized views from the copies of llm_calls and
// evidence_spans, as from any insert. The other tables record events about
// calls (reveals, holds, deletions, replays, imports, leases): the bench
// creates none but the access log of its own lookups, and they are not
// copied.
var replicateTables = []struct{ table, sql string }{
	{"llm_calls", mustSQL("replicate_llm_calls")},
	{"evidence_spans", mustSQL("replicate_evidence_spans")},
	{"log_content_refs", mustSQL("replicate_log_content_refs")},
	{"provider_call_rows", mustSQL("replicate_provider_call_rows")},
}

// replicate makes the ledger copies times as large by copying its rows
// inside the engine, copies-1 more times, with every identifier remapped
// per copy (sql/replicate_function.sql) and every other value (tenants,
// models, times, sizes) kept: each copy answers every lookup as the
// original does, under its own keys. Generating through the write path
// took over an hour per million calls; this copies millions of rows a
// minute. It must run once, on a ledger holding only the generated calls.
func replicate(ctx context.Context, eng storage.Engine, copies int) error {
	if copies < 2 {
		return nil
	}
	if err := eng.Exec(ctx, replicateFunction); err != nil {
		return fmt.Errorf("replicate: create the identifier function: %w", err)
	}
	defer func() { _ = eng.Exec(context.WithoutCancel(ctx), replicateDropFunction) }()
	for _, t := range replicateTables {
		q, err := storage.Bind(t.sql, map[string]any{"copies": copies})
		if err != nil {
			return err
		}
		t0 := time.Now()
		if err = eng.Exec(ctx, q); err != nil {
			return fmt.Errorf("replicate %s: %w", t.table, err)
		}
		fmt.Printf("  replicated %s ×%d in %.1f s\n", t.table, copies, time.Since(t0).Seconds())
	}
	return nil
}
