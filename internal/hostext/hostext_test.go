package hostext

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"

	"github.com/docketlabs/docket/internal/hosttest"
)

type namer interface{ Name() string }

type named struct{ component.Component }

func (named) Name() string { return "n" }

func TestFind(t *testing.T) {
	host := hosttest.Extensions{
		component.MustNewID("good"):  named{},
		component.MustNewID("other"): struct{ component.Component }{},
	}
	if n, err := Find[namer](host, component.MustNewID("good"), "naming"); err != nil || n.Name() != "n" {
		t.Fatalf("good: %v %v", n, err)
	}
	for id, want := range map[string]string{"missing": "naming extension missing is not in service.extensions", "other": "extension other is not a naming extension"} {
		if _, err := Find[namer](host, component.MustNewID(id), "naming"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", id, err, want)
		}
	}
}
