package web

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/docketlabs/docket/internal/shorttest"
)

func TestAssetsHoldTheApp(t *testing.T) {
	assets := Assets()
	for _, name := range []string{"index.html", "app.js", "app.css", "favicon.svg"} {
		b, err := fs.ReadFile(assets, name)
		if err != nil {
			t.Fatalf("asset %s: %v", name, err)
		}
		if len(bytes.TrimSpace(b)) == 0 {
			t.Errorf("asset %s is empty", name)
		}
	}
	inAssets, _ := fs.ReadFile(assets, "index.html")
	if !bytes.Equal(Index(), inAssets) {
		t.Error("Index() differs from index.html in Assets()")
	}
}

// indexProblems lists what in a page would break under the strict CSP or
// load something from elsewhere: inline script or style, event-handler
// attributes, and URLs outside /assets/.
func indexProblems(page []byte) []string {
	var problems []string
	z := html.NewTokenizer(bytes.NewReader(page))
	inScript := false
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return problems
		case html.TextToken:
			if inScript && strings.TrimSpace(string(z.Text())) != "" {
				problems = append(problems, "inline script body")
			}
		case html.EndTagToken:
			if name, _ := z.TagName(); string(name) == "script" {
				inScript = false
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			tag := string(name)
			attrs := map[string]string{}
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				attrs[string(k)] = string(v)
			}
			switch tag {
			case "style":
				problems = append(problems, "<style> element")
			case "script":
				inScript = tt == html.StartTagToken
				if attrs["src"] == "" {
					problems = append(problems, "<script> without src")
				}
			}
			for k, v := range attrs {
				switch {
				case k == "style":
					problems = append(problems, "style attribute on <"+tag+">")
				case strings.HasPrefix(k, "on"):
					problems = append(problems, k+" attribute on <"+tag+">")
				case k == "src" || k == "href" || k == "action" || k == "srcset" || k == "poster" || k == "data":
					if !strings.HasPrefix(v, "/assets/") || strings.Contains(v, "..") {
						problems = append(problems, k+"="+v+" outside /assets/")
					}
				}
			}
		}
	}
}

func TestIndexIsCSPClean(t *testing.T) {
	if p := indexProblems(Index()); len(p) > 0 {
		t.Fatalf("index.html: %s", strings.Join(p, "; "))
	}
	// Everything index.html points at must exist.
	for _, m := range regexp.MustCompile(`(?:src|href)="/assets/([^"]+)"`).FindAllSubmatch(Index(), -1) {
		if _, err := fs.Stat(Assets(), string(m[1])); err != nil {
			t.Errorf("index.html refers to /assets/%s: %v", m[1], err)
		}
	}
	if !bytes.Contains(Index(), []byte(`<script type="module" src="/assets/app.js">`)) {
		t.Error("index.html does not load /assets/app.js as a module")
	}
}

func TestIndexCheckCatchesViolations(t *testing.T) {
	bad := map[string]string{
		"inline script":      `<script>alert(1)</script>`,
		"src and body":       `<script src="/assets/a.js">alert(1)</script>`,
		"style element":      `<style>body{}</style>`,
		"style attribute":    `<div style="color:red"></div>`,
		"handler":            `<body onload="x()"></body>`,
		"external script":    `<script src="https://cdn.example/x.js"></script>`,
		"external style":     `<link rel="stylesheet" href="//cdn.example/x.css">`,
		"javascript link":    `<a href="javascript:alert(1)">x</a>`,
		"escaping /assets/":  `<script src="/assets/../api/x"></script>`,
		"external image":     `<img src="http://evil.example/p.png">`,
		"external form post": `<form action="https://evil.example/"></form>`,
	}
	for name, page := range bad {
		if p := indexProblems([]byte(page)); len(p) == 0 {
			t.Errorf("%s: %s passed the check", name, page)
		}
	}
	good := `<link rel="stylesheet" href="/assets/app.css"><script type="module" src="/assets/app.js"></script>`
	if p := indexProblems([]byte(good)); len(p) > 0 {
		t.Errorf("a clean page was refused: %v", p)
	}
}

