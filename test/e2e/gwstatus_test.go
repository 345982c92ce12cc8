package e2e

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
	"github.com/causeway/causeway/internal/status"
	"github.com/causeway/causeway/internal/status/gatewayapi"
	"github.com/causeway/causeway/test/harness"
)

// theirController is another Gateway API implementation sharing the
// cluster.
const theirController = "example.net/gateway-controller"

// gatewayResolution is what the controller's build makes of snap's
// Gateway API objects: build.Run's Resolution once the build fills it,
// until then gateway.Resolve over the snapshot's objects, as the build
// will call it.
func gatewayResolution(t *testing.T, snap *source.Snapshot) (*gateway.Resolution, []model.Problem) {
	t.Helper()
	if r := build.Run(snap, build.Options{}); r.Gateway != nil {
		return r.Gateway, r.Problems
	}
	var routes []gateway.Route
	for _, r := range snap.HTTPRoutes {
		routes = append(routes, gateway.HTTPRouteOf(r))
	}
	return gateway.Resolve(snap.GatewayClasses, snap.Gateways, snap.ListenerSets, routes, []gwv1.FeatureName{"Gateway", "HTTPRoute"},
		func(string, string) []string { return []string{"192.0.2.10"} }, gateway.Inputs{Now: metav1.Now()})
}

// TestGatewayAPIStatus: the leader's status writer, running as deploy/'s
// ServiceAccount against the real API server and the real CRDs (so with
// their schema's validation and status subresource), gives a GatewayClass
// of ours Accepted=True, its Gateway a status with its listeners, and an
// HTTPRoute an entry of ours in status.parents beside another
// controller's entry, which it keeps, also when that controller rewrites
// its entry between our snapshot and our write (a conflict, read again
// and merged).
//
// The writer is fed here from the ServiceAccount's snapshot, as the
// controller feeds it from every sync (kubeReporter.onSync). Until the
// build fills build.Result.Gateway the running controller has no
// Resolution and writes nothing, so the test builds it the way the build
// will (gatewayResolution).
func TestGatewayAPIStatus(t *testing.T) {
	t.Parallel()
	kubectl := tool(t, "kubectl", "KUBECTL", "make kube-apiserver")
	installGatewayCRDs(t, kubectl)
	ns := newNamespace(t)
	ctx := t.Context()
	admin, err := gatewayclient.NewForConfig(e2e.env.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	manifest := fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: causeway-%[1]s}
spec: {controllerName: causeway.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: theirs-%[1]s}
spec: {controllerName: %[2]s}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: cafe, namespace: %[1]s}
spec:
  gatewayClassName: causeway-%[1]s
  listeners:
  - {name: http, port: 80, protocol: HTTP}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: theirs, namespace: %[1]s}
spec:
  gatewayClassName: theirs-%[1]s
  listeners:
  - {name: http, port: 80, protocol: HTTP}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: coffee, namespace: %[1]s}
spec:
  parentRefs: [{name: theirs}, {name: cafe}]
  rules:
  - backendRefs: [{name: coffee, port: 80}]
