package gatewayapi

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

var (
	// built is when the Resolution was built; now when the plan is made;
	// before is a stored condition's time.
	built  = metav1.NewTime(time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC))
	now    = metav1.NewTime(time.Date(2026, 11, 28, 11, 0, 0, 0, time.UTC))
	before = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
)

const theirController gwv1.GatewayController = "example.net/gateway-controller"

func class(name string, controller gwv1.GatewayController) *gwv1.GatewayClass {
	return &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 2, UID: types.UID("uid-" + name)},
		Spec: gwv1.GatewayClassSpec{ControllerName: controller}}
}

func gw(name, className string) *gwv1.Gateway {
	return &gwv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: name, Generation: 3, UID: types.UID("uid-" + name)},
		Spec: gwv1.GatewaySpec{GatewayClassName: gwv1.ObjectName(className),
			Listeners: []gwv1.Listener{{Name: "http", Port: 80, Protocol: gwv1.HTTPProtocolType}}}}
}

func parent(name string) gwv1.ParentReference {
	return gwv1.ParentReference{Name: gwv1.ObjectName(name)}
}

func httpRoute(name string, parents ...string) *gwv1.HTTPRoute {
	r := &gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: name, Generation: 5, UID: types.UID("uid-" + name)}}
	for _, p := range parents {
		r.Spec.ParentRefs = append(r.Spec.ParentRefs, parent(p))
	}
	return r
}

// snapshot: GatewayClass causeway (ours) and theirs; Gateways web/gw and
// web/gw2 of ours, web/other of theirs; HTTPRoute web/route to all three,
// web/lone to theirs only.
func snapshot() *source.Snapshot {
	return &source.Snapshot{
		GatewayClasses: []*gwv1.GatewayClass{class("causeway", gateway.ControllerName), class("theirs", theirController)},
		Gateways:       []*gwv1.Gateway{gw("gw", "causeway"), gw("gw2", "causeway"), gw("other", "theirs")},
		HTTPRoutes:     []*gwv1.HTTPRoute{httpRoute("route", "gw", "gw2", "other"), httpRoute("lone", "other")},
	}
}

// resolve is the Resolution the build makes of snap.
func resolve(t *testing.T, snap *source.Snapshot) *gateway.Resolution {
	t.Helper()
	var routes []gateway.Route
	for _, r := range snap.HTTPRoutes {
		routes = append(routes, gateway.HTTPRouteOf(r))
	}
	res, problems := gateway.Resolve(snap.GatewayClasses, snap.Gateways, snap.ListenerSets, routes, []gwv1.FeatureName{"Gateway", "HTTPRoute"},
		func(string, string) []string { return []string{"192.0.2.1"} }, gateway.Inputs{Now: built})
	if len(problems) != 0 {
		t.Fatalf("problems resolving the fixture: %v", problems)
	}
	return res
}

// applied is what Plan and Apply make of key's object: its new status,
// or nil when nothing is to be written; missing reports no Target.
func applied(t *testing.T, in Input, key string) (obj Object, missing bool) {
	t.Helper()
	for _, tg := range Plan(in, now) {
		if tg.Key == key {
			return tg.Want.Apply(tg.Object), false
		}
	}
	return nil, true
}

func routeProblem(name string, cond, status, reason string, parentIndex int, msg string) model.Problem {
	return model.Problem{Object: model.ObjectRef{Kind: KindHTTPRoute, Namespace: "web", Name: name, UID: "uid-" + name},
		Reason: reason, Message: msg, Condition: &model.StatusCondition{Type: cond, Status: status, Reason: reason, Parent: parentIndex}}
}

// cond renders conditions as "Type=Status/Reason" for comparison.
func conds(cs []metav1.Condition) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Type+"="+string(c.Status)+"/"+c.Reason)
	}
	return strings.Join(out, ",")
}

func find(cs []metav1.Condition, typ string) metav1.Condition {
	for _, c := range cs {
		if c.Type == typ {
			return c
		}
	}
	return metav1.Condition{}
}

// parents renders a route's status.parents as "controller:gateway
// conditions" entries.
func parents(ps []gwv1.RouteParentStatus) []string {
	var out []string
	for _, p := range ps {
		out = append(out, string(p.ControllerName)+":"+string(p.ParentRef.Name)+" "+conds(p.Conditions))
	}
	return out
}

const (
	accepted = "Accepted=True/Accepted,ResolvedRefs=True/ResolvedRefs"
	ours     = string(gateway.ControllerName)
)

