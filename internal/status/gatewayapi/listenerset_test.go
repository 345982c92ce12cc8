package gatewayapi

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/model"
)

// listenerSet is web/name, a ListenerSet of Gateway web/gw at generation
// 7, with two listeners.
func listenerSet(name string) *gwv1.ListenerSet {
	return &gwv1.ListenerSet{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: name, Generation: 7, UID: types.UID("uid-" + name)},
		Spec: gwv1.ListenerSetSpec{ParentRef: gwv1.ParentGatewayReference{Name: "gw"}, Listeners: []gwv1.ListenerEntry{
			{Name: "a", Port: 8080, Protocol: gwv1.HTTPProtocolType}, {Name: "b", Port: 8081, Protocol: gwv1.HTTPProtocolType}}}}
}

// resolvedListenerSet is the Resolution's entry of web/name, as the
// front-end makes it (the status it says to write, stamped when built,
// generation unset: Plan sets it from the object).
func resolvedListenerSet(name, uid string) *gateway.ListenerSet {
	cond := func(typ, status, reason string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: metav1.ConditionStatus(status), Reason: reason, Message: typ, LastTransitionTime: built}
	}
	entry := func(name string, attached int32, conds ...metav1.Condition) gwv1.ListenerEntryStatus {
		return gwv1.ListenerEntryStatus{Name: gwv1.SectionName(name), AttachedRoutes: attached, Conditions: conds,
			SupportedKinds: []gwv1.RouteGroupKind{{Kind: "HTTPRoute"}}}
	}
	return &gateway.ListenerSet{Ref: model.ObjectRef{Kind: KindListenerSet, Namespace: "web", Name: name, UID: uid}, Generation: 7,
		Accepted: true, Status: gwv1.ListenerSetStatus{
			Conditions: []metav1.Condition{cond("Accepted", "True", "Accepted"), cond("Programmed", "True", "Programmed")},
			Listeners: []gwv1.ListenerEntryStatus{
				entry("a", 2, cond("Accepted", "True", "Accepted"), cond("ResolvedRefs", "True", "ResolvedRefs")),
				entry("b", 0, cond("Accepted", "False", "UnsupportedProtocol"), cond("ResolvedRefs", "True", "ResolvedRefs")),
			}}}
}

