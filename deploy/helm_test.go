package deploy_test

import (
	"encoding/xml"
	"fmt"
	"io"
	"log"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"

	"github.com/docketlabs/docket/internal/proctest"
)

const chartDir = "helm/docket"

// chartValues names every Secret the chart requires; the chart holds no
// secret value itself.
func chartValues() map[string]any {
	return map[string]any{
		"secrets": map[string]any{
			"content":      map[string]any{"name": "docket-content"},
			"s3":           map[string]any{"name": "docket-s3"},
			"ingestTokens": map[string]any{"name": "docket-ingest"},
			"clickhouse":   map[string]any{"name": "docket-clickhouse"},
			"adminKeys":    map[string]any{"name": "docket-admin-keys"},
			"oauth2Proxy":  map[string]any{"name": "docket-oauth2-proxy"},
		},
		"tls": map[string]any{
			"otlp":    map[string]any{"secretName": "docket-otlp-tls"},
			"agent":   map[string]any{"secretName": "docket-agent-tls"},
			"gateway": map[string]any{"secretName": "docket-gateway-tls"},
		},
		"tracesBackend": "tempo.tracing.svc:4317",
		"ui":            map[string]any{"oauth2Proxy": map[string]any{"oidcIssuerURL": "https://id.example.com"}},
	}
}

// renderChart is `helm template` through the Helm SDK: the chart as
// packaged (files/ links followed), strict about undefined values.
func renderChart(t *testing.T, vals map[string]any) (map[string]string, error) {
	t.Helper()
	log.SetOutput(io.Discard) // the loader logs each link in files/, which are meant
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	rv, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: "docket", Namespace: "obs", IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	return engine.Engine{Strict: true}.Render(ch, rv)
}

// k8sDecoder decodes YAML into the k8s.io/api types the chart uses,
// refusing unknown and duplicate fields.
func k8sDecoder(t *testing.T) runtime.Decoder {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, autoscalingv2.AddToScheme, batchv1.AddToScheme, policyv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	return kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme, kjson.SerializerOptions{Yaml: true, Strict: true})
}

type manifest struct {
	source string // template file
	obj    runtime.Object
}

func decodeAll(t *testing.T, dec runtime.Decoder, rendered map[string]string) ([]manifest, error) {
	t.Helper()
	var out []manifest
	for _, name := range slices.Sorted(maps.Keys(rendered)) {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		for doc := range strings.SplitSeq(rendered[name], "\n---") {
			if strings.TrimSpace(stripComments(doc)) == "" {
				continue
			}
			obj, _, err := dec.Decode([]byte(doc), nil, nil)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			out = append(out, manifest{name, obj})
		}
	}
	return out, nil
}