// TestGatewayClassStatus: one row per rule of a GatewayClass's status.
func TestGatewayClassStatus(t *testing.T) {
	for _, tc := range []struct {
		name   string
		class  string
		stored gwv1.GatewayClassStatus
		// want: "" means no write; missing: no Target at all.
		want, wantTime string
		missing        bool
		// sameMessage: the stored message is the Resolution's.
		sameMessage bool
	}{
		{name: "ours, new: Accepted and supportedFeatures at the class's generation, the Resolution's time",
			class: "causeway", want: "Accepted=True/Accepted", wantTime: built.String()},
		{name: "unchanged status: the stored time is kept, and nothing else differs: no write",
			class: "causeway", sameMessage: true, stored: gwv1.GatewayClassStatus{
				Conditions: []metav1.Condition{{Type: "Accepted", Status: "True", Reason: "Accepted", Message: "the class is served by causeway.io/gateway-controller",
					ObservedGeneration: 2, LastTransitionTime: before}},
				SupportedFeatures: []gwv1.SupportedFeature{{Name: "Gateway"}, {Name: "HTTPRoute"}}}},
		{name: "same status, another reason (the API server's Pending default is Unknown; here a stale reason): the time is kept",
			class: "causeway", stored: gwv1.GatewayClassStatus{Conditions: []metav1.Condition{
				{Type: "Accepted", Status: "True", Reason: "Stale", LastTransitionTime: before}}},
			want: "Accepted=True/Accepted", wantTime: before.String()},
		{name: "status changed (Unknown, the API's default): the Resolution's time",
			class: "causeway", stored: gwv1.GatewayClassStatus{Conditions: []metav1.Condition{
				{Type: "Accepted", Status: "Unknown", Reason: "Pending", LastTransitionTime: before}}},
			want: "Accepted=True/Accepted", wantTime: built.String()},
		{name: "another controller's class: not touched", class: "theirs", missing: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := snapshot()
			for _, c := range snap.GatewayClasses {
				c.Status = tc.stored
			}
			res := resolve(t, snap)
			if tc.sameMessage {
				snap.GatewayClasses[0].Status.Conditions[0].Message = res.Classes["causeway"].Status.Conditions[0].Message
			}
			obj, missing := applied(t, Input{Snapshot: snap, Resolution: res}, "GatewayClass/"+tc.class)
			if missing != tc.missing {
				t.Fatalf("missing = %v, want %v", missing, tc.missing)
			}
			if tc.want == "" {
				if obj != nil {
					t.Fatalf("a write of %+v, want none", obj.(*gwv1.GatewayClass).Status)
				}
				return
			}
			st := obj.(*gwv1.GatewayClass).Status
			if got := conds(st.Conditions); got != tc.want {
				t.Errorf("conditions %s, want %s", got, tc.want)
			}
			if c := st.Conditions[0]; c.ObservedGeneration != 2 || c.LastTransitionTime.String() != tc.wantTime {
				t.Errorf("observedGeneration %d, lastTransitionTime %s; want 2, %s", c.ObservedGeneration, c.LastTransitionTime, tc.wantTime)
			}
			if len(st.SupportedFeatures) != 2 {
				t.Errorf("supportedFeatures %v", st.SupportedFeatures)
			}
		})
	}
}

