// Package deploy holds the deployment recipes; its tests load them with
// the real parsers: the compose-spec loader for the compose file.
package deploy_test

import (
	"context"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"go.yaml.in/yaml/v3"
)

var composeEnv = map[string]string{
	"CLICKHOUSE_PASSWORD":   "pw",
	"S3_ACCESS_KEY":         "ak",
	"S3_SECRET_KEY":         "sk",
	"DOCKET_CONTENT_SECRET": strings.Repeat("s", 32),
	"DOCKET_TRACES_BACKEND": "tempo:4317",
	"OIDC_ISSUER_URL":       "https://id.example.com",
	"OIDC_CLIENT_ID":        "docket",
}

func loadCompose(t *testing.T, env map[string]string) (*types.Project, error) {
	t.Helper()
	return loader.LoadWithContext(context.Background(), types.ConfigDetails{
		WorkingDir:  "compose",
		ConfigFiles: []types.ConfigFile{{Filename: "compose/compose.yaml"}},
		Environment: maps.Clone(env), // the loader adds to it
	})
}

func TestCompose(t *testing.T) {
	p, err := loadCompose(t, composeEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"clickhouse", "docket", "minio", "oauth2-proxy"}
	if got := p.ServiceNames(); !slices.Equal(slices.Sorted(slices.Values(got)), want) {
		t.Fatalf("services %v, want %v", got, want)
	}
	for name, s := range p.Services {
		if s.Deploy == nil || s.Deploy.Resources.Limits == nil || s.Deploy.Resources.Limits.MemoryBytes == 0 {
			t.Errorf("%s: no memory limit", name)
		}
		if s.Restart == "" {
			t.Errorf("%s: no restart policy", name)
		}
		if name != "oauth2-proxy" && (s.HealthCheck == nil || len(s.HealthCheck.Test) == 0) {
			t.Errorf("%s: no health check", name)
		}
	}
	d := p.Services["docket"]
	if d.Environment["DOCKET_CLICKHOUSE_DSN"] == nil || !strings.HasPrefix(*d.Environment["DOCKET_CLICKHOUSE_DSN"], "http://docket:pw@clickhouse:8123/") {
		t.Errorf("DSN %v", d.Environment["DOCKET_CLICKHOUSE_DSN"])
	}
	for _, dep := range []string{"clickhouse", "minio"} {
		if d.DependsOn[dep].Condition != types.ServiceConditionHealthy {
			t.Errorf("docket starts before %s is healthy", dep)
		}
	}

	// The UI believes identity headers only from its trusted proxies:
	// oauth2-proxy's address must be one, and the collector's must not.
	var cfg struct {
		Extensions struct {
			UI struct {
				Auth struct {
					Proxy struct {
						Trusted []string `yaml:"trusted_proxies"`
					} `yaml:"proxy"`
				} `yaml:"auth"`
			} `yaml:"docketui"`
		} `yaml:"extensions"`
	}
	b, err := os.ReadFile("collector.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	trusted := cfg.Extensions.UI.Auth.Proxy.Trusted
	if ip := p.Services["oauth2-proxy"].Networks["docket"].Ipv4Address; !slices.Contains(trusted, ip) {
		t.Errorf("oauth2-proxy at %s is not among the UI's trusted proxies %v", ip, trusted)
	}
	if ip := d.Networks["docket"].Ipv4Address; slices.Contains(trusted, ip) {
		t.Errorf("the collector's own address %s is trusted", ip)
	}
}

// A missing secret stops the load instead of starting with an empty one.
func TestComposeRequiresSecrets(t *testing.T) {
	for k := range composeEnv {
		env := maps.Clone(composeEnv)
		delete(env, k)
		if _, err := loadCompose(t, env); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("without %s: %v", k, err)
		}
	}
}

// The two-layer configs lose nothing only with these settings (README,
// "Delivery"): the agent's queue on disk, retried without end, and no
// queue or retry per gateway that would hold a batch in memory; the
// gateway answers only once the ledger holds a batch.
func TestTwoLayerDelivery(t *testing.T) {
	// enabled is unset (nil) unless the file says.
	type retry struct {
		Enabled        *bool  `yaml:"enabled"`
		MaxElapsedTime string `yaml:"max_elapsed_time"`
	}
	type queue struct {
		Enabled *bool  `yaml:"enabled"`
		Storage string `yaml:"storage"`
	}
	is := func(b *bool, want bool) bool { return b != nil && *b == want }
	var agent struct {
		Exporters struct {
			LB struct {
				Retry    retry  `yaml:"retry_on_failure"`
				Queue    queue  `yaml:"sending_queue"`
				Routing  string `yaml:"routing_key"`
				Protocol struct {
					OTLP struct {
						Retry retry `yaml:"retry_on_failure"`
						Queue queue `yaml:"sending_queue"`
					} `yaml:"otlp"`
				} `yaml:"protocol"`
			} `yaml:"load_balancing"`
		} `yaml:"exporters"`
		Extensions map[string]map[string]any `yaml:"extensions"`
	}
	var gateway struct {
		Exporters struct {
			Ledger struct {
				Queue queue `yaml:"sending_queue"`
			} `yaml:"ledger"`
		} `yaml:"exporters"`
	}
	for path, out := range map[string]any{"agent.yaml": &agent, "gateway.yaml": &gateway} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	lb := agent.Exporters.LB
	if lb.Routing != "traceID" {
		t.Errorf("agent: routing_key %q, want traceID (tail sampling needs whole traces)", lb.Routing)
	}
	if !is(lb.Queue.Enabled, true) || !strings.HasPrefix(lb.Queue.Storage, "file_storage") || agent.Extensions[lb.Queue.Storage] == nil {
		t.Errorf("agent: load_balancing.sending_queue must be enabled on a configured file_storage (storage %q)", lb.Queue.Storage)
	}
	if !is(lb.Retry.Enabled, true) || lb.Retry.MaxElapsedTime != "0" {
		t.Errorf("agent: load_balancing.retry_on_failure must be enabled with max_elapsed_time 0 (is %q)", lb.Retry.MaxElapsedTime)
	}
	if o := lb.Protocol.OTLP; !is(o.Queue.Enabled, false) || !is(o.Retry.Enabled, false) {
		t.Error("agent: protocol.otlp.sending_queue and retry_on_failure must say enabled: false")
	}
	if !is(gateway.Exporters.Ledger.Queue.Enabled, false) {
		t.Error("gateway: the ledger's sending_queue must say enabled: false (answer only once written)")
	}
}
