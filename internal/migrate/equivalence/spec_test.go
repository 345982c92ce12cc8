package equivalence

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/migrate/togateway"
	"github.com/causeway/causeway/internal/source"
	"github.com/causeway/causeway/internal/source/files"
	"github.com/causeway/causeway/test/spec"
)

// The proof on the behaviour tables: a row's Ingresses and the Gateway
// API objects the converter makes of them build two models (Models, with
// the row's Services, endpoints and Secrets); the row's request must get
// the same answer from both (test/spec's evaluator: status, backend, URI,
// redirect, upstream Host and headers), or the converter's report must
// say, for that Ingress, that something was not converted as written. A
// difference nobody reported fails. Check, which the command runs, must
// find no unexpected difference either.

// outcome is the outcome of one row.
type outcome int

const (
	same outcome = iota
	reported
	refused
)

// snapshotOf loads a row's manifests as the files source does.
func snapshotOf(t *testing.T, manifests string) *source.Snapshot {
	t.Helper()
	path := filepath.Join(t.TempDir(), "row.yaml")
	if err := os.WriteFile(path, []byte(manifests), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, err := files.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// controllerConfig is the manifest of the controller's ConfigMap (the name
// migrate check looks for) with data.
func controllerConfig(data map[string]string) string {
	if len(data) == 0 {
		return ""
	}
	return spec.ConfigMapYAML("ingress-nginx", "ingress-nginx-controller", data)
}

// checkRow converts snap's Ingresses and compares the answers to req; it
// fails t on an unreported difference, from the evaluator or from Check.
func checkRow(t *testing.T, snap *source.Snapshot, req spec.Request) outcome {
	t.Helper()
	ports := spec.Ports{HTTP: 80, HTTPS: 443}
	in := togateway.Input{Ingresses: snap.Ingresses, ConfigMaps: snap.ConfigMaps,
		Controller: togateway.ControllerConfigMap(snap.ConfigMaps, "", "", "ingress-nginx-controller")}
	opts := togateway.Options{GatewayClass: "causeway", IngressClasses: []string{"causeway"}}
	out, rep := togateway.Convert(in, opts)
	m1, m2, problems := Models(in, opts, out, rep, snap)
	// The Ingress side answers on the controller's ports, 8080 and 8443
	// in Causeway's deployment; the Gateway's listeners are 80 and 443.
	want := spec.Eval(m1, req, ports)
	port := ports.HTTP
	if req.Scheme == "https" {
		port = ports.HTTPS
	}
	got := spec.Eval(spec.OnPort(m2, port), req, ports)

	Check(in, opts, out, &rep, snap)
	var unconverted, unexpected []string
	refusedAny := false
	for _, ir := range rep.Ingresses {
		refusedAny = refusedAny || ir.Refused || ir.Rejected != ""
		for _, f := range ir.Findings {
			if f.Outcome != togateway.Converted {
				unconverted = append(unconverted, f.Rule+" "+f.Input)
			}
		}
		if e := ir.Equivalence; e != nil {
			for _, d := range e.Differences {
				if d.Unexpected {
					unexpected = append(unexpected, fmt.Sprintf("%s at %s: Ingress %s, Gateway %s", d.Aspect, d.Request, d.Ingress, d.Gateway))
				}
			}
		}
	}
	for _, f := range rep.ConfigMap {
		if f.Outcome != togateway.Converted {
			unconverted = append(unconverted, f.Rule+" "+f.Input)
		}
	}
	if len(unexpected) > 0 {
		t.Errorf("Check finds differences no finding reports:\n%s", strings.Join(unexpected, "\n"))
	}
	d := want.Mismatch(got, ports)
	switch {
	case d == "":
		return same
	case refusedAny:
		return refused
	case len(unconverted) > 0:
		t.Logf("differs, as reported (%s): %s", strings.Join(unconverted, "; "), d)
		return reported
	}
	var ps []string
	for _, p := range problems {
		ps = append(ps, p.String())
	}
	t.Errorf("the Gateway API objects answer otherwise, and the report says nothing: %s\nproblems: %s", d, strings.Join(ps, "\n"))
	return same
}

// TestPathTable: every row of the path table answers alike, and Check
// finds the Ingress equivalent.
func TestPathTable(t *testing.T) {
	for _, tc := range spec.PathTable {
		t.Run(tc.Name, func(t *testing.T) {
			ing := spec.Ingress{Name: "web", Host: "example.com"}
			eps := map[string]spec.Endpoint{}
			for i, p := range tc.Paths {
				svc := "svc-" + string(rune('a'+i))
				ing.Paths = append(ing.Paths, spec.Route{Path: p.Path, Type: p.Type, Service: svc})
				eps[svc] = spec.Endpoint{IP: "10.0.0." + string(rune('1'+i)), Port: 8080}
			}
			snap := snapshotOf(t, spec.AnnotationCase{Ingresses: []spec.Ingress{ing}}.Manifests(annotations.DefaultPrefix, eps))
			if checkRow(t, snap, spec.Request{Host: "example.com", Path: tc.Request}) != same {
				t.Errorf("the path table converts with a difference")
			}
		})
	}
}

// TestAnnotationTable: every row of the annotation behaviour tables
// answers alike, or the report says why not; the tally is logged.
func TestAnnotationTable(t *testing.T) {
	count := map[outcome]int{}
	for _, tc := range slices.Concat(spec.AnnotationTable, spec.CanaryTable) {
		t.Run(tc.Name, func(t *testing.T) {
			eps := map[string]spec.Endpoint{}
			for i, svc := range tc.Services() {
				eps[svc] = spec.Endpoint{IP: "10.0.0." + string(rune('1'+i)), Port: 8080}
			}
			snap := snapshotOf(t, tc.Manifests(annotations.DefaultPrefix, eps)+controllerConfig(tc.Config))
			count[checkRow(t, snap, tc.Request)]++
		})
	}
	t.Logf("%d rows answer alike, %d differ as the report says, %d are refused (their protection cannot be converted)",
		count[same], count[reported], count[refused])
}