// TestGatewayStatus: one row per rule of a Gateway's status.
func TestGatewayStatus(t *testing.T) {
	for _, tc := range []struct {
		name   string
		gw     string
		stored gwv1.GatewayStatus
		check  func(t *testing.T, st gwv1.GatewayStatus)
		// noWrite: the status is the Resolution's already; missing: no
		// Target.
		noWrite, missing bool
		// prep changes the Resolution's status first.
		prep func(st *gwv1.GatewayStatus)
	}{
		{name: "attachedListenerSets is the Resolution's", gw: "gw",
			prep: func(st *gwv1.GatewayStatus) { n := int32(2); st.AttachedListenerSets = &n },
			check: func(t *testing.T, st gwv1.GatewayStatus) {
				if st.AttachedListenerSets == nil || *st.AttachedListenerSets != 2 {
					t.Errorf("attachedListenerSets %v, want 2", st.AttachedListenerSets)
				}
			}},
		{name: "ours: the Resolution's whole status, addresses, conditions and listeners with attachedRoutes", gw: "gw",
			check: func(t *testing.T, st gwv1.GatewayStatus) {
				if len(st.Addresses) != 1 || st.Addresses[0].Value != "192.0.2.1" {
					t.Errorf("addresses %v", st.Addresses)
				}
				if find(st.Conditions, "Accepted").Status != "True" || len(st.Listeners) != 1 || st.Listeners[0].AttachedRoutes != 1 {
					t.Errorf("status %+v", st)
				}
				if c := find(st.Conditions, "Accepted"); c.ObservedGeneration != 3 || !c.LastTransitionTime.Equal(&built) {
					t.Errorf("Accepted %+v: want generation 3 at the Resolution's time", c)
				}
			}},
		{name: "replaced whole: a stored condition and listener Causeway does not set are dropped", gw: "gw",
			stored: gwv1.GatewayStatus{Conditions: []metav1.Condition{{Type: "Foreign", Status: "True", Reason: "X", LastTransitionTime: before}},
				Listeners: []gwv1.ListenerStatus{{Name: "gone", Conditions: []metav1.Condition{{Type: "Accepted", Status: "True", Reason: "Accepted"}}}}},
			check: func(t *testing.T, st gwv1.GatewayStatus) {
				if find(st.Conditions, "Foreign").Type != "" || len(st.Listeners) != 1 || st.Listeners[0].Name != "http" {
					t.Errorf("status %+v", st)
				}
			}},
		{name: "a listener's unchanged condition keeps its time, by listener name", gw: "gw",
			stored: gwv1.GatewayStatus{Listeners: []gwv1.ListenerStatus{{Name: "http", Conditions: []metav1.Condition{
				{Type: "Accepted", Status: "True", Reason: "Accepted", LastTransitionTime: before},
				{Type: "ResolvedRefs", Status: "False", Reason: "InvalidCertificateRef", LastTransitionTime: before}}}}},
			check: func(t *testing.T, st gwv1.GatewayStatus) {
				l := st.Listeners[0].Conditions
				if c := find(l, "Accepted"); !c.LastTransitionTime.Equal(&before) {
					t.Errorf("listener Accepted %+v: the stored time is lost", c)
				}
				if c := find(l, "ResolvedRefs"); c.Status != "True" || !c.LastTransitionTime.Equal(&built) {
					t.Errorf("listener ResolvedRefs %+v: want True at the Resolution's time", c)
				}
			}},
		{name: "the status is the Resolution's already: no write", gw: "gw", noWrite: true},
		{name: "another controller's Gateway: not touched", gw: "other", missing: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := snapshot()
			res := resolve(t, snap)
			if tc.prep != nil {
				tc.prep(&res.Gateways["web/"+tc.gw].Status)
			}
			for _, g := range snap.Gateways {
				g.Status = tc.stored
				if tc.noWrite && g.Name == tc.gw {
					g.Status = *res.Gateways["web/"+tc.gw].Status.DeepCopy()
				}
			}
			obj, missing := applied(t, Input{Snapshot: snap, Resolution: res}, "Gateway/web/"+tc.gw)
			if missing != tc.missing {
				t.Fatalf("missing = %v, want %v", missing, tc.missing)
			}
			if tc.noWrite || tc.missing {
				if obj != nil {
					t.Fatalf("a write of %+v, want none", obj.(*gwv1.Gateway).Status)
				}
				return
			}
			tc.check(t, obj.(*gwv1.Gateway).Status)
		})
	}
}

