package main

import (
	"embed"
	"strings"
)

// The benchmark's own queries (sampling keys, the baseline), next to the
// product's in package queries.
//
//go:embed sql/*.sql
var sqlFiles embed.FS

func mustSQL(name string) string {
	b, err := sqlFiles.ReadFile("sql/" + name + ".sql")
	if err != nil {
		panic(err)
	}
	return strings.TrimSpace(string(b))
}

var (
	sampleTraces    = mustSQL("sample_traces")
	sampleResponses = mustSQL("sample_responses")
	sampleEndUsers  = mustSQL("sample_end_users")
	baselineLookup  = mustSQL("baseline_lookup")
	activePartsSQL  = mustSQL("active_parts")
	pendingSQL      = mustSQL("pending_mutations")
	tableSizesSQL   = mustSQL("table_sizes")
	spanCountSQL    = mustSQL("span_count")
	runningMerges   = mustSQL("running_merges")

	replicateFunction     = mustSQL("replicate_function")
	replicateDropFunction = mustSQL("replicate_drop_function")
)
