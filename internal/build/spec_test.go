package build

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/source"
	"github.com/causeway/causeway/internal/source/files"
	"github.com/causeway/causeway/test/spec"
)

// TestAnnotationTable checks every row of the annotation behaviour table
// on the Model alone: spec.Eval answers the row's request from the Model
// the row's objects build, and must give the row's response. The
// integration tier sends the same requests to nginx.
func TestAnnotationTable(t *testing.T) {
	ports := spec.Ports{HTTP: 8080, HTTPS: 8443}
	for _, tc := range slices.Concat(spec.AnnotationTable, spec.ConfigAccessTable, spec.AuthTable, spec.CanaryTable, spec.ExtAuthTable, spec.SnippetTable, spec.SnippetDefaultTable, spec.SnippetConfigTable, spec.ConfigDefaultsTable) {
		t.Run(tc.Name, func(t *testing.T) {
			eps := map[string]spec.Endpoint{}
			for i, svc := range tc.Services() {
				eps[svc] = spec.Endpoint{IP: "10.0.0." + string(rune('1'+i)), Port: 8080}
			}
			snap := snapshotOf(t, tc.Manifests(annotations.DefaultPrefix, eps)+controllerConfig(tc.Config))
			m, problems := Build(snap, testOpts)
			got := spec.Eval(m, tc.Request, ports)
			if d := tc.Want.Mismatch(got, ports); d != "" {
				t.Fatalf("%s", d)
			}
			var reasons []string
			for _, p := range problems {
				reasons = append(reasons, p.Reason)
			}
			if !slices.Equal(reasons, tc.Problems) {
				t.Fatalf("problems %v, want reasons %v", problems, tc.Problems)
			}
		})
	}
}

// snapshotOf parses manifests as the files source does.
func snapshotOf(t *testing.T, manifests string) *source.Snapshot {
	t.Helper()
	objs, problems := files.Parse([]byte(manifests), "spec")
	if len(problems) > 0 {
		t.Fatalf("manifests: %v", problems)
	}
	snap := &source.Snapshot{}
	for _, o := range objs {
		switch o := o.(type) {
		case *networkingv1.Ingress:
			snap.Ingresses = append(snap.Ingresses, o)
		case *corev1.Service:
			snap.Services = append(snap.Services, o)
		case *discoveryv1.EndpointSlice:
			snap.EndpointSlices = append(snap.EndpointSlices, o)
		case *corev1.ConfigMap:
			snap.ConfigMaps = append(snap.ConfigMaps, o)
		case *corev1.Secret:
			snap.Secrets = append(snap.Secrets, o)
		}
	}
	return snap
}

// controllerConfig is the manifest of testOpts's ConfigMap with data.
func controllerConfig(data map[string]string) string {
	if len(data) == 0 {
		return ""
	}
	ns, name, _ := strings.Cut(testOpts.ConfigMap, "/")
	return spec.ConfigMapYAML(ns, name, data)
}

// TestLimitTable checks every row of the limit behaviour table on the
// Model alone; the integration tier sends the same requests to nginx.
func TestLimitTable(t *testing.T) {
	for _, tc := range spec.LimitTable {
		t.Run(tc.Name, func(t *testing.T) {
			ac := tc.AsAnnotationCase()
			eps := map[string]spec.Endpoint{}
			for i, svc := range ac.Services() {
				eps[svc] = spec.Endpoint{IP: "10.0.0." + string(rune('1'+i)), Port: 8080}
			}
			snap := snapshotOf(t, ac.Manifests(annotations.DefaultPrefix, eps)+controllerConfig(tc.Config))
			m, problems := Build(snap, testOpts)
			if len(problems) > 0 {
				t.Fatalf("problems %v", problems)
			}
			served, refused := spec.EvalLimits(m, tc)
			if served != tc.Served || refused != tc.Refused {
				t.Fatalf("served %d, refused with %d; want %d and %d", served, refused, tc.Served, tc.Refused)
			}
		})
	}
}