func stripComments(doc string) string {
	var b strings.Builder
	for line := range strings.Lines(doc) {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// renderedChart is the chart with chartValues, every object decoded.
type renderedChart struct {
	objs []manifest
}

func renderDecoded(t *testing.T) renderedChart {
	t.Helper()
	rendered, err := renderChart(t, chartValues())
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decodeAll(t, k8sDecoder(t), rendered)
	if err != nil {
		t.Fatal(err)
	}
	return renderedChart{objs}
}

func find[T runtime.Object](c renderedChart, name string) T {
	for _, m := range c.objs {
		if o, ok := m.obj.(T); ok {
			if o, ok := any(o).(interface{ GetName() string }); ok && o.GetName() == name {
				return m.obj.(T)
			}
		}
	}
	var zero T
	return zero
}

// podSpecs is every pod template of the chart by object name.
func (c renderedChart) podSpecs() map[string]*corev1.PodSpec {
	specs := map[string]*corev1.PodSpec{}
	for _, m := range c.objs {
		switch o := m.obj.(type) {
		case *appsv1.Deployment:
			specs[o.Kind+"/"+o.Name] = &o.Spec.Template.Spec
		case *appsv1.DaemonSet:
			specs[o.Kind+"/"+o.Name] = &o.Spec.Template.Spec
		case *appsv1.StatefulSet:
			specs[o.Kind+"/"+o.Name] = &o.Spec.Template.Spec
		case *batchv1.Job:
			specs[o.Kind+"/"+o.Name] = &o.Spec.Template.Spec
		}
	}
	return specs
}

func TestHelmChartRenders(t *testing.T) {
	c := renderDecoded(t)
	var kinds []string
	for _, m := range c.objs {
		gvk := m.obj.GetObjectKind().GroupVersionKind()
		name := m.obj.(interface{ GetName() string }).GetName()
		kinds = append(kinds, gvk.Kind+"/"+name)
	}
	for _, want := range []string{
		"DaemonSet/docket-agent", "Deployment/docket-gateway", "HorizontalPodAutoscaler/docket-gateway",
		"Service/docket-gateway-headless", "Deployment/docket-ui", "Service/docket-ui",
		"StatefulSet/docket-keeper", "StatefulSet/docket-clickhouse-0", "StatefulSet/docket-clickhouse-1",
		"StatefulSet/docket-minio", "Job/docket-validate", "ConfigMap/docket-config",
	} {
		if !slices.Contains(kinds, want) {
			t.Errorf("no %s among %v", want, kinds)
		}
	}
	if slices.ContainsFunc(kinds, func(k string) bool { return strings.HasPrefix(k, "Secret/") }) {
		t.Error("the chart renders a Secret: secrets come from Secrets named in values, never from values")
	}

	hpa := find[*autoscalingv2.HorizontalPodAutoscaler](c, "docket-gateway")
	if hpa == nil || hpa.Spec.ScaleTargetRef.Kind != "Deployment" || hpa.Spec.ScaleTargetRef.Name != "docket-gateway" {
		t.Errorf("the HPA does not scale the gateway Deployment: %+v", hpa)
	}
	if gw := find[*appsv1.Deployment](c, "docket-gateway"); gw == nil || gw.Spec.Replicas != nil {
		t.Error("the gateway Deployment sets replicas, which the HPA owns")
	}

	for pod, spec := range c.podSpecs() {
		for _, ctr := range slices.Concat(spec.InitContainers, spec.Containers) {
			lim := ctr.Resources.Limits
			if lim.Cpu().IsZero() || lim.Memory().IsZero() {
				t.Errorf("%s/%s: no CPU and memory limit", pod, ctr.Name)
			}
			for _, e := range ctr.Env {
				if secretLike.MatchString(e.Name) && (e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil) {
					t.Errorf("%s/%s: %s is not read from a Secret", pod, ctr.Name, e.Name)
				}
			}
		}
	}

	// The hook runs before installs and upgrades and on `helm test`.
	job := find[*batchv1.Job](c, "docket-validate")
	hooks := strings.Split(job.Annotations["helm.sh/hook"], ",")
	for _, h := range []string{"pre-install", "pre-upgrade", "test"} {
		if !slices.Contains(hooks, h) {
			t.Errorf("the validate Job is no %s hook: %v", h, hooks)
		}
	}
}

var secretLike = regexp.MustCompile(`(?i)secret|password|admin_key|access_key|client_id`)

// The collectors run the configs shipped in deploy/, byte for byte.
func TestHelmConfigsAreTheShippedOnes(t *testing.T) {
	c := renderDecoded(t)
	for _, cm := range []string{"docket-config", "docket-validate"} {
		data := find[*corev1.ConfigMap](c, cm).Data
		for _, f := range []string{"agent.yaml", "gateway.yaml", "collector.yaml"} {
			want, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if data[f] != string(want) {
				t.Errorf("ConfigMap %s: %s differs from deploy/%s", cm, f, f)
			}
		}
	}
}

// ledgerUsers are the components that reach the ledger through a storage
// key (storageconfig.Use or an extension ID).
var ledgerUsers = map[string]bool{"exporters/ledger": true, "extensions/docketui": true, "extensions/lifecycle": true, "extensions/reconcile": true}

// The ledger's engine is declared once per collector, in its ledgerstorage
// extension, and every component on the ledger names it by ID: an engine
// configured inside a component is deprecated and would be a second
// engine (a UI overlay that gave the UI and the exporter a cluster left the
// lifecycle on the extension without one). Overlays may leave the key to
// the base config; the base configs give it.
func TestHelmConfigsNameTheLedgerStorage(t *testing.T) {
	c := renderDecoded(t)
	users := 0
	for file, text := range find[*corev1.ConfigMap](c, "docket-config").Data {
		var doc map[string]map[string]any
		if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		overlay := strings.HasSuffix(file, "-kubernetes.yaml")
		for _, kind := range []string{"extensions", "exporters"} {
			for id, section := range doc[kind] {
				typ, _, _ := strings.Cut(id, "/")
				if !ledgerUsers[kind+"/"+typ] {
					continue
				}
				users++
				m, _ := section.(map[string]any)
				storage, given := m["storage"]
				ext, named := storage.(string)
				switch {
				case given && !named:
					t.Errorf("%s: %s %s configures an engine of its own: %v", file, kind, id, storage)
				case !given && !overlay:
					t.Errorf("%s: %s %s names no ledgerstorage extension", file, kind, id)
				case named && doc["extensions"][ext] == nil && !overlay:
					t.Errorf("%s: %s %s names %q, which is not configured", file, kind, id, ext)
				}
			}
		}
	}
	if users < 6 {
		t.Errorf("checked %d components on the ledger; the configs have more", users)
	}
}

// Every docket container, the validate hook's included, passes `docket
// collector validate` (the binary) on the configs its arguments name, with
// the environment its pod gets and nothing else: values and $(VAR)
// references as Kubernetes expands them, placeholders for what comes from
// Secrets. Probes of the collectors ask the health_check
// extension on the port its config listens on.
func TestHelmCollectorsValidate(t *testing.T) {
	c := renderDecoded(t)
	bin := proctest.Build(t, "github.com/docketlabs/docket/cmd/docket")
	checked := 0
	for pod, spec := range c.podSpecs() {
		for _, ctr := range spec.Containers {
			if len(ctr.Args) == 0 || ctr.Args[0] != "collector" {
				continue
			}
			checked++
			t.Run(pod+"/"+ctr.Name, func(t *testing.T) {
				cm := configMapOf(t, c, spec, ctr)
				dir := t.TempDir()
				var configs []string
				for i, a := range ctr.Args {
					if a != "--config" {
						continue
					}
					name := path.Base(ctr.Args[i+1])
					if err := os.WriteFile(filepath.Join(dir, name), []byte(cm.Data[name]), 0o600); err != nil {
						t.Fatal(err)
					}
					configs = append(configs, filepath.Join(dir, name))
				}
				if len(configs) == 0 {
					t.Fatalf("no --config in %v", ctr.Args)
				}
				env := podEnv(t, ctr.Env)
				// An unset variable expands to nothing, which some
				// sections accept (an empty ledger storage is the embedded
				// engine): the pod must set every one without a default.
				for _, u := range configs {
					b, err := os.ReadFile(u)
					if err != nil {
						t.Fatal(err)
					}
					for _, m := range envNoDefault.FindAllStringSubmatch(stripComments(string(b)), -1) {
						if _, ok := env[m[1]]; !ok {
							t.Errorf("%s reads %s, which the pod does not set", path.Base(u), m[1])
						}
					}
				}
				args := []string{"collector", "validate"}
				for _, f := range configs {
					args = append(args, "--config", f)
				}
				cmd := exec.Command(bin, args...)
				cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
				for k, v := range env {
					cmd.Env = append(cmd.Env, k+"="+v)
				}
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("docket %v: %v\n%s", ctr.Args, err, out)
				}
				if ctr.Args[1] == "validate" {
					return
				}
				port := healthPort(t, cm.Data[path.Base(ctr.Args[2])])
				for probe, p := range map[string]*corev1.Probe{"liveness": ctr.LivenessProbe, "readiness": ctr.ReadinessProbe} {
					if p == nil || p.HTTPGet == nil {
						t.Errorf("no HTTP %s probe", probe)
						continue
					}
					if got := containerPort(ctr, p.HTTPGet.Port.String()); got != port {
						t.Errorf("%s probe on port %d, the health_check extension listens on %d", probe, got, port)
					}
				}
			})
		}
	}
	if checked != 6 { // agent, gateway, ui, and the hook's three
		t.Errorf("checked %d collector containers, want 6", checked)
	}
}

// configMapOf is the ConfigMap mounted at /etc/docket in the container.
func configMapOf(t *testing.T, c renderedChart, spec *corev1.PodSpec, ctr corev1.Container) *corev1.ConfigMap {
	t.Helper()
	for _, m := range ctr.VolumeMounts {
		if !strings.HasPrefix(m.MountPath, "/etc/docket") {
			continue
		}
		for _, v := range spec.Volumes {
			if v.Name == m.Name && v.ConfigMap != nil {
				if cm := find[*corev1.ConfigMap](c, v.ConfigMap.Name); cm != nil {
					return cm
				}
				t.Fatalf("ConfigMap %s is not in the chart", v.ConfigMap.Name)
			}
		}
	}
	t.Fatal("no ConfigMap mounted under /etc/docket")
	return nil
}

var envNoDefault = regexp.MustCompile(`\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}`)

var envRefK8s = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// podEnv is the container's environment as Kubernetes sets it: earlier
// variables expanded in later values; a Secret's key as a placeholder
// long enough for any length rule.
func podEnv(t *testing.T, env []corev1.EnvVar) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, e := range env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			out[e.Name] = "placeholder-for-" + e.ValueFrom.SecretKeyRef.Key + "-" + strings.Repeat("x", 32)
		case e.ValueFrom != nil:
			t.Fatalf("%s: only Secret references are expected", e.Name)
		default:
			out[e.Name] = envRefK8s.ReplaceAllStringFunc(e.Value, func(ref string) string {
				v, ok := out[envRefK8s.FindStringSubmatch(ref)[1]]
				if !ok {
					t.Errorf("%s refers to %s, not defined before it", e.Name, ref)
				}
				return v
			})
		}
	}
	return out
}

