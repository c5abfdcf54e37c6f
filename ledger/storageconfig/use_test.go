package storageconfig

import (
	"testing"

	"go.opentelemetry.io/collector/confmap"
)

type user struct {
	Storage Use `mapstructure:"storage"`
}

func TestUseReadsAnExtensionIDOrAnInlineEngine(t *testing.T) {
	for _, tc := range []struct {
		name string
		conf map[string]any
		ext  string
		path string
	}{
		{name: "extension", conf: map[string]any{"storage": "ledgerstorage/main"}, ext: "ledgerstorage/main"},
		{name: "inline", conf: map[string]any{"storage": map[string]any{"embedded": map[string]any{"path": "/var/lib/ledger"}}}, path: "/var/lib/ledger"},
		{name: "absent", conf: map[string]any{}, path: DefaultEmbeddedPath},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var u user
			if err := confmap.NewFromStringMap(tc.conf).Unmarshal(&u); err != nil {
				t.Fatal(err)
			}
			if got := u.Storage.Extension; tc.ext != "" && (got == nil || got.String() != tc.ext) || tc.ext == "" && got != nil {
				t.Fatalf("extension %v, want %q", got, tc.ext)
			}
			if tc.ext == "" && u.Storage.EmbeddedPath() != tc.path {
				t.Fatalf("embedded path %q, want %q", u.Storage.EmbeddedPath(), tc.path)
			}
			if err := u.Storage.Validate(); err != nil {
				t.Fatal(err)
			}
		})
	}
	var u user
	if err := confmap.NewFromStringMap(map[string]any{"storage": "not an id!"}).Unmarshal(&u); err == nil {
		t.Fatal("a malformed extension ID was accepted")
	}
}
