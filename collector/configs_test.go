package collector_test

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestShippedConfigsValidate runs `docket collector validate` on the
// configs the project ships: the dev stack and the production shape in
// deploy/.
func TestShippedConfigsValidate(t *testing.T) {
	bin := docketBinary(t)
	dir := t.TempDir()
	deployEnv := []string{
		"DOCKET_CLICKHOUSE_DSN=https://docket:secret@clickhouse:8443/docket",
		"DOCKET_S3_ENDPOINT=s3.internal:9000", "DOCKET_S3_ACCESS_KEY=docket", "DOCKET_S3_SECRET_KEY=secret",
		"DOCKET_CONTENT_SECRET=" + strings.Repeat("k", 32), "DOCKET_TRACES_BACKEND=tempo.internal:4317",
		"DOCKET_DATA=" + dir, "DOCKET_UI_CERT=" + filepath.Join(dir, "ui.crt"), "DOCKET_UI_KEY=" + filepath.Join(dir, "ui.key"),
		"DOCKET_OTLP_CERT=" + filepath.Join(dir, "otlp.crt"), "DOCKET_OTLP_KEY=" + filepath.Join(dir, "otlp.key"),
		"DOCKET_INGEST_TOKENS=" + filepath.Join(dir, "ingest-tokens"),
	}
	validate := func(path string, env []string, extra ...string) (string, error) {
		cmd := exec.Command(bin, append([]string{"collector", "validate", "--config", path}, extra...)...)
		cmd.Env = append(cmd.Environ(), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := validate("dev.yaml", []string{"DATA_DIR=" + dir}); err != nil {
		t.Errorf("dev.yaml does not validate: %v\n%s", err, out)
	}
	if out, err := validate("../deploy/collector.yaml", deployEnv); err != nil {
		t.Errorf("deploy/collector.yaml does not validate: %v\n%s", err, out)
	}
	// The two layers (deploy/README.md).
	fleetEnv := append(deployEnv, "DOCKET_GATEWAYS=[gw-0:4317, gw-1:4317]", "DOCKET_GATEWAY_CA="+filepath.Join(dir, "gw-ca.crt"),
		"DOCKET_AGENT_CERT="+filepath.Join(dir, "agent.crt"), "DOCKET_AGENT_KEY="+filepath.Join(dir, "agent.key"),
		"DOCKET_GATEWAY_CERT="+filepath.Join(dir, "gw.crt"), "DOCKET_GATEWAY_KEY="+filepath.Join(dir, "gw.key"),
		"DOCKET_AGENT_CA="+filepath.Join(dir, "agent-ca.crt"), `DOCKET_LEDGER_STORAGE={clickhouse: {dsn: "https://docket:secret@clickhouse:8443/docket"}}`)
	for _, path := range []string{"../deploy/agent.yaml", "../deploy/gateway.yaml"} {
		if out, err := validate(path, fleetEnv); err != nil {
			t.Errorf("%s does not validate: %v\n%s", path, err, out)
		}
	}
	// The same config with one unknown key is refused, naming it.
	out, err := validate("../deploy/collector.yaml", deployEnv, "--set=processors::sqlsanitizer::no_such_key=1")
	if err == nil || !strings.Contains(out, "no_such_key") {
		t.Errorf("an unknown key validated (%v):\n%s", err, out)
	}
	out, err = validate("../deploy/collector.yaml", deployEnv, "--set=processors::tenant::on_mismatch=ignore")
	if err == nil || !strings.Contains(out, "on_mismatch") {
		t.Errorf("an unknown on_mismatch validated (%v):\n%s", err, out)
	}
}

// TestShippedConfigsAuthenticateIngest checks every config the project
// ships or tests with: an OTLP receiver listening beyond loopback requires
// TLS and an authenticator and passes client metadata on; every pipeline
// fed by an OTLP receiver runs the tenant processor first (before anything
// that drops the request's identity); only loopback-only configs trust
// the sender's tenant attribute (a gateway trusts its agents' stamp by
// their certificate: tenantauth's relays).
func TestShippedConfigsAuthenticateIngest(t *testing.T) {
	paths, err := filepath.Glob("testdata/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	paths = append(paths, "dev.yaml", "../deploy/collector.yaml", "../deploy/agent.yaml", "../deploy/gateway.yaml", "../conformance/testdata/collector.yaml")
	networked := map[string]bool{}
	for _, path := range paths {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var cfg struct {
			Receivers  map[string]map[string]any
			Processors map[string]map[string]any
			Service    struct {
				Pipelines map[string]struct{ Receivers, Processors []string }
			}
		}
		if err := yaml.Unmarshal(raw, &cfg); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		loopbackOnly := true
		for id, r := range cfg.Receivers {
			if componentType(id) != "otlp" {
				continue
			}
			protocols, _ := r["protocols"].(map[string]any)
			for name, p := range protocols {
				p, _ := p.(map[string]any)
				endpoint, _ := p["endpoint"].(string)
				if isLoopback(endpoint) {
					continue
				}
				loopbackOnly = false
				auth, _ := p["auth"].(map[string]any)
				if auth["authenticator"] == nil || p["include_metadata"] != true || p["tls"] == nil {
					t.Errorf("%s: receiver %s/%s listens on %q without authenticator, include_metadata and tls", path, id, name, endpoint)
				}
			}
		}
		networked[path] = !loopbackOnly
		for id, p := range cfg.Processors {
			if componentType(id) == "tenant" && p["trust_sender_attribute"] == true && !loopbackOnly {
				t.Errorf("%s: %s trusts the sender's tenant attribute on receivers beyond loopback", path, id)
			}
		}
		for name, pl := range cfg.Service.Pipelines {
			fromOTLP := slices.ContainsFunc(pl.Receivers, func(r string) bool { return componentType(r) == "otlp" })
			if fromOTLP && (len(pl.Processors) == 0 || componentType(pl.Processors[0]) != "tenant") {
				t.Errorf("%s: pipeline %s receives OTLP but does not run the tenant processor first: %v", path, name, pl.Processors)
			}
		}
	}
	// The production shape must be one the checks above applied to.
	for _, path := range []string{"../deploy/collector.yaml", "../deploy/agent.yaml", "../deploy/gateway.yaml"} {
		if !networked[path] {
			t.Errorf("%s does not listen beyond loopback: the checks above did not apply to it", path)
		}
	}
}

func componentType(id string) string {
	typ, _, _ := strings.Cut(id, "/")
	return typ
}

// isLoopback reports whether an endpoint (host:port, parts may be
// ${env:…}) binds a loopback address only.
func isLoopback(endpoint string) bool {
	host, _, err := net.SplitHostPort(envRef.ReplaceAllString(endpoint, "0"))
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

var envRef = regexp.MustCompile(`\$\{[^}]*\}`)
