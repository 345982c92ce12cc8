package gateway

import (
	"cmp"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func TestCheckClass(t *testing.T) {
	features := []gwv1.FeatureName{"HTTPRoute", "Gateway", "ReferenceGrant", "Gateway", ""}
	for _, tc := range []struct {
		name      string
		class     gwv1.GatewayClassSpec
		ours      bool
		status    metav1.ConditionStatus
		reason    string
		features  []gwv1.FeatureName
		nProblems int
	}{
		{name: "GatewayClassSpec.ControllerName: another controller's class gets no status",
			class: gwv1.GatewayClassSpec{ControllerName: "example.net/gateway-controller"}},
		{name: "GatewayClassConditionStatusAccepted: ours is Accepted",
			class: gwv1.GatewayClassSpec{ControllerName: ControllerName}, ours: true,
			status: metav1.ConditionTrue, reason: "Accepted", features: []gwv1.FeatureName{"Gateway", "HTTPRoute", "ReferenceGrant"}},
		{name: "GatewayClassReasonInvalidParameters: we take no parameters",
			class: gwv1.GatewayClassSpec{ControllerName: ControllerName, ParametersRef: &gwv1.ParametersReference{Kind: "ConfigMap", Name: "p"}},
			ours:  true, status: metav1.ConditionFalse, reason: "InvalidParameters", nProblems: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gc := &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "c", Generation: 3}, Spec: tc.class}
			c, problems := CheckClass(gc, features, metav1.Now())
			if (c != nil) != tc.ours {
				t.Fatalf("ours = %v, want %v", c != nil, tc.ours)
			}
			if c == nil {
				return
			}
			cond := c.Status.Conditions[0]
			if cond.Type != "Accepted" || cond.Status != tc.status || cond.Reason != tc.reason || cond.ObservedGeneration != 3 {
				t.Errorf("condition = %+v", cond)
			}
			if c.Accepted != (tc.status == metav1.ConditionTrue) {
				t.Errorf("Accepted = %v", c.Accepted)
			}
			var got []gwv1.FeatureName
			for _, f := range c.Status.SupportedFeatures {
				got = append(got, f.Name)
			}
			if !slices.Equal(got, tc.features) {
				t.Errorf("supportedFeatures = %v, want %v", got, tc.features)
			}
			if len(problems) != tc.nProblems {
				t.Errorf("problems = %v", problems)
			}
			for _, p := range problems {
				if p.Condition == nil || p.Condition.Reason != p.Reason || p.Object.Kind != "GatewayClass" || p.Object.Name != "c" {
					t.Errorf("problem %+v does not carry its condition", p)
				}
			}
		})
	}
}

// TestSupportedFeaturesCap: GatewayClassStatus.SupportedFeatures MUST be
// sorted ascending and holds at most 64 (MaxItems); more are a Problem.
func TestSupportedFeaturesCap(t *testing.T) {
	var many []gwv1.FeatureName
	for i := 99; i >= 0; i-- {
		many = append(many, gwv1.FeatureName("F"+string(rune('A'+i/10))+string(rune('A'+i%10))))
	}
	gc := &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: gwv1.GatewayClassSpec{ControllerName: ControllerName}}
	c, problems := CheckClass(gc, many, metav1.Now())
	if len(c.Status.SupportedFeatures) != 64 || len(problems) != 1 {
		t.Fatalf("%d features, problems %v", len(c.Status.SupportedFeatures), problems)
	}
	if !slices.IsSortedFunc(c.Status.SupportedFeatures, func(a, b gwv1.SupportedFeature) int {
		return cmp.Compare(a.Name, b.Name)
	}) || c.Status.SupportedFeatures[0].Name != "FAA" {
		t.Errorf("not sorted from the first: %v", c.Status.SupportedFeatures[:3])
	}
}
