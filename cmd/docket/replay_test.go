package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketlabs/docket/fakeprovider"
	"github.com/docketlabs/docket/internal/shorttest"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/ledgertest"
	"github.com/docketlabs/docket/replay"
	"github.com/docketlabs/docket/replay/replaytest"
)

func TestReplayCommand(t *testing.T) {
	shorttest.Needs(t, shorttest.ChDB)
	const original, alt = "Your order ships on Monday.", "Your order ships on Tuesday."
	responder, err := fakeprovider.Sampled(3, fakeprovider.Output{Text: original, Weight: 3}, fakeprovider.Output{Text: alt, Weight: 1})
	if err != nil {
		t.Fatal(err)
	}
	trace := "4bf92f3577b34da6a3ce929d0e0e4736"
	_, dir, _, d := replaySetup(t, responder, "ops-on-call", replay.CallID{TraceID: trace, SpanID: "b7ad6b7169203331"}, original)
	ctx := context.Background()
	run := func(args ...string) (string, error) {
		cmd := replayCommand()
		var buf bytes.Buffer
		cmd.SetOut(&buf)
		cmd.SetArgs(append([]string{"--data", dir, "--content", filepath.Join(dir, "content"), "--actor", "ops-on-call", "--trace", trace}, args...))
		err := cmd.ExecuteContext(ctx)
		return buf.String(), err
	}
	if _, err := run("--n", "4"); err == nil {
		t.Fatal("a run without a purpose: no error")
	}

	text, err := run("--n", "8", "--purpose", "complaint SUP-9: shipping date")
	if err != nil {
		t.Fatal(err)
	}
	// Your| order| ships| on| Tuesday|.: the 21st character, in the 5th token.
	if !strings.Contains(text, "exact match: 6/8 (75%)") || !strings.Contains(text, "most common alternative (2×)") ||
		!strings.Contains(text, "first divergence of a 2× output: character 21, token 5 of 6 (o200k_base)") {
		t.Fatalf("text report:\n%s", text)
	}

	js, err := run("--n", "4", "--max-calls", "2", "--purpose", "complaint SUP-9: shipping date", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rep replay.Report
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatalf("JSON report: %v\n%s", err, js)
	}
	if len(rep.Results) != 1 || rep.Results[0].Status != replay.StatusBudgetExhausted || rep.Results[0].Completed != 2 || rep.Replays != 2 {
		t.Fatalf("JSON report: %+v", rep)
	}
	log, err := d.ledger.AccessLog(ctx, ledgerstore.AccessFilter{Tenant: "acme"})
	if err != nil || len(log) != 6 { // the run, input and output; twice
		t.Fatalf("access log: %v, %d rows", err, len(log))
	}
}

// replaySetup serves responder as the OpenAI API the replay command calls
// (its environment), opens a data directory of the test's own as actor and
// stores call with original as its answer.
func replaySetup(t *testing.T, responder fakeprovider.Responder, actor string, call replay.CallID, original string) (*replaytest.Provider, string, localFlags, *localData) {
	t.Helper()
	fake := replaytest.NewProvider(t, responder)
	t.Setenv("OPENAI_BASE_URL", fake.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "test")
	dir := t.TempDir()
	local := localFlags{storage: storageFlags{dataDir: dir}, actor: actor}
	d, err := local.open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.close)
	insertReplayCall(t, d, call, original)
	return fake, dir, local, d
}

// insertReplayCall stores a call of tenant acme that asked when an order
// ships and was answered original. Its usage is recorded, so a replay's
// cost can be estimated within a budget.
func insertReplayCall(t *testing.T, d *localData, id replay.CallID, original string) {
	t.Helper()
	ctx := context.Background()
	in, err := d.content.Put(ctx, "acme", "input", []byte(`[{"role":"user","parts":[{"type":"text","content":"When does my order ship?"}]}]`))
	if err != nil {
		t.Fatal(err)
	}
	out, err := d.content.Put(ctx, "acme", "output", []byte(`[{"role":"assistant","parts":[{"type":"text","content":"`+original+`"}],"finish_reason":"stop"}]`))
	if err != nil {
		t.Fatal(err)
	}
	inTok, outTok := int64(1000), int64(200)
	call := ledgertest.Call("acme", id.TraceID, id.SpanID)
	call.Provider, call.ResponseModel, call.InputTokens, call.OutputTokens = "openai", "gpt-4o-mini-2024-07-18", &inTok, &outTok
	call.InputRef, call.OutputRef, call.ContentStatus, call.FinishReasons = in.Ref.String(), out.Ref.String(), "stored", []string{"stop"}
	if err := d.ledger.InsertCalls(ctx, []ledger.Call{call}); err != nil {
		t.Fatal(err)
	}
}
