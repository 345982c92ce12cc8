package gateway

import (
	"cmp"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

// Class is a GatewayClass Causeway serves, checked.
type Class struct {
	Name string
	// Accepted is the Accepted condition's status: Gateways of a class
	// that is not accepted are not served.
	Accepted bool
	// Status is the GatewayClass status Causeway writes: the Accepted
	// condition and supportedFeatures.
	Status gwv1.GatewayClassStatus
}

// OurClass reports whether Causeway is the controller a GatewayClass
// names (GatewayClassSpec.ControllerName). Only the named controller
// writes its status.
func OurClass(gc *gwv1.GatewayClass) bool {
	return gc != nil && gc.Spec.ControllerName == ControllerName
}

// CheckClass returns the status of a GatewayClass Causeway serves, or nil
// when the class names another controller. Causeway takes no parameters:
// a class with spec.parametersRef is not accepted (InvalidParameters), as
// the spec says of a parametersRef to an unsupported kind. features are
// the Gateway API features the data plane supports; they become
// status.supportedFeatures (SupportedFeatures) of an accepted class.
//
// The spec caps supportedFeatures at 64 entries; more are a Problem and
// the first 64 in order are listed.
func CheckClass(gc *gwv1.GatewayClass, features []gwv1.FeatureName, now metav1.Time) (*Class, []model.Problem) {
	if !OurClass(gc) {
		return nil, nil
	}
	r := &reporter{obj: refOf(kindGatewayClass, gc), gen: gc.Generation, now: now}
	c := &Class{Name: gc.Name}
	typ := string(gwv1.GatewayClassConditionStatusAccepted)
	var accepted metav1.Condition
	if p := gc.Spec.ParametersRef; p != nil {
		accepted = r.bad(where{}, typ, metav1.ConditionFalse, string(gwv1.GatewayClassReasonInvalidParameters),
			fmt.Sprintf("Causeway takes no parameters: parametersRef %s/%s %s is not supported", p.Group, p.Kind, p.Name))
	} else {
		c.Accepted = true
		accepted = r.ok(typ, metav1.ConditionTrue, string(gwv1.GatewayClassReasonAccepted), "Causeway serves Gateways of this class")
		sf := SupportedFeatures(features)
		if len(sf) > maxSupportedFeatures {
			r.problems = append(r.problems, model.Problem{Object: r.obj, Reason: model.ReasonUnsupported,
				Message: fmt.Sprintf("status.supportedFeatures holds at most %d features: %d are left out", maxSupportedFeatures, len(sf)-maxSupportedFeatures)})
			sf = sf[:maxSupportedFeatures]
		}
		c.Status.SupportedFeatures = sf
	}
	c.Status.Conditions = []metav1.Condition{accepted}
	return c, r.problems
}

// maxSupportedFeatures is GatewayClassStatus.SupportedFeatures' MaxItems.
const maxSupportedFeatures = 64

// SupportedFeatures returns features as GatewayClass
// status.supportedFeatures wants them: each once, sorted in ascending
// alphabetical order by name ("It MUST be sorted in ascending
// alphabetical order by the Name key"), empty names left out.
func SupportedFeatures(features []gwv1.FeatureName) []gwv1.SupportedFeature {
	out := make([]gwv1.SupportedFeature, 0, len(features))
	for _, f := range features {
		if f != "" {
			out = append(out, gwv1.SupportedFeature{Name: f})
		}
	}
	slices.SortFunc(out, func(a, b gwv1.SupportedFeature) int { return cmp.Compare(a.Name, b.Name) })
	return slices.Compact(out)
}
