package contentrefprocessor

import (
	"errors"
	"os"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/pipeline"
	"go.opentelemetry.io/collector/processor/processortest"

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
	if _, err := f.CreateMetrics(ctx, processortest.NewNopSettings(metadata.Type), f.CreateDefaultConfig(), consumertest.NewNop()); !errors.Is(err, pipeline.ErrSignalNotSupported) {
		t.Fatalf("metrics: %v", err)
	}
}

// contentref: {} with no contentstore extension refuses to start rather
// than write content to a store of its own that deletion and legal hold do
// not know.
func TestEmptyConfigWithoutExtensionRefusesToStart(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, create := range []func() (component.Component, error){
		func() (component.Component, error) {
			return NewFactory().CreateTraces(ctx, processortest.NewNopSettings(metadata.Type), defaultConfig(), consumertest.NewNop())
		},
		func() (component.Component, error) {
			return NewFactory().CreateLogs(ctx, processortest.NewNopSettings(metadata.Type), defaultConfig(), consumertest.NewNop())
		},
	} {
		p, err := create()
		if err != nil {
			t.Fatal(err)
		}
		err = p.Start(ctx, componenttest.NewNopHost())
		if err == nil {
			p.Shutdown(ctx)
			t.Fatal("started without a content store")
		}
		if !strings.Contains(err.Error(), "no content store") || !strings.Contains(err.Error(), "contentstore") {
			t.Fatalf("error does not say what is missing: %v", err)
		}
	}
	if entries, _ := os.ReadDir("."); len(entries) != 0 {
		t.Fatalf("a refused start left files behind: %v", entries)
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
	if err := p.Start(ctx, componenttest.NewNopHost()); err == nil || !strings.Contains(err.Error(), "not in service.extensions") {
		t.Fatalf("named store missing: %v", err)
	}
	nf := extensiontest.NewNopFactory()
	nop, err := nf.Create(ctx, extensiontest.NewNopSettings(nf.Type()), nf.CreateDefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx, host{id: nop}); err == nil || !strings.Contains(err.Error(), "not a content store extension") {
		t.Fatalf("extension that is not a store: %v", err)
	}
}
