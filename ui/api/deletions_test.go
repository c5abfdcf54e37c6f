package api

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger/lifecycle"
)

// A deletion request through the API is recorded and answered at once,
// then run once, in the background: the answer is the pending job, and
// the job's history is pending, running, done. The request used to run
// the job before answering, and then run it again behind the answer.
func TestDeletionRequestRunsOnceInTheBackground(t *testing.T) {
	f := newFixture(t)
	c := f.client(t)
	c.signIn("admin")
	code, body := c.do("POST", "/api/v1/deletions", map[string]any{
		"scope": lifecycle.Scope{Tenant: "acme", TraceID: f.trace}, "reason": "erasure request 4"})
	if code != http.StatusAccepted {
		t.Fatalf("request: %d %s", code, body)
	}
	job := decodeJSON[struct {
		Job lifecycle.DeletionJob `json:"job"`
	}](t, body).Job
	if job.Status != lifecycle.JobPending {
		t.Fatalf("the answer is the job %s, not pending: it ran before the answer", job.Status)
	}
	type state struct {
		Job     lifecycle.DeletionJob   `json:"job"`
		History []lifecycle.DeletionJob `json:"history"`
	}
	read := func() state {
		code, body := c.do("GET", "/api/v1/deletions/"+job.ID, nil)
		if code != http.StatusOK {
			t.Fatalf("read the job: %d %s", code, body)
		}
		return decodeJSON[state](t, body)
	}
	for deadline := time.Now().Add(time.Minute); read().Job.Status != lifecycle.JobDone; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the job did not finish: %+v", read().Job)
		}
	}
	// A second run would follow the first closely.
	time.Sleep(time.Second)
	s := read()
	var states []string
	for _, h := range s.History {
		states = append(states, h.Status)
	}
	if want := []string{lifecycle.JobPending, lifecycle.JobRunning, lifecycle.JobDone}; !slices.Equal(states, want) {
		t.Fatalf("the job's history is %v, want %v (one run)", states, want)
	}
	if s.Job.Counts.ObjectsDeleted != 1 {
		t.Fatalf("the run deleted %+v, want the call's one object", s.Job.Counts)
	}
}
