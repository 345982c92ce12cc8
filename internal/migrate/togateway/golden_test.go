package togateway

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/migrate"
)

// update rewrites the golden files and the generated section of
// docs/migrating-from-ingress-nginx.md: go test ./internal/migrate/togateway -update
var update = flag.Bool("update", false, "rewrite golden files and generated documentation")

// readCase reads testdata/NAME.yaml and the options its first line
// names: "# options: allow-insecure ingress-class=nginx without-class
// gateway-namespace=NS".
func readCase(t *testing.T, path string) (Input, Options) {
	t.Helper()
	objs, err := migrate.FromDir(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs.ReadProblems) > 0 {
		t.Fatalf("%s: %+v", path, objs.ReadProblems)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var opts Options
	first, _, _ := strings.Cut(string(data), "\n")
	if o, ok := strings.CutPrefix(first, "# options:"); ok {
		for _, f := range strings.Fields(o) {
			name, value, _ := strings.Cut(f, "=")
			switch name {
			case "allow-insecure":
				opts.AllowInsecure = true
			case "ingress-class":
				opts.IngressClasses = append(opts.IngressClasses, value)
			case "without-class":
				opts.WithoutClass = true
			case "gateway-namespace":
				opts.GatewayNamespace = value
			default:
				t.Fatalf("%s: unknown option %q", path, f)
			}
		}
	}
	in := Input{Ingresses: objs.Ingresses, ConfigMaps: objs.ConfigMaps,
		Controller: ControllerConfigMap(objs.ConfigMaps, "", "", migrate.DefaultConfigMapName)}
	return in, opts
}

// render is a case's golden text: the YAML, then the text report as
// comments.
func render(t *testing.T, out Output, r Report) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteYAML(&b, out); err != nil {
		t.Fatal(err)
	}
	var rep bytes.Buffer
	if err := WriteText(&rep, r); err != nil {
		t.Fatal(err)
	}
	b.WriteString("# ---- report ----\n")
	for _, l := range strings.Split(strings.TrimSuffix(rep.String(), "\n"), "\n") {
		b.WriteString(strings.TrimRight("# "+l, " ") + "\n")
	}
	return b.Bytes()
}

func cases(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases in testdata: %v", err)
	}
	return files
}

// TestGolden converts each case of testdata and compares the objects
// and the report with NAME.golden.
func TestGolden(t *testing.T) {
	for _, file := range cases(t) {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			in, opts := readCase(t, file)
			out, r := Convert(in, opts)
			compareGolden(t, strings.TrimSuffix(file, ".yaml")+".golden", render(t, out, r))
		})
	}
}

// TestEveryRuleHasACase: every rule of the table is applied by some case,
// so each mapping, and each "cannot express", has its golden file.
func TestEveryRuleHasACase(t *testing.T) {
	seen := map[string]bool{}
	for _, file := range cases(t) {
		in, opts := readCase(t, file)
		_, r := Convert(in, opts)
		for _, ing := range r.Ingresses {
			if ing.Skipped != "" {
				seen[ruleClass.ID] = true
			}
			for _, f := range ing.Findings {
				seen[f.Rule] = true
			}
		}
		for _, f := range r.ConfigMap {
			seen[f.Rule] = true
		}
	}
	for _, rule := range Rules() {
		if !seen[rule.ID] {
			t.Errorf("no case in testdata applies rule %q", rule.ID)
		}
	}
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/migrate/togateway -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run go test ./internal/migrate/togateway -update and review the diff):\n%s", path, got)
	}
}

// ReadCase and CompareGolden serve proof_test.go (package
// togateway_test), which proves each case with internal/migrate/equivalence.
var ReadCase, CompareGolden = readCase, compareGolden