// TestRouteParents: one row per rule of a route's status.parents.
func TestRouteParents(t *testing.T) {
	theirs := gwv1.RouteParentStatus{ParentRef: parent("other"), ControllerName: theirController,
		Conditions: []metav1.Condition{{Type: "Accepted", Status: "False", Reason: "Theirs", LastTransitionTime: before}}}
	ourStale := gwv1.RouteParentStatus{ParentRef: parent("removed"), ControllerName: gateway.ControllerName,
		Conditions: []metav1.Condition{{Type: "Accepted", Status: "True", Reason: "Accepted", LastTransitionTime: before}}}
	long := strings.Repeat("é", MaxMessage)
	for _, tc := range []struct {
		name         string
		route        string
		stored       []gwv1.RouteParentStatus
		problems     []model.Problem
		noResolution bool
		// lastWrite: the stored entries are what the last write made.
		lastWrite bool
		// want is parents() of the written status; nil: no write.
		want    []string
		missing bool
		check   func(t *testing.T, ps []gwv1.RouteParentStatus)
	}{
		{name: "an entry of ours per parentRef to a Gateway of ours, in order: Accepted from the attachment, ResolvedRefs True", route: "route",
			want: []string{ours + ":gw " + accepted, ours + ":gw2 " + accepted},
			check: func(t *testing.T, ps []gwv1.RouteParentStatus) {
				for _, c := range ps[0].Conditions {
					if c.ObservedGeneration != 5 {
						t.Errorf("%s observedGeneration %d, want the route's 5", c.Type, c.ObservedGeneration)
					}
				}
				if c := find(ps[0].Conditions, "ResolvedRefs"); !c.LastTransitionTime.Equal(&now) || c.Message != resolvedMessage {
					t.Errorf("ResolvedRefs %+v: a new condition without a time of its own is stamped now", c)
				}
			}},
		{name: "another controller's entry stays untouched, in place", route: "route",
			stored: []gwv1.RouteParentStatus{theirs},
			want:   []string{string(theirController) + ":other Accepted=False/Theirs", ours + ":gw " + accepted, ours + ":gw2 " + accepted}},
		{name: "an entry of ours for a parentRef no longer ours is removed", route: "route",
			stored: []gwv1.RouteParentStatus{ourStale, theirs},
			want:   []string{string(theirController) + ":other Accepted=False/Theirs", ours + ":gw " + accepted, ours + ":gw2 " + accepted}},
		{name: "a route attached to no Gateway of ours loses its entries of ours, keeps the others", route: "lone",
			stored: []gwv1.RouteParentStatus{ourStale, theirs},
			want:   []string{string(theirController) + ":other Accepted=False/Theirs"}},
		{name: "a route with nothing of ours is not touched", route: "lone", stored: []gwv1.RouteParentStatus{theirs}, missing: true},
		{name: "no Resolution (nothing of ours): entries of ours are removed all the same", route: "route", noResolution: true,
			stored: []gwv1.RouteParentStatus{ourStale, theirs},
			want:   []string{string(theirController) + ":other Accepted=False/Theirs"}},
		{name: "an unchanged entry keeps its place and its times: no write", route: "route", lastWrite: true},
		{name: "ResolvedRefs False with the Problem's reason and message, on every entry (Parent 0)", route: "route",
			problems: []model.Problem{routeProblem("route", "ResolvedRefs", "False", "BackendNotFound", 0, "backendRef web/missing: no such Service")},
			want: []string{ours + ":gw Accepted=True/Accepted,ResolvedRefs=False/BackendNotFound",
				ours + ":gw2 Accepted=True/Accepted,ResolvedRefs=False/BackendNotFound"},
			check: func(t *testing.T, ps []gwv1.RouteParentStatus) {
				if c := find(ps[1].Conditions, "ResolvedRefs"); c.Message != "backendRef web/missing: no such Service" {
					t.Errorf("message %q", c.Message)
				}
			}},
		{name: "several ResolvedRefs Problems: the first reason, every message", route: "route",
			problems: []model.Problem{routeProblem("route", "ResolvedRefs", "False", "RefNotPermitted", 0, "one"),
				routeProblem("route", "ResolvedRefs", "False", "BackendNotFound", 0, "two")},
			want: []string{ours + ":gw Accepted=True/Accepted,ResolvedRefs=False/RefNotPermitted",
				ours + ":gw2 Accepted=True/Accepted,ResolvedRefs=False/RefNotPermitted"},
			check: func(t *testing.T, ps []gwv1.RouteParentStatus) {
				if c := find(ps[0].Conditions, "ResolvedRefs"); c.Message != "one; two" {
					t.Errorf("message %q", c.Message)
				}
			}},
		{name: "a Problem on parentRefs[1] (Parent 2) is on that entry only", route: "route",
			problems: []model.Problem{routeProblem("route", "ResolvedRefs", "False", "InvalidKind", 2, "x")},
			want:     []string{ours + ":gw " + accepted, ours + ":gw2 Accepted=True/Accepted,ResolvedRefs=False/InvalidKind"}},
		{name: "PartiallyInvalid True when a Problem says so", route: "route",
			problems: []model.Problem{routeProblem("route", "PartiallyInvalid", "True", "UnsupportedValue", 0, "rule 2 left out")},
			want: []string{ours + ":gw " + accepted + ",PartiallyInvalid=True/UnsupportedValue",
				ours + ":gw2 " + accepted + ",PartiallyInvalid=True/UnsupportedValue"}},
		{name: "Accepted False from a Problem (no rule left) on an accepted attachment", route: "route",
			problems: []model.Problem{routeProblem("route", "Accepted", "False", "UnsupportedValue", 0, "no rule is left")},
			want: []string{ours + ":gw Accepted=False/UnsupportedValue,ResolvedRefs=True/ResolvedRefs",
				ours + ":gw2 Accepted=False/UnsupportedValue,ResolvedRefs=True/ResolvedRefs"},
			check: func(t *testing.T, ps []gwv1.RouteParentStatus) {
				if c := find(ps[0].Conditions, "Accepted"); c.Message != "no rule is left" || !c.LastTransitionTime.Equal(&now) {
					t.Errorf("Accepted %+v", c)
				}
			}},
		{name: "a Problem of an older namesake (another UID) is not this route's", route: "route",
			problems: []model.Problem{func() model.Problem {
				p := routeProblem("route", "ResolvedRefs", "False", "BackendNotFound", 0, "old")
				p.Object.UID = "uid-older"
				return p
			}()},
			want: []string{ours + ":gw " + accepted, ours + ":gw2 " + accepted}},
		{name: "a Problem without a condition, or of another kind, sets nothing", route: "route",
			problems: []model.Problem{{Object: model.ObjectRef{Kind: KindHTTPRoute, Namespace: "web", Name: "route"}, Reason: "Unsupported", Message: "x"},
				{Object: model.ObjectRef{Kind: KindGateway, Namespace: "web", Name: "route"}, Reason: "X",
					Condition: &model.StatusCondition{Type: "ResolvedRefs", Status: "False", Reason: "X"}}},
			want: []string{ours + ":gw " + accepted, ours + ":gw2 " + accepted}},
		{name: "messages are bounded, on a rune boundary", route: "route",
			problems: []model.Problem{routeProblem("route", "ResolvedRefs", "False", "BackendNotFound", 1, long)},
			want:     []string{ours + ":gw Accepted=True/Accepted,ResolvedRefs=False/BackendNotFound", ours + ":gw2 " + accepted},
			check: func(t *testing.T, ps []gwv1.RouteParentStatus) {
				m := find(ps[0].Conditions, "ResolvedRefs").Message
				if len(m) > MaxMessage || !strings.HasSuffix(m, "...") || !strings.HasPrefix(m, "é") || strings.ContainsRune(m, '\uFFFD') {
					t.Errorf("message of %d bytes: %q", len(m), m)
				}
			}},
		{name: "same status, reason changed: the stored time is kept; status changed: a new one", route: "route",
			stored: []gwv1.RouteParentStatus{{ParentRef: parent("gw"), ControllerName: gateway.ControllerName,
				Conditions: []metav1.Condition{{Type: "Accepted", Status: "True", Reason: "Old", LastTransitionTime: before},
					{Type: "ResolvedRefs", Status: "True", Reason: "ResolvedRefs", LastTransitionTime: before}}}},
			problems: []model.Problem{routeProblem("route", "ResolvedRefs", "False", "BackendNotFound", 0, "x")},
			want: []string{ours + ":gw Accepted=True/Accepted,ResolvedRefs=False/BackendNotFound",
				ours + ":gw2 Accepted=True/Accepted,ResolvedRefs=False/BackendNotFound"},
			check: func(t *testing.T, ps []gwv1.RouteParentStatus) {
				if c := find(ps[0].Conditions, "Accepted"); !c.LastTransitionTime.Equal(&before) {
					t.Errorf("Accepted %+v: the stored time is lost", c)
				}
				if c := find(ps[0].Conditions, "ResolvedRefs"); !c.LastTransitionTime.Equal(&now) {
					t.Errorf("ResolvedRefs %+v: want a new time", c)
				}
			}},
		{name: "a stored entry spelling the API's defaults (group, kind) is the same parent", route: "route",
			stored: []gwv1.RouteParentStatus{{ParentRef: gwv1.ParentReference{Group: ptr.To(gwv1.Group(gwv1.GroupName)), Kind: ptr.To(gwv1.Kind("Gateway")), Name: "gw2"},
				ControllerName: gateway.ControllerName}},
			want: []string{ours + ":gw2 " + accepted, ours + ":gw " + accepted}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := snapshot()
			res := resolve(t, snap)
			for _, r := range snap.HTTPRoutes {
				if r.Name == tc.route {
					r.Status.Parents = tc.stored
				}
			}
			if tc.lastWrite {
				var a gateway.Attached
				for _, x := range res.Routes {
					if x.Route.GetName() == "route" {
						a = x
					}
				}
				snap.HTTPRoutes[0].Status.Parents = routeEntries(a, nil, snap.HTTPRoutes[0], before)
			}
			in := Input{Snapshot: snap, Resolution: res, Problems: tc.problems}
			if tc.noResolution {
				in.Resolution = nil
			}
			obj, missing := applied(t, in, "HTTPRoute/web/"+tc.route)
			if missing != tc.missing {
				t.Fatalf("missing = %v, want %v", missing, tc.missing)
			}
			if tc.want == nil {
				if obj != nil {
					t.Fatalf("a write of %v, want none", parents(obj.(*gwv1.HTTPRoute).Status.Parents))
				}
				return
			}
			if obj == nil {
				t.Fatal("no write")
			}
			ps := obj.(*gwv1.HTTPRoute).Status.Parents
			if got := parents(ps); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("parents\n got %q\nwant %q", got, tc.want)
			}
			if tc.check != nil {
				tc.check(t, ps)
			}
		})
	}
}