// unsafePatterns turn data into markup or code, or set inline styles the
// CSP refuses. The UI builds DOM with createElement and textContent only.
var unsafePatterns = []struct {
	name string
	re   *regexp.Regexp
}{
	{"innerHTML", regexp.MustCompile(`innerHTML`)},
	{"outerHTML", regexp.MustCompile(`outerHTML`)},
	{"insertAdjacentHTML", regexp.MustCompile(`insertAdjacentHTML`)},
	{"createContextualFragment", regexp.MustCompile(`createContextualFragment`)},
	{"document.write", regexp.MustCompile(`document\s*\.\s*write`)},
	{"eval", regexp.MustCompile(`\beval\s*\(`)},
	{"new Function", regexp.MustCompile(`new\s+Function\b`)},
	{"string timer", regexp.MustCompile(`set(?:Timeout|Interval)\s*\(\s*['"\x60]`)},
	{"style attribute", regexp.MustCompile(`setAttribute(?:NS)?\s*\(\s*(?:[^,]*,\s*)?['"\x60]style['"\x60]`)},
	{"cssText", regexp.MustCompile(`cssText`)},
	{"javascript: URL", regexp.MustCompile(`(?i)javascript:`)},
}

// urlRe finds absolute URLs; the only one the app needs is the SVG
// namespace, which names rather than loads.
var urlRe = regexp.MustCompile(`(?i)https?://[^\s'"\x60)]*`)

func unsafeUses(src string) []string {
	var found []string
	for _, p := range unsafePatterns {
		if p.re.MatchString(src) {
			found = append(found, p.name)
		}
	}
	for _, u := range urlRe.FindAllString(src, -1) {
		if u != "http://www.w3.org/2000/svg" {
			found = append(found, "external URL "+u)
		}
	}
	return found
}

func TestScriptsUseNoUnsafeSinks(t *testing.T) {
	n := 0
	eachFile(t, ".js", func(name, src string) {
		n++
		if found := unsafeUses(src); len(found) > 0 {
			t.Errorf("%s uses %s", name, strings.Join(found, ", "))
		}
	})
	if n < 2 {
		t.Fatalf("found %d .js files; the walk is broken", n)
	}
}

func TestSinkCheckCatchesViolations(t *testing.T) {
	bad := []string{
		`el.innerHTML = data;`,
		`el.outerHTML = x`,
		`el.insertAdjacentHTML('beforeend', x)`,
		`document.write(x)`,
		`eval(code)`,
		`const f = new Function('return 1')`,
		`setTimeout("run()", 10)`,
		`el.setAttribute('style', 'color:red')`,
		`el.setAttribute( "style" , s)`,
		`el.setAttributeNS(null, 'style', s)`,
		`el.style.cssText = s`,
		`a.href = 'javascript:void(0)'`,
		`fetch('https://cdn.example/x')`,
		`range.createContextualFragment(x)`,
	}
	for _, src := range bad {
		if len(unsafeUses(src)) == 0 {
			t.Errorf("not caught: %s", src)
		}
	}
	good := `const SVG_NS = 'http://www.w3.org/2000/svg'; el.style.width = '10px'; pre.textContent = content; setTimeout(() => f(), 10);`
	if found := unsafeUses(good); len(found) > 0 {
		t.Errorf("safe code refused: %v", found)
	}
}

func TestStylesLoadNothing(t *testing.T) {
	eachFile(t, ".css", func(name, src string) {
		for _, bad := range []string{"@import", "url(", "expression("} {
			if strings.Contains(src, bad) {
				t.Errorf("%s contains %s", name, bad)
			}
		}
	})
}