// healthPort is the port of the config's health_check endpoint (its
// ${env:…:-default} default where it reads one).
func healthPort(t *testing.T, config string) int {
	t.Helper()
	var cfg struct {
		Extensions struct {
			Health struct {
				Endpoint string `yaml:"endpoint"`
			} `yaml:"health_check"`
		} `yaml:"extensions"`
	}
	if err := yaml.Unmarshal([]byte(config), &cfg); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`:(\d+)\}?$`).FindStringSubmatch(cfg.Extensions.Health.Endpoint)
	if m == nil {
		t.Fatalf("no port in health_check endpoint %q", cfg.Extensions.Health.Endpoint)
	}
	port, _ := strconv.Atoi(m[1])
	return port
}

func containerPort(ctr corev1.Container, nameOrNumber string) int {
	for _, p := range ctr.Ports {
		if p.Name == nameOrNumber {
			return int(p.ContainerPort)
		}
	}
	n, _ := strconv.Atoi(nameOrNumber)
	return n
}

// The decoder the tests rely on refuses a misspelt field anywhere in an
// object, as a template typo would produce.
func TestHelmStrictDecodeRefusesUnknownFields(t *testing.T) {
	rendered, err := renderChart(t, chartValues())
	if err != nil {
		t.Fatal(err)
	}
	for file, typo := range map[string][2]string{
		"docket/templates/agent.yaml":   {"containerPort:", "containerport:"},
		"docket/templates/gateway.yaml": {"averageUtilization:", "averageUtilisation:"},
	} {
		broken := maps.Clone(rendered)
		if !strings.Contains(broken[file], typo[0]) {
			t.Fatalf("%s has no %s", file, typo[0])
		}
		broken[file] = strings.Replace(broken[file], typo[0], typo[1], 1)
		if _, err := decodeAll(t, k8sDecoder(t), broken); err == nil || !strings.Contains(err.Error(), strings.TrimSuffix(typo[1], ":")) {
			t.Errorf("%s with %s decoded: %v", file, typo[1], err)
		}
	}
}