// TestApplyLeavesTheSnapshot: Apply writes a copy; the snapshot's object
// is shared with every other reader and never changes.
func TestApplyLeavesTheSnapshot(t *testing.T) {
	snap := snapshot()
	res := resolve(t, snap)
	for _, tg := range Plan(Input{Snapshot: snap, Resolution: res}, now) {
		if tg.Want.Apply(tg.Object) == nil {
			t.Errorf("%s: no write for a fresh object", tg.Key)
		}
	}
	if len(snap.HTTPRoutes[0].Status.Parents) != 0 || len(snap.Gateways[0].Status.Conditions) != 0 || len(snap.GatewayClasses[0].Status.Conditions) != 0 {
		t.Fatal("Apply changed the snapshot's objects")
	}
}

// TestPlanEveryRouteKind: each route kind gets its entries, through its
// own status field.
func TestPlanEveryRouteKind(t *testing.T) {
	snap := snapshot()
	snap.HTTPRoutes = nil
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: "web", Name: name, Generation: 1, UID: types.UID(name)}
	}
	refs := []gwv1.ParentReference{parent("gw")}
	snap.GRPCRoutes = []*gwv1.GRPCRoute{{ObjectMeta: meta("grpc"), Spec: gwv1.GRPCRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: refs}}}}
	snap.TLSRoutes = []*gwv1.TLSRoute{{ObjectMeta: meta("tls"), Spec: gwv1.TLSRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: refs}}}}
	snap.TCPRoutes = []*gwv1.TCPRoute{{ObjectMeta: meta("tcp"), Spec: gwv1.TCPRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: refs}}}}
	snap.UDPRoutes = []*gwv1.UDPRoute{{ObjectMeta: meta("udp"), Spec: gwv1.UDPRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: refs}}}}
	// Hand-made attachments: which listener admits which kind is the
	// Resolution's business, not this package's.
	res := resolve(t, snap)
	res.Routes = nil
	for _, r := range []gateway.Route{gateway.GRPCRouteOf(snap.GRPCRoutes[0]), gateway.TLSRouteOf(snap.TLSRoutes[0]),
		gateway.TCPRouteOf(snap.TCPRoutes[0]), gateway.UDPRouteOf(snap.UDPRoutes[0])} {
		res.Routes = append(res.Routes, gateway.Attached{Route: r, Attachments: []gateway.Attachment{{Index: 0,
			Status: gwv1.RouteParentStatus{ParentRef: refs[0], ControllerName: gateway.ControllerName,
				Conditions: []metav1.Condition{{Type: "Accepted", Status: "False", Reason: "NotAllowedByListeners", LastTransitionTime: built}}}}}})
	}
	got := map[string]string{}
	for _, tg := range Plan(Input{Snapshot: snap, Resolution: res}, now) {
		obj := tg.Want.Apply(tg.Object)
		if rs := routeStatus(tg.Object); rs != nil && obj != nil {
			got[tg.Key] = strings.Join(parents(routeStatus(obj).Parents), ";")
		}
	}
	want := ours + ":gw Accepted=False/NotAllowedByListeners,ResolvedRefs=True/ResolvedRefs"
	for _, key := range []string{"GRPCRoute/web/grpc", "TLSRoute/web/tls", "TCPRoute/web/tcp", "UDPRoute/web/udp"} {
		if got[key] != want {
			t.Errorf("%s: %q, want %q", key, got[key], want)
		}
	}
}
