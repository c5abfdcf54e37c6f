package collector

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.yaml.in/yaml/v3"
)

// builderModule is one entry of an OpenTelemetry Collector Builder config.
type builderModule struct {
	GoMod  string `yaml:"gomod"`
	Import string `yaml:"import"`
}

type builderConfig struct {
	// Known fields only: a misspelt key would be ignored by the builder.
	Dist struct {
		Module      string `yaml:"module"`
		Name        string `yaml:"name"`
		Description string `yaml:"description"`
		OutputPath  string `yaml:"output_path"`
	} `yaml:"dist"`
	Receivers  []builderModule `yaml:"receivers"`
	Processors []builderModule `yaml:"processors"`
	Exporters  []builderModule `yaml:"exporters"`
	Connectors []builderModule `yaml:"connectors"`
	Extensions []builderModule `yaml:"extensions"`
	Telemetry  builderModule   `yaml:"telemetry"`
	Providers  []builderModule `yaml:"providers"`
	Replaces   []string        `yaml:"replaces"`
}

// module and version of a gomod spec ("path version").
func (m builderModule) module() (path, version string) {
	path, version, _ = strings.Cut(m.GoMod, " ")
	return path, version
}

// importPath defaults to the module path, as the builder does.
func (m builderModule) importPath() string {
	if m.Import != "" {
		return m.Import
	}
	path, _ := m.module()
	return path
}

// componentPackage is the package a builder config has to import for a
// factory: the one that defines its createDefaultConfig function. (The
// config type is no guide: memory_limiter's lives in an internal package.)
// Every collector factory embeds component.CreateDefaultConfigFunc.
func componentPackage(t *testing.T, factory any) string {
	t.Helper()
	fn, ok := createDefaultConfigFunc(reflect.ValueOf(factory))
	if !ok {
		t.Fatalf("factory %T has no CreateDefaultConfigFunc to tell its package", factory)
	}
	name := runtime.FuncForPC(fn.Pointer()).Name() // "import/path.createDefaultConfig" or "…NewFactory.func1"
	slash := strings.LastIndex(name, "/")
	dot := strings.Index(name[slash+1:], ".")
	if dot < 0 {
		t.Fatalf("factory %T: cannot tell the package of %q", factory, name)
	}
	return name[:slash+1+dot]
}

// createDefaultConfigFunc finds the embedded function, also through the
// factories that wrap another (x* experimental factories embed the stable one).
func createDefaultConfigFunc(v reflect.Value) (reflect.Value, bool) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return v, false
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return v, false
	}
	if fn := v.FieldByName("CreateDefaultConfigFunc"); fn.IsValid() && fn.Kind() == reflect.Func && !fn.IsNil() {
		return fn, true
	}
	for i := range v.NumField() {
		if v.Type().Field(i).Anonymous {
			if fn, ok := createDefaultConfigFunc(v.Field(i)); ok {
				return fn, true
			}
		}
	}
	return v, false
}

// factoryPackages lists the distinct packages of a kind's factories; a
// component registered under an alias too (otlp and otlp_grpc) is one import.
func factoryPackages[K comparable, F component.Factory](t *testing.T, factories map[K]F) []string {
	t.Helper()
	var pkgs []string
	for _, f := range factories {
		pkgs = append(pkgs, componentPackage(t, f))
	}
	slices.Sort(pkgs)
	return slices.Compact(pkgs)
}

func builderImports(mods []builderModule) []string {
	var pkgs []string
	for _, m := range mods {
		pkgs = append(pkgs, m.importPath())
	}
	slices.Sort(pkgs)
	return pkgs
}

// TestBuilderConfigListsTheDistribution holds builder-config.yaml to what
// the distribution registers, so a team building its own collector from it
// gets the same components at the versions Docket is tested with.
func TestBuilderConfigListsTheDistribution(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "builder-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg builderConfig
	dec := yaml.NewDecoder(strings.NewReader(string(raw)))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		t.Fatalf("builder-config.yaml: %v", err)
	}

	f, err := Components()
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []struct {
		name  string
		want  []string
		entry []builderModule
	}{
		{"receivers", factoryPackages(t, f.Receivers), cfg.Receivers},
		{"processors", factoryPackages(t, f.Processors), cfg.Processors},
		{"exporters", factoryPackages(t, f.Exporters), cfg.Exporters},
		{"connectors", factoryPackages(t, f.Connectors), cfg.Connectors},
		{"extensions", factoryPackages(t, f.Extensions), cfg.Extensions},
		{"telemetry", []string{componentPackage(t, f.Telemetry)}, []builderModule{cfg.Telemetry}},
	} {
		if got := builderImports(kind.entry); !slices.Equal(got, kind.want) {
			t.Errorf("builder-config.yaml %s:\n got  %v\n want %v (collector.Components())", kind.name, got, kind.want)
		}
	}

	// Every gomod names the module its import lives in, at the version
	// this build uses (go.mod's); Docket's own is built from this checkout.
	mainModule, required := goModRequires(t, filepath.Join(root, "go.mod"))
	all := slices.Concat(cfg.Receivers, cfg.Processors, cfg.Exporters, cfg.Connectors, cfg.Extensions, []builderModule{cfg.Telemetry}, cfg.Providers)
	for _, m := range all {
		path, version := m.module()
		if imp := m.importPath(); imp != path && !strings.HasPrefix(imp, path+"/") {
			t.Errorf("%s: import %s is not in module %s", m.GoMod, imp, path)
		}
		if path == mainModule {
			if version != "v0.0.0" {
				t.Errorf("%s: docket's own module is built from this checkout (v0.0.0 and a replace)", m.GoMod)
			}
			continue
		}
		if want, ok := required[path]; !ok {
			t.Errorf("%s: module %s is not a dependency in go.mod", m.GoMod, path)
		} else if version != want {
			t.Errorf("%s: go.mod has %s %s", m.GoMod, path, want)
		}
	}

	var replaced bool
	for _, r := range cfg.Replaces {
		from, to, ok := strings.Cut(r, " => ")
		if !ok || strings.TrimSpace(from) != mainModule {
			continue
		}
		// The builder writes replaces into the generated go.mod in output_path.
		if got := filepath.Clean(filepath.Join(root, cfg.Dist.OutputPath, strings.TrimSpace(to))); got != root {
			t.Errorf("replace %q points at %s, not the repository root %s", r, got, root)
		}
		replaced = true
	}
	if !replaced {
		t.Errorf("builder-config.yaml: no replace of %s for a build from this checkout", mainModule)
	}
}

// goModRequires reads the module path and the required versions from a
// go.mod as `go mod tidy` formats it.
func goModRequires(t *testing.T, path string) (module string, required map[string]string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	required = map[string]string{}
	inRequire := false
	for line := range strings.Lines(string(raw)) {
		line, _, _ = strings.Cut(line, "//")
		fields := strings.Fields(line)
		switch {
		case len(fields) == 2 && fields[0] == "module":
			module = fields[1]
		case len(fields) == 2 && fields[0] == "require" && fields[1] == "(":
			inRequire = true
		case len(fields) == 1 && fields[0] == ")":
			inRequire = false
		case len(fields) == 3 && fields[0] == "require":
			required[fields[1]] = fields[2]
		case inRequire && len(fields) == 2:
			required[fields[0]] = fields[1]
		}
	}
	if module == "" || len(required) == 0 {
		t.Fatalf("%s: no module line or no requirements", path)
	}
	return module, required
}
