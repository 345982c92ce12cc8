package gateway

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

// ControllerName is the spec.controllerName of the GatewayClasses
// Causeway serves, and the controllerName of the route status entries it
// writes.
const ControllerName gwv1.GatewayController = "causeway.io/gateway-controller"

// The kinds this file's functions read, as model.ObjectRef and
// RouteGroupKind spell them.
const (
	kindGatewayClass = "GatewayClass"
	kindGateway      = "Gateway"
	kindHTTPRoute    = "HTTPRoute"
	kindGRPCRoute    = "GRPCRoute"
	kindTLSRoute     = "TLSRoute"
	kindTCPRoute     = "TCPRoute"
	kindUDPRoute     = "UDPRoute"
	kindSecret       = "Secret"
)

// group is Gateway API's group, the default of every group field naming
// one of its kinds.
const group = gwv1.GroupName

// reporter builds the conditions of one object at one generation and the
// Problem each False (or, for Conflicted, True) condition implies.
type reporter struct {
	obj      model.ObjectRef
	gen      int64
	now      metav1.Time
	problems []model.Problem
}

// where says which part of an object a condition is set on.
type where struct {
	listener string // a Gateway listener's name
	parent   int    // a route's 1-based parentRef position
}

func (w where) prefix() string {
	switch {
	case w.listener != "":
		return fmt.Sprintf("listener %q: ", w.listener)
	case w.parent > 0:
		return fmt.Sprintf("parentRefs[%d]: ", w.parent-1)
	}
	return ""
}

// ok is a condition in its healthy state: no Problem.
func (r *reporter) ok(typ string, status metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg,
		ObservedGeneration: r.gen, LastTransitionTime: r.now}
}

// bad is a condition that says something is wrong: it is also a Problem
// naming the object, the condition and its reason.
func (r *reporter) bad(at where, typ string, status metav1.ConditionStatus, reason, msg string) metav1.Condition {
	r.problems = append(r.problems, model.Problem{
		Object: r.obj, Reason: reason, Message: at.prefix() + typ + "=" + string(status) + ": " + msg,
		Condition: &model.StatusCondition{Type: typ, Status: string(status), Reason: reason,
			Listener: at.listener, Parent: at.parent},
	})
	return r.ok(typ, status, reason, msg)
}

// refOf names an object for Problems.
func refOf(kind string, m metav1.Object) model.ObjectRef {
	return model.ObjectRef{Kind: kind, Namespace: m.GetNamespace(), Name: m.GetName(), UID: string(m.GetUID())}
}