var (
	importRe = regexp.MustCompile(`(?m)^\s*import\s+(?:([\w$]+)\s*,?\s*)?(?:\*\s+as\s+([\w$]+)\s*|\{([^}]*)\}\s*)?(?:from\s+)?['"]([^'"]+)['"]`)
	exportRe = regexp.MustCompile(`(?m)^export\s+(?:default\s+|(?:async\s+)?function\*?\s+([\w$]+)|(?:const|let|var|class)\s+([\w$]+)|\{([^}]*)\})`)
)

type module struct {
	exports    map[string]bool
	hasDefault bool
	imports    []moduleImport
}

type moduleImport struct {
	spec      string
	names     []string // imported names
	locals    []string // the names they are bound to in the importing module
	namespace string   // the local name of "import * as ns"
	wantsDef  bool
}

func parseModule(src string) module {
	m := module{exports: map[string]bool{}}
	for _, e := range exportRe.FindAllStringSubmatch(src, -1) {
		switch {
		case strings.HasPrefix(e[0], "export default"):
			m.hasDefault = true
		case e[1] != "":
			m.exports[e[1]] = true
		case e[2] != "":
			m.exports[e[2]] = true
		default:
			for _, part := range strings.Split(e[3], ",") {
				fields := strings.Fields(part)
				if len(fields) == 0 {
					continue
				}
				name := fields[len(fields)-1]
				if name == "default" {
					m.hasDefault = true
				} else {
					m.exports[name] = true
				}
			}
		}
	}
	for _, i := range importRe.FindAllStringSubmatch(src, -1) {
		imp := moduleImport{spec: i[4], namespace: i[2], wantsDef: i[1] != ""}
		for _, local := range []string{i[1], i[2]} {
			if local != "" {
				imp.locals = append(imp.locals, local)
			}
		}
		for _, part := range strings.Split(i[3], ",") {
			if fields := strings.Fields(part); len(fields) > 0 {
				imp.names = append(imp.names, fields[0])
				imp.locals = append(imp.locals, fields[len(fields)-1])
			}
		}
		m.imports = append(m.imports, imp)
	}
	return m
}

// TestModulesLink checks what the browser checks only at run time: every
// import points at a module of the app that exports the imported names,
// and every module is reachable from app.js. It also refuses imports that
// are never used and exports that nothing imports.
func TestModulesLink(t *testing.T) {
	mods := map[string]module{}
	used := map[string]bool{} // "module|name" of every export in use
	eachFile(t, ".js", func(name, src string) {
		m := parseModule(src)
		mods[name] = m
		for _, imp := range m.imports {
			target := path.Join(path.Dir(name), imp.spec)
			for _, n := range imp.names {
				used[target+"|"+n] = true
			}
			if imp.wantsDef {
				used[target+"|default"] = true
			}
			if imp.namespace != "" {
				re := regexp.MustCompile(`\b` + regexp.QuoteMeta(imp.namespace) + `\.([\w$]+)`)
				for _, u := range re.FindAllStringSubmatch(src, -1) {
					used[target+"|"+u[1]] = true
				}
			}
		}
		for _, imp := range m.imports {
			for _, local := range imp.locals {
				if len(regexp.MustCompile(`\b`+regexp.QuoteMeta(local)+`\b`).FindAllStringIndex(src, 2)) < 2 {
					t.Errorf("%s imports %s from %s but never uses it", name, local, imp.spec)
				}
			}
		}
	})
	reached := map[string]bool{}
	var visit func(name string)
	visit = func(name string) {
		if reached[name] {
			return
		}
		reached[name] = true
		for _, imp := range mods[name].imports {
			if !strings.HasPrefix(imp.spec, "./") && !strings.HasPrefix(imp.spec, "../") {
				t.Errorf("%s imports %q: only relative imports of the app's own modules", name, imp.spec)
				continue
			}
			target := path.Join(path.Dir(name), imp.spec)
			dep, ok := mods[target]
			if !ok {
				t.Errorf("%s imports %q: no such module (%s)", name, imp.spec, target)
				continue
			}
			if imp.wantsDef && !dep.hasDefault {
				t.Errorf("%s imports the default export of %s, which has none", name, target)
			}
			for _, n := range imp.names {
				if !dep.exports[n] {
					t.Errorf("%s imports %s from %s, which does not export it", name, n, target)
				}
			}
			visit(target)
		}
	}
	visit("app.js")
	for name, m := range mods {
		if !reached[name] {
			t.Errorf("%s is not imported by anything reachable from app.js", name)
		}
		for export := range m.exports {
			if !used[name+"|"+export] {
				t.Errorf("%s exports %s, which no module uses", name, export)
			}
		}
		if m.hasDefault && !used[name+"|default"] {
			t.Errorf("%s has a default export that no module imports", name)
		}
	}
}

