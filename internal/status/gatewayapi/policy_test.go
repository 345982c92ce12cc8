package gatewayapi

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

func backendTLSPolicy(name, svc, ca string, created int64) *gwv1.BackendTLSPolicy {
	return &gwv1.BackendTLSPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: name, Generation: 4, UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.Unix(created, 0)},
		Spec: gwv1.BackendTLSPolicySpec{
			TargetRefs: []gwv1.LocalPolicyTargetReferenceWithSectionName{{LocalPolicyTargetReference: gwv1.LocalPolicyTargetReference{
				Kind: "Service", Name: gwv1.ObjectName(svc)}}},
			Validation: gwv1.BackendTLSPolicyValidation{Hostname: "abc.example.com",
				CACertificateRefs: []gwv1.LocalObjectReference{{Kind: "ConfigMap", Name: gwv1.ObjectName(ca)}}},
		},
	}
}

// policyResolution checks the policies (ConfigMap "ca" exists, no other)
// and makes the Gateways of gws ancestors of those of Service svc.
func policyResolution(ps []*gwv1.BackendTLSPolicy, svc string, gws ...string) *gateway.Resolution {
	bt, _ := gateway.CheckBackendTLSPolicies(ps, func(ns, name string) (string, error) {
		if name == "ca" {
			return ns + "/" + name, nil
		}
		return "", errors.New("ConfigMap " + ns + "/" + name + " not found")
	})
	if p := bt.For("web", svc, ""); p != nil {
		for _, g := range gws {
			p.Used(model.ObjectRef{Kind: "Gateway", Namespace: "web", Name: g})
		}
	}
	bt.Finish()
	return &gateway.Resolution{BackendTLS: bt.Policies}
}

// ancestors renders a policy's status.ancestors as "controller:gateway
// conditions" entries.
func ancestors(as []gwv1.PolicyAncestorStatus) []string {
	var out []string
	for _, a := range as {
		out = append(out, string(a.ControllerName)+":"+string(a.AncestorRef.Name)+" "+conds(a.Conditions))
	}
	return out
}