// Rendering stops, naming the value, while a required Secret is not named.
func TestHelmRequiresSecrets(t *testing.T) {
	for _, key := range []string{"content", "s3", "ingestTokens", "clickhouse", "oauth2Proxy"} {
		vals := chartValues()
		delete(vals["secrets"].(map[string]any), key)
		if _, err := renderChart(t, vals); err == nil || !strings.Contains(err.Error(), "secrets."+key+".name is required") {
			t.Errorf("without secrets.%s: %v", key, err)
		}
	}
	for _, key := range []string{"otlp", "agent", "gateway"} {
		vals := chartValues()
		delete(vals["tls"].(map[string]any), key)
		if _, err := renderChart(t, vals); err == nil || !strings.Contains(err.Error(), "tls."+key+".secretName is required") {
			t.Errorf("without tls.%s: %v", key, err)
		}
	}
}

// ClickHouse and Keeper read XML the Kubernetes decoder never sees: it
// must be well-formed, and name every shard's replicas and every Keeper.
func TestHelmClickHouseConfig(t *testing.T) {
	c := renderDecoded(t)
	for _, cm := range []string{"docket-clickhouse", "docket-keeper"} {
		for key, text := range find[*corev1.ConfigMap](c, cm).Data {
			d := xml.NewDecoder(strings.NewReader(text))
			for {
				if _, err := d.Token(); err != nil {
					if err.Error() != "EOF" {
						t.Errorf("%s %s: %v", cm, key, err)
					}
					break
				}
			}
		}
	}
	server := find[*corev1.ConfigMap](c, "docket-clickhouse").Data["docket.xml"]
	var cfg struct {
		Remote struct {
			Cluster []struct {
				XMLName xml.Name
				Shards  []struct {
					Replicas []struct {
						Host string `xml:"host"`
					} `xml:"replica"`
				} `xml:"shard"`
			} `xml:",any"`
		} `xml:"remote_servers"`
		Keeper []struct {
			Host string `xml:"host"`
		} `xml:"zookeeper>node"`
	}
	if err := xml.Unmarshal([]byte(server), &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Remote.Cluster) != 1 || cfg.Remote.Cluster[0].XMLName.Local != "docket" {
		t.Fatalf("remote_servers: %+v", cfg.Remote)
	}
	var hosts []string
	for _, s := range cfg.Remote.Cluster[0].Shards {
		for _, r := range s.Replicas {
			hosts = append(hosts, r.Host)
		}
	}
	want := []string{
		"docket-clickhouse-0-0.docket-clickhouse-headless.obs.svc", "docket-clickhouse-0-1.docket-clickhouse-headless.obs.svc",
		"docket-clickhouse-1-0.docket-clickhouse-headless.obs.svc", "docket-clickhouse-1-1.docket-clickhouse-headless.obs.svc",
	}
	if !slices.Equal(hosts, want) || len(cfg.Remote.Cluster[0].Shards) != 2 {
		t.Errorf("cluster hosts %v, want %v", hosts, want)
	}
	if len(cfg.Keeper) != 3 {
		t.Errorf("%d Keeper nodes, want 3", len(cfg.Keeper))
	}
}

