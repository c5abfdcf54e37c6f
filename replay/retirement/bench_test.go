package retirement

import (
	"testing"
	"time"
)

// Status of a Bedrock inference-profile ID, the longest lookup path.
func BenchmarkStatusBedrock(b *testing.B) {
	tbl := table(b)
	now := time.Now()
	for b.Loop() {
		tbl.Status("aws.bedrock", "us.anthropic.claude-3-7-sonnet-20250219-v1:0", now)
	}
}