// TestBackendTLSPolicyAncestors: one row per rule of a policy's status.
func TestBackendTLSPolicyAncestors(t *testing.T) {
	theirs := gwv1.PolicyAncestorStatus{AncestorRef: parent("other"), ControllerName: theirController,
		Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", LastTransitionTime: before}}}
	stale := gwv1.PolicyAncestorStatus{AncestorRef: gatewayRef(model.ObjectRef{Namespace: "web", Name: "gone"}), ControllerName: gateway.ControllerName,
		Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", LastTransitionTime: before}}}
	for _, tc := range []struct {
		name     string
		policies []*gwv1.BackendTLSPolicy
		gws      []string
		stored   []gwv1.PolicyAncestorStatus
		// want are the ancestors of the first policy, nil when nothing is
		// written; missing when it gets no Target.
		want    []string
		missing bool
	}{
		{name: "accepted, one entry per Gateway", policies: []*gwv1.BackendTLSPolicy{backendTLSPolicy("p", "svc", "ca", 1)}, gws: []string{"gw2", "gw"},
			want: []string{ours + ":gw " + accepted, ours + ":gw2 " + accepted}},
		{name: "an invalid CA ref", policies: []*gwv1.BackendTLSPolicy{backendTLSPolicy("p", "svc", "missing", 1)}, gws: []string{"gw"},
			want: []string{ours + ":gw Accepted=False/NoValidCACertificate,ResolvedRefs=False/InvalidCACertificateRef"}},
		{name: "conflicted: the newer, with the winner's ancestors",
			policies: []*gwv1.BackendTLSPolicy{backendTLSPolicy("p", "svc", "ca", 2), backendTLSPolicy("older", "svc", "ca", 1)}, gws: []string{"gw"},
			want: []string{ours + ":gw Accepted=False/Conflicted,ResolvedRefs=True/ResolvedRefs"}},
		{name: "other controllers' entries stay in place, a stale one of ours goes",
			policies: []*gwv1.BackendTLSPolicy{backendTLSPolicy("p", "svc", "ca", 1)}, gws: []string{"gw"},
			stored: []gwv1.PolicyAncestorStatus{stale, theirs},
			want:   []string{string(theirController) + ":other Accepted=True/Accepted", ours + ":gw " + accepted}},
		{name: "no route reaches it: ours are removed", policies: []*gwv1.BackendTLSPolicy{backendTLSPolicy("p", "svc", "ca", 1)},
			stored: []gwv1.PolicyAncestorStatus{theirs, stale}, want: []string{string(theirController) + ":other Accepted=True/Accepted"}},
		{name: "no route reaches it, nothing of ours: no Target", policies: []*gwv1.BackendTLSPolicy{backendTLSPolicy("p", "svc", "ca", 1)},
			stored: []gwv1.PolicyAncestorStatus{theirs}, missing: true},
		{name: "the API's bound: ours fill what others leave", policies: []*gwv1.BackendTLSPolicy{backendTLSPolicy("p", "svc", "ca", 1)},
			gws: []string{"gw", "gw2"}, stored: slices.Repeat([]gwv1.PolicyAncestorStatus{theirs}, 15),
			want: append(slices.Repeat([]string{string(theirController) + ":other Accepted=True/Accepted"}, 15), ours+":gw "+accepted)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.policies[0].Status.Ancestors = tc.stored
			in := Input{Snapshot: &source.Snapshot{BackendTLSPolicies: tc.policies},
				Resolution: policyResolution(tc.policies, "svc", tc.gws...)}
			obj, missing := applied(t, in, "BackendTLSPolicy/web/p")
			if missing != tc.missing {
				t.Fatalf("missing %v; want %v", missing, tc.missing)
			}
			if missing {
				return
			}
			if obj == nil {
				t.Fatalf("nothing to write; want %v", tc.want)
			}
			p := obj.(*gwv1.BackendTLSPolicy)
			if got := ancestors(p.Status.Ancestors); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("ancestors\n%v\nwant\n%v", got, tc.want)
			}
			for _, a := range p.Status.Ancestors {
				if a.ControllerName != gateway.ControllerName {
					continue
				}
				if ns := a.AncestorRef.Namespace; ns == nil || *ns != "web" || *a.AncestorRef.Kind != "Gateway" {
					t.Errorf("ancestorRef %+v; want Gateway web/%s", a.AncestorRef, a.AncestorRef.Name)
				}
				for _, c := range a.Conditions {
					if c.ObservedGeneration != 4 || c.LastTransitionTime != now {
						t.Errorf("%s: generation %d at %v; want 4 at %v", c.Type, c.ObservedGeneration, c.LastTransitionTime, now)
					}
				}
			}
			// Applied again, nothing changes.
			again := Want{Policy: true}
			for _, tg := range Plan(Input{Snapshot: &source.Snapshot{BackendTLSPolicies: []*gwv1.BackendTLSPolicy{p}}, Resolution: in.Resolution}, now) {
				if tg.Key == "BackendTLSPolicy/web/p" {
					again = tg.Want
				}
			}
			if again.Apply(p) != nil {
				t.Errorf("applied twice, the status changes again")
			}
		})
	}
}

// A condition whose status holds keeps its time.
func TestBackendTLSPolicyKeepsTimes(t *testing.T) {
	p := backendTLSPolicy("p", "svc", "ca", 1)
	res := policyResolution([]*gwv1.BackendTLSPolicy{p}, "svc", "gw")
	p.Status.Ancestors = []gwv1.PolicyAncestorStatus{{AncestorRef: gatewayRef(model.ObjectRef{Namespace: "web", Name: "gw"}),
		ControllerName: gateway.ControllerName, Conditions: []metav1.Condition{
			{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", LastTransitionTime: before, ObservedGeneration: 3}}}}
	obj, _ := applied(t, Input{Snapshot: &source.Snapshot{BackendTLSPolicies: []*gwv1.BackendTLSPolicy{p}}, Resolution: res}, "BackendTLSPolicy/web/p")
	if obj == nil {
		t.Fatal("nothing written; want the new generation")
	}
	got := obj.(*gwv1.BackendTLSPolicy).Status.Ancestors[0].Conditions
	if c := find(got, "Accepted"); c.LastTransitionTime != before || c.ObservedGeneration != 4 {
		t.Errorf("Accepted %+v; want its time kept, generation 4", c)
	}
	if c := find(got, "ResolvedRefs"); c.LastTransitionTime != now {
		t.Errorf("ResolvedRefs %+v; want now", c)
	}
}
