package contentrefprocessor

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/internal/conventions"
)

// place puts content into a trace in one of the forms the processor must
// find.
func place(form byte, content string) ptrace.Traces {
	td := ptrace.NewTraces()
	s := newSpan(td.ResourceSpans().AppendEmpty(), "fuzz")
	a := s.Attributes()
	switch form % 7 {
	case 0:
		a.PutStr(conventions.InputMessages, content)
	case 1:
		a.PutEmptySlice(conventions.OutputMessages).AppendEmpty().SetEmptyMap().PutEmptyMap("parts").PutStr("content", content)
	case 2:
		a.PutStr("gen_ai.prompt.3.content", content)
	case 3:
		ev := s.Events().AppendEmpty()
		ev.SetName("gen_ai.content.completion")
		ev.Attributes().PutStr(conventions.Completion, content)
	case 4:
		ev := s.Events().AppendEmpty()
		ev.SetName("gen_ai.choice")
		ev.Attributes().PutEmptyBytes("message").FromRaw([]byte(content))
	case 5:
		a.PutEmptyMap("gen_ai.tool.call.result").PutStr(content, content)
	case 6:
		a.PutStr(conventions.SystemInstructions, content)
		a.PutStr("gen_ai.system_instructions.extra", content)
	}
	return td
}

// FuzzNoContentLeaves: whatever the content and wherever it sits, it is
// gone from what leaves the processor and comes back from the store.
func FuzzNoContentLeaves(f *testing.F) {
	for i, s := range []string{"yes", `[{"role":"user","content":"x"}]`, "", "\x00\xff", "{\"a\":", `"quoted"`, "안녕하세요 900101-1234567"} {
		f.Add(byte(i), s)
	}
	h, st := storeExt(f, dirStoreConfig(f, contentstore.Limits{}))
	hs := newHarness(f, defaultConfig(), h)
	f.Fuzz(func(t *testing.T, form byte, s string) {
		marked := "\u27e6" + s + "\u27e7"
		out := hs.consumeTraces(t, place(form, marked))
		raw, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(out)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(raw, []byte(marked)) {
			t.Fatalf("content left the processor (form %d)", form%7)
		}
		span := spansByName(out)["fuzz"]
		if v, _ := span.Attributes().Get(AttrStatus); v.Str() != StatusStored {
			t.Fatalf("status %q (form %d)", v.Str(), form%7)
		}
		all := refs(span.Attributes())
		for _, ev := range span.Events().All() {
			all = append(all, refs(ev.Attributes())...)
		}
		got := fetch(t, st, all)
		want := "\u27e6" // marker survives JSON encoding of any content
		if form%7 == 4 {
			want = base64.StdEncoding.EncodeToString([]byte(marked))
		}
		if !strings.Contains(got, want) {
			t.Fatalf("stored content lost the marker (form %d): %q", form%7, got)
		}

		ld := plog.NewLogs()
		lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
		lr.SetEventName("gen_ai.assistant.message")
		lr.Body().SetStr(marked)
		lout := hs.consumeLogs(t, ld)
		lraw, _ := (&plog.ProtoMarshaler{}).MarshalLogs(lout)
		if bytes.Contains(lraw, []byte(marked)) {
			t.Fatal("log body content left the processor")
		}
		if lout.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body().Type() != pcommon.ValueTypeEmpty {
			t.Fatal("body not cleared")
		}
	})
}
