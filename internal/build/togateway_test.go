package build

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/migrate/togateway"
	"github.com/causeway/causeway/internal/source"
	"github.com/causeway/causeway/test/spec"
)

// The proof of `causeway migrate to-gateway`: a row's Ingresses and the
// Gateway API objects the converter makes of them build two models; the
// row's request must get the same answer from both (status, backend,
// URI, redirect, upstream Host and headers), or the converter's report
// must say, for that Ingress, that something was not converted as
// written. A difference nobody reported fails.

// equivalence is the outcome of one row.
type equivalence int

const (
	same equivalence = iota
	reported
	refused
)

// checkToGateway converts snap's Ingresses and compares the answers to
// req; it fails t on an unreported difference.
func checkToGateway(t *testing.T, snap *source.Snapshot, req spec.Request) equivalence {
	t.Helper()
	ports := spec.Ports{HTTP: 80, HTTPS: 443}
	opts := testOpts
	opts.HTTPPort, opts.HTTPSPort = 8080, 8443
	m1, _ := Build(snap, opts)
	want := spec.Eval(m1, req, ports)

	in := togateway.Input{Ingresses: snap.Ingresses, ConfigMaps: snap.ConfigMaps}
	for _, cm := range snap.ConfigMaps {
		if cm.Namespace+"/"+cm.Name == opts.ConfigMap {
			in.Controller = cm
		}
	}
	out, rep := togateway.Convert(in, togateway.Options{GatewayClass: "causeway", IngressClasses: []string{"causeway"}})
	var unconverted []string
	refusedAny := false
	for _, ir := range rep.Ingresses {
		refusedAny = refusedAny || ir.Refused || ir.Rejected != ""
		for _, f := range ir.Findings {
			if f.Outcome != togateway.Converted {
				unconverted = append(unconverted, f.Rule+" "+f.Input)
			}
		}
	}
	for _, f := range rep.ConfigMap {
		if f.Outcome != togateway.Converted {
			unconverted = append(unconverted, f.Rule+" "+f.Input)
		}
	}
	snap2 := *snap
	snap2.Ingresses = nil
	snap2.GatewayClasses = []*gwv1.GatewayClass{{ObjectMeta: metav1.ObjectMeta{Name: "causeway"},
		Spec: gwv1.GatewayClassSpec{ControllerName: gateway.ControllerName}}}
	snap2.Gateways, snap2.HTTPRoutes, snap2.GRPCRoutes = out.Gateways, out.HTTPRoutes, out.GRPCRoutes
	snap2.TLSRoutes, snap2.ReferenceGrants = out.TLSRoutes, out.ReferenceGrants
	m2, problems := Build(&snap2, opts)
	port := ports.HTTP
	if req.Scheme == "https" {
		port = ports.HTTPS
	}
	got := spec.Eval(spec.OnPort(m2, port), req, ports)
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

// TestToGatewayPathTable: every row of the path table answers alike.
func TestToGatewayPathTable(t *testing.T) {
	for _, tc := range spec.PathTable {
		t.Run(tc.Name, func(t *testing.T) {
			snap := world(len(tc.Paths))
			var paths []networkingv1.HTTPIngressPath
			for i, p := range tc.Paths {
				paths = append(paths, path(p.Path, p.Type, svcName(i), 80))
			}
			snap.Ingresses = append(snap.Ingresses, mkIngress("default", "web", 0, rule("example.com", paths...)))
			if checkToGateway(t, snap, spec.Request{Host: "example.com", Path: tc.Request}) != same {
				t.Errorf("the path table converts with a difference")
			}
		})
	}
}

// TestToGatewayAnnotationTable: every row of the annotation behaviour
// tables answers alike, or the report says why not; the tally is logged.
func TestToGatewayAnnotationTable(t *testing.T) {
	count := map[equivalence]int{}
	for _, tc := range slices.Concat(spec.AnnotationTable, spec.CanaryTable) {
		t.Run(tc.Name, func(t *testing.T) {
			eps := map[string]spec.Endpoint{}
			for i, svc := range tc.Services() {
				eps[svc] = spec.Endpoint{IP: "10.0.0." + string(rune('1'+i)), Port: 8080}
			}
			snap := snapshotOf(t, tc.Manifests(annotations.DefaultPrefix, eps)+controllerConfig(tc.Config))
			count[checkToGateway(t, snap, tc.Request)]++
		})
	}
	t.Log(fmt.Sprintf("%d rows answer alike, %d differ as the report says, %d are refused (their protection cannot be converted)",
		count[same], count[reported], count[refused]))
}
