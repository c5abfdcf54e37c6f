package contentrefprocessor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pipeline"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/processors/contentrefprocessor/internal/metadata"
)

func TestFactory(t *testing.T) {
	f := NewFactory()
	if f.Type().String() != "contentref" || f.TracesStability() != component.StabilityLevelDevelopment || f.LogsStability() != component.StabilityLevelDevelopment {
		t.Fatal("identity")
	}
	if err := componenttest.CheckConfigStruct(f.CreateDefaultConfig()); err != nil {
		t.Fatal(err)
	}
	if _, err := f.CreateMetrics(ctx, processortest.NewNopSettings(metadata.Type), f.CreateDefaultConfig(), consumertest.NewNop()); err != pipeline.ErrSignalNotSupported {
		t.Fatalf("metrics: %v", err)
	}
}

// contentref: {} with no extension stores into the embedded directory under
// ./data, with a generated secret, and both signals share that store.
func TestEmptyConfigWithoutExtension(t *testing.T) {
	t.Chdir(t.TempDir())
	hs := newHarness(t, defaultConfig(), componenttest.NewNopHost())
	in, want := everyForm("")
	out := hs.consumeTraces(t, in)
	a := spansByName(out)["legacy"].Attributes()
	if v, _ := a.Get(AttrStatus); v.Str() != StatusStored {
		t.Fatalf("status %q", v.Str())
	}
	if _, err := os.Stat(filepath.Join("data", "content.secret")); err != nil {
		t.Fatalf("secret not generated: %v", err)
	}
	// Read back through a store opened on the same default directory.
	st, err := contentstore.Open(ctx, contentstore.NewDefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if got := fetch(t, st, refs(a)); !strings.Contains(got, want["legacy"][0]) {
		t.Fatal("content not in the embedded store")
	}
	ld := logWith("gen_ai.user.message", func(v pcommon.Value) { v.SetStr(canary(1)) }, nil)
	lr := hs.consumeLogs(t, ld).ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	if got := fetch(t, st, refs(lr.Attributes())); got != canary(1) {
		t.Fatalf("log content: %q", got)
	}
}

func TestMissingOrWrongStoreExtension(t *testing.T) {
	cfg := defaultConfig()
	id := component.MustNewIDWithName("contentstore", "s3")
	cfg.Store = &id
	p, err := NewFactory().CreateTraces(ctx, processortest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx, componenttest.NewNopHost()); err == nil || !strings.Contains(err.Error(), "not configured") {
		t.Fatalf("named store missing: %v", err)
	}
	nf := extensiontest.NewNopFactory()
	nop, err := nf.Create(ctx, extensiontest.NewNopSettings(nf.Type()), nf.CreateDefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx, host{id: nop}); err == nil || !strings.Contains(err.Error(), "not a content store") {
		t.Fatalf("extension that is not a store: %v", err)
	}
}