func TestModuleParserSeesImportsAndExports(t *testing.T) {
	m := parseModule("import a, { b, c as d } from './x.js';\nimport * as e from '../y.js';\nexport function f() {}\nexport const g = 1;\nexport default function () {}\nexport { h as i };\n")
	if len(m.imports) != 2 || !m.imports[0].wantsDef || !slices.Equal(m.imports[0].names, []string{"b", "c"}) ||
		!slices.Equal(m.imports[0].locals, []string{"a", "b", "d"}) || m.imports[1].spec != "../y.js" || !slices.Equal(m.imports[1].locals, []string{"e"}) {
		t.Errorf("imports: %+v", m.imports)
	}
	if !m.exports["f"] || !m.exports["g"] || !m.exports["i"] || m.exports["h"] || !m.hasDefault {
		t.Errorf("exports: %+v default=%v", m.exports, m.hasDefault)
	}
}

// TestScriptsParse runs node's syntax check on every module. Node parses a
// .js file as a script unless told otherwise, and then passes some broken
// modules; a copy named .mjs is parsed as a module.
func TestScriptsParse(t *testing.T) {
	node := findNode(t)
	dir := t.TempDir()
	eachFile(t, ".js", func(name, src string) {
		copyPath := filepath.Join(dir, strings.ReplaceAll(name, "/", "_")+".mjs")
		if err := os.WriteFile(copyPath, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(node, "--check", copyPath).CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", name, err, out)
		}
	})
	broken := filepath.Join(dir, "broken.mjs")
	if err := os.WriteFile(broken, []byte("import { a } from './a.js';\nexport const x = ;\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := exec.Command(node, "--check", broken).Run(); err == nil {
		t.Error("node --check passed a broken module; the syntax check checks nothing")
	}
}

// TestDisplayRules runs the JavaScript tests of the display rules (unknown
// is not zero, +?, UTC times, safe redirects) with node's test runner.
func TestDisplayRules(t *testing.T) {
	node := findNode(t)
	tests, err := filepath.Glob(filepath.Join("jstest", "*.test.js"))
	if err != nil || len(tests) == 0 {
		t.Fatalf("no JavaScript tests found in jstest/ (%v)", err)
	}
	out, err := exec.Command(node, append([]string{"--test"}, tests...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("node --test: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`(?m)^# pass [1-9]`).Match(out) || !regexp.MustCompile(`(?m)^# fail 0$`).Match(out) {
		t.Fatalf("node --test ran no passing tests:\n%s", out)
	}
}

func findNode(t *testing.T) string {
	t.Helper()
	shorttest.Needs(t, shorttest.Node)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; the JavaScript checks need it")
	}
	return node
}

func eachFile(t *testing.T, ext string, fn func(name, src string)) {
	t.Helper()
	err := fs.WalkDir(Assets(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(name, ext) {
			return err
		}
		b, err := fs.ReadFile(Assets(), name)
		if err != nil {
			return err
		}
		fn(name, string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
