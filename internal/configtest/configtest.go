// Package configtest reads a component's configuration examples from its
// testdata/config.yaml, as the collector would: the one place component
// tests load, merge, unmarshal and validate a configuration.
package configtest

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
)

// Section is the section id ("type" or "type/name") of the test's
// testdata/config.yaml.
func Section(t testing.TB, id string) *confmap.Conf {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sub, err := cm.Sub(id)
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

// Load unmarshals section id, with overrides (none if nil) merged over it,
// onto cfg — a factory's default — and returns cfg, unvalidated.
func Load[C component.Config](t testing.TB, id string, cfg C, overrides map[string]any) C {
	t.Helper()
	sub := Section(t, id)
	if overrides != nil {
		if err := sub.Merge(confmap.NewFromStringMap(overrides)); err != nil {
			t.Fatal(err)
		}
	}
	if err := sub.Unmarshal(cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Check loads the section of f's type named name over f's default and
// checks it: with wantErr, validation fails with an error containing it;
// without, it validates and equals want.
func Check(t *testing.T, f component.Factory, name string, want component.Config, wantErr string) {
	t.Helper()
	cfg := Load(t, component.NewIDWithName(f.Type(), name).String(), f.CreateDefaultConfig(), nil)
	err := confmap.Validate(cfg)
	if wantErr != "" {
		require.ErrorContains(t, err, wantErr)
		return
	}
	require.NoError(t, err)
	assert.Equal(t, want, cfg)
}
