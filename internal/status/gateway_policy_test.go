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

// TestGatewayWriterBackendTLSPolicy: the leader writes a BackendTLSPolicy's
// ancestor entry of ours, keeping another controller's, once.
func TestGatewayWriterBackendTLSPolicy(t *testing.T) {
	gc, gw, r := gatewayObjects()
	p := &gwv1.BackendTLSPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "tls", UID: types.UID("uid-tls"), ResourceVersion: "1", Generation: 2},
		Spec: gwv1.BackendTLSPolicySpec{
			TargetRefs: []gwv1.LocalPolicyTargetReferenceWithSectionName{{LocalPolicyTargetReference: gwv1.LocalPolicyTargetReference{Kind: "Service", Name: "svc"}}},
			Validation: gwv1.BackendTLSPolicyValidation{Hostname: "abc.example.com", WellKnownCACertificates: new(gwv1.WellKnownCACertificatesSystem)}}}
	p.Status.Ancestors = []gwv1.PolicyAncestorStatus{{AncestorRef: gwv1.ParentReference{Name: "theirs"}, ControllerName: otherController,
		Conditions: []metav1.Condition{{Type: "Accepted", Status: "True", Reason: "Accepted", LastTransitionTime: metav1.Now()}}}}
	h := newGatewayHarness(t, gc.DeepCopy(), gw.DeepCopy(), r.DeepCopy(), p.DeepCopy())
	outcome := func(p *gwv1.BackendTLSPolicy) Outcome {
		o := gatewayOutcome(t, gc, gw, r)
		bt, _ := gateway.CheckBackendTLSPolicies([]*gwv1.BackendTLSPolicy{p}, nil)
		bt.For("web", "svc", "").Used(model.ObjectRef{Kind: "Gateway", Namespace: "web", Name: "gw"})
		bt.Finish()
		o.GatewayAPI.Resolution.BackendTLS = bt.Policies
		o.GatewayAPI.Snapshot.BackendTLSPolicies = []*gwv1.BackendTLSPolicy{p}
		return o
	}
	h.w.Observe(outcome(p))
	h.settle(t)
	if got := h.counts()["BackendTLSPolicy success"]; got != 1 {
		t.Fatalf("writes %v; want one of the BackendTLSPolicy", h.counts())
	}
	stored, err := h.client.GatewayV1().BackendTLSPolicies("web").Get(context.Background(), "tls", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	as := stored.Status.Ancestors
	if len(as) != 2 || as[0].ControllerName != otherController || as[1].ControllerName != gateway.ControllerName || as[1].AncestorRef.Name != "gw" {
		t.Fatalf("ancestors %+v: want theirs kept, ours for Gateway gw added", as)
	}
	if c := as[1].Conditions; len(c) != 2 || c[0].Type != "Accepted" || c[0].Status != "True" || c[0].ObservedGeneration != 2 {
		t.Fatalf("our conditions %+v", c)
	}
	// A snapshot that shows the write: nothing more.
	h.w.Observe(outcome(stored))
	h.settle(t)
	if got := h.counts()["BackendTLSPolicy success"]; got != 1 {
		t.Fatalf("writes %v after an unchanged sync; want still one", h.counts())
	}
}
