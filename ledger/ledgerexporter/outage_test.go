package ledgerexporter

import (
	"errors"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

func TestOutageIsLoggedOnceThenPeriodicallyThenRecovery(t *testing.T) {
	core, logs := observer.New(zap.InfoLevel)
	o := &outageLog{logger: zap.New(core), interval: 50 * time.Millisecond}
	o.success() // no outage: nothing to say
	for i := 0; i < 5; i++ {
		o.failure(errors.New("table detached"))
	}
	if n := logs.FilterMessageSnippet("unavailable").Len(); n != 1 {
		t.Fatalf("%d outage logs for a burst of failures, want 1", n)
	}
	time.Sleep(60 * time.Millisecond)
	o.failure(errors.New("table detached"))
	if n := logs.FilterMessageSnippet("still unavailable").Len(); n != 1 {
		t.Fatalf("%d periodic logs, want 1", n)
	}
	o.success()
	o.success()
	rec := logs.FilterMessageSnippet("available again").All()
	if len(rec) != 1 || rec[0].ContextMap()["failed_writes"] != int64(6) {
		t.Fatalf("recovery logs: %+v", rec)
	}
}