// TestListenerSetStatus: one row per rule of a ListenerSet's status.
func TestListenerSetStatus(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stored gwv1.ListenerSetStatus
		// resolved is the Resolution's entry; nil: none (its parent is
		// not a Gateway of ours, or no longer is). noResolution: no
		// Resolution at all.
		resolved     *gateway.ListenerSet
		noResolution bool
		// lastWrite: the stored status is what the last write made.
		lastWrite bool
		check     func(t *testing.T, st gwv1.ListenerSetStatus)
		// noWrite: the status is that already; missing: no Target.
		noWrite, missing bool
	}{
		{name: "ours: the Resolution's whole status, conditions and listeners at the object's generation", resolved: resolvedListenerSet("team", "uid-team"),
			check: func(t *testing.T, st gwv1.ListenerSetStatus) {
				if got := conds(st.Conditions); got != "Accepted=True/Accepted,Programmed=True/Programmed" {
					t.Errorf("conditions %s", got)
				}
				if len(st.Listeners) != 2 || st.Listeners[0].Name != "a" || st.Listeners[0].AttachedRoutes != 2 || len(st.Listeners[0].SupportedKinds) != 1 ||
					conds(st.Listeners[1].Conditions) != "Accepted=False/UnsupportedProtocol,ResolvedRefs=True/ResolvedRefs" {
					t.Errorf("listeners %+v", st.Listeners)
				}
				for _, c := range append(append(st.Conditions, st.Listeners[0].Conditions...), st.Listeners[1].Conditions...) {
					if c.ObservedGeneration != 7 || !c.LastTransitionTime.Equal(&built) {
						t.Errorf("%s %+v: want generation 7 at the Resolution's time", c.Type, c)
					}
				}
			}},
		{name: "a condition without a time of its own is stamped now", resolved: func() *gateway.ListenerSet {
			ls := resolvedListenerSet("team", "uid-team")
			ls.Status.Conditions[1].LastTransitionTime = metav1.Time{}
			return ls
		}(), check: func(t *testing.T, st gwv1.ListenerSetStatus) {
			if c := find(st.Conditions, "Programmed"); !c.LastTransitionTime.Equal(&now) {
				t.Errorf("Programmed %+v: want now", c)
			}
		}},
		{name: "replaced whole: a stored condition and listener Causeway does not set are dropped", resolved: resolvedListenerSet("team", "uid-team"),
			stored: gwv1.ListenerSetStatus{Conditions: []metav1.Condition{{Type: "Foreign", Status: "True", Reason: "X", LastTransitionTime: before}},
				Listeners: []gwv1.ListenerEntryStatus{{Name: "gone", Conditions: []metav1.Condition{{Type: "Accepted", Status: "True", Reason: "Accepted"}}}}},
			check: func(t *testing.T, st gwv1.ListenerSetStatus) {
				if find(st.Conditions, "Foreign").Type != "" || len(st.Listeners) != 2 || st.Listeners[0].Name != "a" || st.Listeners[1].Name != "b" {
					t.Errorf("status %+v", st)
				}
			}},
		{name: "unchanged conditions keep their time, the ListenerSet's and each listener's by name; changed ones take the new",
			resolved: resolvedListenerSet("team", "uid-team"),
			stored: gwv1.ListenerSetStatus{
				Conditions: []metav1.Condition{{Type: "Accepted", Status: "True", Reason: "Stale", LastTransitionTime: before},
					{Type: "Programmed", Status: "False", Reason: "Pending", LastTransitionTime: before}},
				Listeners: []gwv1.ListenerEntryStatus{
					{Name: "b", Conditions: []metav1.Condition{{Type: "Accepted", Status: "False", Reason: "UnsupportedProtocol", LastTransitionTime: before}}},
					{Name: "a", Conditions: []metav1.Condition{{Type: "Accepted", Status: "Unknown", Reason: "Pending", LastTransitionTime: before},
						{Type: "ResolvedRefs", Status: "True", Reason: "ResolvedRefs", LastTransitionTime: before}}}}},
			check: func(t *testing.T, st gwv1.ListenerSetStatus) {
				for _, c := range []struct {
					where string
					got   metav1.Condition
					want  metav1.Time
				}{
					{"Accepted", find(st.Conditions, "Accepted"), before},
					{"Programmed", find(st.Conditions, "Programmed"), built},
					{"a Accepted", find(st.Listeners[0].Conditions, "Accepted"), built},
					{"a ResolvedRefs", find(st.Listeners[0].Conditions, "ResolvedRefs"), before},
					{"b Accepted", find(st.Listeners[1].Conditions, "Accepted"), before},
					{"b ResolvedRefs", find(st.Listeners[1].Conditions, "ResolvedRefs"), built},
				} {
					if !c.got.LastTransitionTime.Equal(&c.want) {
						t.Errorf("%s %+v: want the time %s", c.where, c.got, c.want)
					}
				}
				if c := find(st.Conditions, "Accepted"); c.Reason != "Accepted" {
					t.Errorf("Accepted %+v: the reason is the Resolution's", c)
				}
			}},
		{name: "the status is the last write's already: no write", resolved: resolvedListenerSet("team", "uid-team"), lastWrite: true, noWrite: true},
		{name: "no entry in the Resolution (the parent is not, or no longer, a Gateway of ours): not touched",
			stored:  gwv1.ListenerSetStatus{Conditions: []metav1.Condition{{Type: "Accepted", Status: "True", Reason: "Accepted", LastTransitionTime: before}}},
			missing: true},
		{name: "the entry of an older namesake (another UID): not touched", resolved: resolvedListenerSet("team", "uid-older"), missing: true},
		{name: "no Resolution at all: not touched", resolved: resolvedListenerSet("team", "uid-team"), noResolution: true, missing: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := snapshot()
			res := resolve(t, snap)
			// After resolve: the Resolution's entry is the row's, made
			// by hand (what the front-end makes of a ListenerSet is its
			// own tests' business).
			ls := listenerSet("team")
			ls.Status = tc.stored
			snap.ListenerSets = append(snap.ListenerSets, ls)
			if tc.resolved != nil {
				res.ListenerSets = map[string]*gateway.ListenerSet{"web/team": tc.resolved}
			}
			in := Input{Snapshot: snap, Resolution: res}
			if tc.noResolution {
				in.Resolution = nil
			}
			if tc.lastWrite {
				for _, tg := range Plan(in, before) {
					if tg.Key == "ListenerSet/web/team" {
						ls.Status = tg.Want.Apply(tg.Object).(*gwv1.ListenerSet).Status
					}
				}
			}
			stored := ls.DeepCopy()
			obj, missing := applied(t, in, "ListenerSet/web/team")
			if missing != tc.missing {
				t.Fatalf("missing = %v, want %v", missing, tc.missing)
			}
			if tc.noWrite || tc.missing {
				if obj != nil {
					t.Fatalf("a write of %+v, want none", obj.(*gwv1.ListenerSet).Status)
				}
				return
			}
			if obj == nil {
				t.Fatal("no write")
			}
			tc.check(t, obj.(*gwv1.ListenerSet).Status)
			if !equality.Semantic.DeepEqual(ls.Status, stored.Status) {
				t.Error("Apply changed the snapshot's ListenerSet")
			}
		})
	}
}