`, ns, theirController)
	createServiceObject(t, ns, "coffee") // the route's backend: ResolvedRefs=True
	eventually(t, waitFor, func() error {
		if out, ok := kubectlApply(t, kubectl, manifest); !ok {
			return fmt.Errorf("kubectl apply:\n%s", out)
		}
		return nil
	})
	// The other controller has written its entry of the route.
	setTheirEntry(t, admin, ns, "Accepted")

	logs := &harness.SyncBuffer{}
	s := serviceAccountSource(t, ns, logs)
	var snap *source.Snapshot
	eventually(t, waitFor, func() error {
		snap = s.Snapshot()
		if !hasClass(snap, "causeway-"+ns) || len(snap.Gateways) != 2 || len(snap.HTTPRoutes) != 1 || len(snap.HTTPRoutes[0].Status.Parents) != 1 {
			return fmt.Errorf("the snapshot lacks the objects (or the route's status)")
		}
		return nil
	})
	// Other tests' GatewayClasses of ours are theirs to check.
	snap.GatewayClasses = slices.DeleteFunc(slices.Clone(snap.GatewayClasses), func(gc *gwv1.GatewayClass) bool {
		return gc.Name != "causeway-"+ns && gc.Name != "theirs-"+ns
	})
	w, in, writeErrs := observeGatewayStatus(t, snap, logs)

	eventually(t, waitFor, func() error {
		gc, err := admin.GatewayV1().GatewayClasses().Get(ctx, "causeway-"+ns, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if c := findCondition(gc.Status.Conditions, "Accepted"); c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != gc.Generation {
			return fmt.Errorf("GatewayClass status %+v; write errors: %s", gc.Status, writeErrs.String())
		}
		theirs, err := admin.GatewayV1().GatewayClasses().Get(ctx, "theirs-"+ns, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if c := findCondition(theirs.Status.Conditions, "Accepted"); c == nil || c.Reason != "Pending" {
			return fmt.Errorf("the other controller's GatewayClass was written: %+v", theirs.Status)
		}
		g, err := admin.GatewayV1().Gateways(ns).Get(ctx, "cafe", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if c := findCondition(g.Status.Conditions, "Accepted"); c == nil || c.Status != metav1.ConditionTrue ||
			len(g.Status.Listeners) != 1 || g.Status.Listeners[0].AttachedRoutes != 1 {
			return fmt.Errorf("Gateway status %+v; write errors: %s", g.Status, writeErrs.String())
		}
		return routeParents(ctx, admin, ns, "Accepted", "Accepted=True/Accepted,ResolvedRefs=True/ResolvedRefs")
	})

	// The other controller rewrites its entry; our next write, decided on
	// the version we wrote, conflicts, reads the route again and keeps it.
	setTheirEntry(t, admin, ns, "Rewritten")
	in.Problems = append(in.Problems, model.Problem{
		Object: model.ObjectRef{Kind: "HTTPRoute", Namespace: ns, Name: "coffee", UID: string(snap.HTTPRoutes[0].UID)},
		Reason: "BackendNotFound", Message: "backendRef coffee:80: no such Service",
		Condition: &model.StatusCondition{Type: "ResolvedRefs", Status: "False", Reason: "BackendNotFound"}})
	w.Observe(status.Outcome{Applied: true, GatewayAPI: in})
	eventually(t, waitFor, func() error {
		return routeParents(ctx, admin, ns, "Rewritten", "Accepted=True/Accepted,ResolvedRefs=False/BackendNotFound")
	})
	if l := logs.String(); strings.Contains(l, "forbidden") {
		t.Fatalf("a request was refused under deploy/'s RBAC:\n%s", l)
	}
}

// setTheirEntry writes the other controller's entry of the route, its
// Accepted condition with reason.
func setTheirEntry(t *testing.T, admin gatewayclient.Interface, ns, reason string) {
	t.Helper()
	eventually(t, waitFor, func() error {
		r, err := admin.GatewayV1().HTTPRoutes(ns).Get(t.Context(), "coffee", metav1.GetOptions{})
		if err != nil {
			return err
		}
		entry := gwv1.RouteParentStatus{ParentRef: gwv1.ParentReference{Name: "theirs"}, ControllerName: theirController,
			Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: reason, Message: "theirs",
				ObservedGeneration: r.Generation, LastTransitionTime: metav1.Now()}}}
		replaced := false
		for i, p := range r.Status.Parents {
			if p.ControllerName == theirController {
				r.Status.Parents[i], replaced = entry, true
			}
		}
		if !replaced {
			r.Status.Parents = append(r.Status.Parents, entry)
		}
		_, err = admin.GatewayV1().HTTPRoutes(ns).UpdateStatus(t.Context(), r, metav1.UpdateOptions{})
		return err // a conflict with our writer is retried
	})
}

// routeParents checks the route's status.parents: the other controller's
// entry with reason theirReason, then ours for Gateway cafe with
// conditions ours ("Type=Status/Reason,...").
func routeParents(ctx context.Context, admin gatewayclient.Interface, ns, theirReason, ours string) error {
	r, err := admin.GatewayV1().HTTPRoutes(ns).Get(ctx, "coffee", metav1.GetOptions{})
	if err != nil {
		return err
	}
	var got []string
	for _, p := range r.Status.Parents {
		var cs []string
		for _, c := range p.Conditions {
			cs = append(cs, c.Type+"="+string(c.Status)+"/"+c.Reason)
		}
		got = append(got, fmt.Sprintf("%s %s %s", p.ControllerName, p.ParentRef.Name, strings.Join(cs, ",")))
	}
	want := []string{
		fmt.Sprintf("%s theirs Accepted=True/%s", theirController, theirReason),
		fmt.Sprintf("%s cafe %s", gateway.ControllerName, ours),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		return fmt.Errorf("route status.parents\n got %q\nwant %q", got, want)
	}
	return nil
}

func findCondition(cs []metav1.Condition, typ string) *metav1.Condition {
	for i := range cs {
		if cs[i].Type == typ {
			return &cs[i]
		}
	}
	return nil
}

// observeGatewayStatus runs the Gateway API status writer, as the
// leader, on the resolution of snap, and returns it, what it observed
// and its write errors.
func observeGatewayStatus(t *testing.T, snap *source.Snapshot, logs io.Writer) (*status.GatewayWriter, gatewayapi.Input, *harness.SyncBuffer) {
	t.Helper()
	res, problems := gatewayResolution(t, snap)
	cfg, err := clientcmd.BuildConfigFromFlags("", e2e.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	client, err := gatewayclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	writeErrs := &harness.SyncBuffer{}
	w := status.NewGatewayWriter(status.GatewayWriterOptions{Client: client, IsLeader: func() bool { return true },
		Log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		OnWrite: func(kind string, err error) {
			if err != nil {
				fmt.Fprintf(writeErrs, "%s: %v\n", kind, err)
			}
		}})
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(runCtx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	in := gatewayapi.Input{Snapshot: snap, Resolution: res, Problems: problems}
	w.Observe(status.Outcome{Applied: true, GatewayAPI: in})
	return w, in, writeErrs
}
