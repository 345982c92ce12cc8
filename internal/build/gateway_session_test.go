package build

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/model"
)

// TestGatewaySessionPersistence: a rule with sessionPersistence balances
// its backends with its sticky cookie under keys of its own, so that an
// Ingress on the same Service port (ingress-nginx's affinity annotations
// asking for another cookie) and a rule without persistence keep theirs,
// with no collision; the Service's retries are kept, and its own
// load-balance annotation gives way to the rule's cookie there only.
// Without the Lua balancer the route is told that nothing keeps its
// sessions.
func TestGatewaySessionPersistence(t *testing.T) {
	opts := testOpts
	opts.HTTPPort, opts.HTTPSPort = 8080, 8443
	snap := world(2)
	svcA := snap.Services[0]
	svcA.Annotations = map[string]string{AnnotationLoadBalance: "ewma", AnnotationRetries: "3"}
	ing := mkIngress("default", "ing", 0, rule("ing.example", path("/", "Prefix", "svc-b", 80)))
	ing.Annotations = map[string]string{"nginx.ingress.kubernetes.io/affinity": "cookie",
		"nginx.ingress.kubernetes.io/session-cookie-name": "ingress"}
	snap.Ingresses = append(snap.Ingresses, ing)
	snap.GatewayClasses = []*gwv1.GatewayClass{{ObjectMeta: metav1.ObjectMeta{Name: "causeway"}, Spec: gwv1.GatewayClassSpec{ControllerName: gateway.ControllerName}}}
	snap.Gateways = []*gwv1.Gateway{{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "gw"},
		Spec: gwv1.GatewaySpec{GatewayClassName: "causeway", Listeners: []gwv1.Listener{{Name: "http", Port: 9000, Protocol: gwv1.HTTPProtocolType}}}}}
	ref := func(name string, w int32) gwv1.HTTPBackendRef {
		return gwv1.HTTPBackendRef{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{
			Name: gwv1.ObjectName(name), Port: ptr.To(gwv1.PortNumber(80))}, Weight: &w}}
	}
	prefix := func(p string) []gwv1.HTTPRouteMatch {
		return []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Type: ptr.To(gwv1.PathMatchPathPrefix), Value: ptr.To(p)}}}
	}
	snap.HTTPRoutes = []*gwv1.HTTPRoute{{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "r"},
		Spec: gwv1.HTTPRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{Name: "gw"}}},
			Rules: []gwv1.HTTPRouteRule{
				{Matches: prefix("/s"), BackendRefs: []gwv1.HTTPBackendRef{ref("svc-a", 70), ref("svc-b", 30)},
					SessionPersistence: &gwv1.SessionPersistence{SessionName: ptr.To("sess"), AbsoluteTimeout: ptr.To(gwv1.Duration("1h")),
						CookieConfig: &gwv1.CookieConfig{LifetimeType: ptr.To(gwv1.PermanentCookieLifetimeType)}}},
				{Matches: prefix("/plain"), BackendRefs: []gwv1.HTTPBackendRef{ref("svc-b", 1)}},
			}}}}
	m, problems := Build(snap, opts)
	for _, p := range problems {
		if p.Object.Kind == "HTTPRoute" || p.Reason == model.ReasonCollision {
			t.Errorf("problem: %v", p)
		}
	}
	backends := map[string]*model.Backend{}
	for _, be := range m.Backends {
		backends[be.Key] = be
	}
	want := model.StickyCookie{Name: "sess", Path: "/s", MaxAge: 3600, SameSite: "Lax"}
	var sessionKeys []string
	for key, be := range backends {
		if !strings.Contains(key, "@session-") {
			continue
		}
		sessionKeys = append(sessionKeys, key)
		if be.Balance.Method != model.Sticky || be.Balance.Sticky == nil || *be.Balance.Sticky != want {
			t.Errorf("%s: balance %+v, want sticky %+v", key, be.Balance, want)
		}
		if len(be.Endpoints) != 1 {
			t.Errorf("%s: endpoints %v", key, be.Endpoints)
		}
		if strings.HasPrefix(key, "default/svc-a/80@") && (be.Balance.Retries == nil || *be.Balance.Retries != 3) {
			t.Errorf("%s: retries %v, want the Service's 3", key, be.Balance.Retries)
		}
	}
	if len(sessionKeys) != 2 {
		t.Errorf("session backends %v, want svc-a's and svc-b's", sessionKeys)
	}
	if be := backends["default/svc-b/80"]; be == nil || be.Balance.Method != model.Sticky || be.Balance.Sticky.Name != "ingress" {
		t.Errorf("the Ingress's backend of svc-b: %+v, want its own sticky cookie", be)
	}
	if be := backends["default/svc-a/80"]; be != nil {
		t.Errorf("svc-a's plain backend is not used: %+v", be)
	}
	// Without the Lua balancer nothing keeps a session: the route is
	// told once (PartiallyInvalid), not once per backend.
	opts.LuaAvailable = false
	_, problems = Build(snap, opts)
	n := 0
	for _, p := range problems {
		if p.Object.Kind == "HTTPRoute" && strings.Contains(p.Message, "sessionPersistence needs the Lua balancer") &&
			p.Condition != nil && p.Condition.Type == string(gwv1.RouteConditionPartiallyInvalid) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d Problems of sessionPersistence without Lua, want 1: %v", n, problems)
	}
}