// helm lint's rules (chart metadata, values, templates) report nothing
// above information.
func TestHelmLint(t *testing.T) {
	l := lint.All(chartDir, chartValues(), "obs", false)
	for _, m := range l.Messages {
		if m.Severity > support.InfoSev {
			t.Error(m)
		}
	}
}

// The gateways let in the agents by the name of their client certificate
// (gateway.yaml's relay certificate): the chart passes tls.agent.name on.
func TestHelmGatewayKnowsTheAgentsCertificateName(t *testing.T) {
	for _, name := range []string{"", "agent.obs.svc"} {
		vals := chartValues()
		want := "docket-agent" // values.yaml's default
		if name != "" {
			vals["tls"].(map[string]any)["agent"].(map[string]any)["name"] = name
			want = name
		}
		rendered, err := renderChart(t, vals)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := decodeAll(t, k8sDecoder(t), rendered)
		if err != nil {
			t.Fatal(err)
		}
		gw := find[*appsv1.Deployment](renderedChart{objs}, "docket-gateway")
		if got := podEnv(t, gw.Spec.Template.Spec.Containers[0].Env)["DOCKET_AGENT_NAME"]; got != want {
			t.Errorf("tls.agent.name %q: the gateway's DOCKET_AGENT_NAME is %q, want %q", name, got, want)
		}
	}
}
