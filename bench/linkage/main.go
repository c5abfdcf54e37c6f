// Command linkage measures, for the trace IDs the demo load driver recorded,
// the share of requests whose evidence arrived linked under one trace ID in
// the ledger: exactly one LLM call row, its database span and its retrieval
// span, all sharing the trace ID and the same parent chain; and the share
// whose complaint page timeline shows the whole path: the HTTP request
// (server span), the queue (producer), the worker (consumer), the database
// query, the retrieval and the LLM call, each the child of the one before
// (DB, retrieval and LLM of the worker).
//
// Run after `make demo` (or loaddriver -trace-ids FILE) against docket dev:
//
//	DOCKET_UI_PASSWORD=… go run ./bench/linkage -ids data/demo-trace-ids.txt
//
// or with an API token of a viewer of the demo tenant in DOCKET_TOKEN.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"

	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ui/apiclient"
)

type evidence struct {
	Calls         []ledger.Call         `json:"calls"`
	EvidenceSpans []ledger.EvidenceSpan `json:"evidence_spans"`
	Timeline      []timelineSpan        `json:"timeline"`
}

// timelineSpan is what the check reads of a row of the page's timeline.
type timelineSpan struct {
	SpanID       string `json:"span_id"`
	ParentSpanID string `json:"parent_span_id"`
	Kind         string `json:"kind"`
}

func main() {
	ids := flag.String("ids", "data/demo-trace-ids.txt", "file of trace IDs, one per line")
	api := flag.String("api", "http://127.0.0.1:8080", "docket evidence UI")
	user := flag.String("user", "admin", "UI user with a viewer grant of the demo tenant")
	flag.Parse()
	// An API token outlasts a signed-in session, which a check of 10,000
	// pages on a loaded machine can outlive.
	client := apiclient.WithToken(*api, os.Getenv("DOCKET_TOKEN"))
	if os.Getenv("DOCKET_TOKEN") == "" {
		var err error
		if client, err = apiclient.SignIn(context.Background(), *api, *user, os.Getenv("DOCKET_UI_PASSWORD")); err != nil {
			slog.Error("linkage: sign in (password in DOCKET_UI_PASSWORD, or an API token in DOCKET_TOKEN)", "err", err)
			os.Exit(1)
		}
	}
	if err := run(*ids, client); err != nil {
		slog.Error("linkage failed", "err", err)
		os.Exit(1)
	}
}

func run(idsFile string, api *apiclient.Client) error {
	f, err := os.Open(idsFile)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	var total, linked, path, oneCall, missing int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		id := sc.Text()
		if id == "" {
			continue
		}
		total++
		ev, found, err := fetch(api, id)
		if err != nil {
			return err
		}
		if !found {
			missing++
			continue
		}
		if len(ev.Calls) == 1 {
			oneCall++
		}
		if isLinked(ev) {
			linked++
		}
		if showsPath(ev) {
			path++
		}
		if total%100 == 0 {
			// A running tally, so a run stopped early still reports.
			fmt.Printf("  after %d: linked %d, whole path %d, not in ledger %d\n", total, linked, path, missing)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if total == 0 {
		return fmt.Errorf("no trace IDs in %s", idsFile)
	}
	fmt.Printf("requests %d  linked (call + db + retrieval under one trace, shared parent) %d = %.2f%%  exactly one call row %d  not in ledger %d\n",
		total, linked, 100*float64(linked)/float64(total), oneCall, missing)
	fmt.Printf("complaint pages whose timeline shows HTTP request → queue → worker → db, retrieval, LLM under one trace: %d of %d = %.2f%%\n",
		path, total, 100*float64(path)/float64(total))
	return nil
}

// isLinked: one call, and a DB span and a retrieval span whose parent is the
// call's parent (the worker span of the example application).
func isLinked(ev evidence) bool {
	if len(ev.Calls) != 1 {
		return false
	}
	parent := ev.Calls[0].ParentSpanID
	var db, retrieval bool
	for _, s := range ev.EvidenceSpans {
		if s.ParentSpanID != parent || parent == "" {
			continue
		}
		db = db || s.Category == "db"
		retrieval = retrieval || s.Category == "retrieval"
	}
	return db && retrieval
}

// showsPath: the timeline has exactly one span of each step of the path,
// the request a root, the queue its child, the worker the queue's, and the
// database, retrieval and LLM spans the worker's.
func showsPath(ev evidence) bool {
	step := map[string]timelineSpan{}
	for _, s := range ev.Timeline {
		if _, dup := step[s.Kind]; dup {
			return false
		}
		step[s.Kind] = s
	}
	parentOf := map[string]string{
		conventions.CategoryRequest: "", conventions.CategoryQueue: conventions.CategoryRequest,
		conventions.CategoryWorker: conventions.CategoryQueue, "db": conventions.CategoryWorker,
		"retrieval": conventions.CategoryWorker, "llm": conventions.CategoryWorker,
	}
	for kind, parent := range parentOf {
		s, ok := step[kind]
		if !ok || s.ParentSpanID != step[parent].SpanID {
			return false
		}
	}
	return true
}

func fetch(api *apiclient.Client, id string) (evidence, bool, error) {
	var ev evidence
	err := api.Get(context.Background(), "/api/v1/evidence/"+id, &ev)
	if errors.Is(err, apiclient.ErrNotFound) {
		return ev, false, nil
	}
	return ev, err == nil, err
}
