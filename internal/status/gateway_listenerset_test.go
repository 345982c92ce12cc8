package status

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/model"
)

// TestGatewayWriterListenerSet: the leader writes a ListenerSet's status
// as the Resolution has it, once, through the status subresource; once
// the Resolution no longer has it (its parent is not ours any more), its
// status is left as it is.
func TestGatewayWriterListenerSet(t *testing.T) {
	gc, gw, r := gatewayObjects()
	ls := &gwv1.ListenerSet{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "team", UID: types.UID("uid-team"), ResourceVersion: "1", Generation: 4},
		Spec: gwv1.ListenerSetSpec{ParentRef: gwv1.ParentGatewayReference{Name: "gw"},
			Listeners: []gwv1.ListenerEntry{{Name: "team", Port: 8080, Protocol: gwv1.HTTPProtocolType}}}}
	h := newGatewayHarness(t, gc.DeepCopy(), gw.DeepCopy(), r.DeepCopy(), ls.DeepCopy())
	outcome := func(ls *gwv1.ListenerSet, ours bool) Outcome {
		o := gatewayOutcome(t, gc, gw, r)
		o.GatewayAPI.Snapshot.ListenerSets = []*gwv1.ListenerSet{ls}
		if ours {
			accepted := metav1.Condition{Type: "Accepted", Status: "True", Reason: "Accepted", LastTransitionTime: metav1.Now()}
			o.GatewayAPI.Resolution.ListenerSets = map[string]*gateway.ListenerSet{"web/team": {
				Ref: model.ObjectRef{Kind: "ListenerSet", Namespace: "web", Name: "team", UID: "uid-team"}, Generation: 4, Accepted: true,
				Status: gwv1.ListenerSetStatus{Conditions: []metav1.Condition{accepted},
					Listeners: []gwv1.ListenerEntryStatus{{Name: "team", AttachedRoutes: 1, Conditions: []metav1.Condition{accepted}}}}}}
		}
		return o
	}
	h.w.Observe(outcome(ls, true))
	h.settle(t)
	if got := h.counts()["ListenerSet success"]; got != 1 {
		t.Fatalf("writes %v; want one of the ListenerSet", h.counts())
	}
	stored, err := h.client.GatewayV1().ListenerSets("web").Get(context.Background(), "team", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := stored.Status
	if len(st.Conditions) != 1 || st.Conditions[0].Type != "Accepted" || st.Conditions[0].ObservedGeneration != 4 ||
		len(st.Listeners) != 1 || st.Listeners[0].AttachedRoutes != 1 || st.Listeners[0].Conditions[0].ObservedGeneration != 4 {
		t.Fatalf("status %+v", st)
	}
	// A snapshot that shows the write: nothing more.
	h.w.Observe(outcome(stored, true))
	h.settle(t)
	// Its parent no longer ours: no entry in the Resolution, no write.
	h.w.Observe(outcome(stored, false))
	h.settle(t)
	if got := h.counts()["ListenerSet success"]; got != 1 {
		t.Fatalf("writes %v after an unchanged sync and one without it; want still one", h.counts())
	}
	if after, err := h.client.GatewayV1().ListenerSets("web").Get(context.Background(), "team", metav1.GetOptions{}); err != nil || len(after.Status.Conditions) != 1 {
		t.Fatalf("status %+v, %v: want it left as written", after.Status, err)
	}
}
