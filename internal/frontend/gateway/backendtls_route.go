package gateway

import (
	"fmt"
	"reflect"

	"github.com/causeway/causeway/internal/model"
)

// How BackendTLSPolicies reach routes: each backend target carries the
// policy that applies to it (backendTarget), and a location speaks TLS to
// its backends when they ask for it (locationTLS). The model has one
// backend protocol and TLS client per location, so the backends of one
// location must agree: one that does not answers 503 for its share,
// with a Problem on its route.

// failClosedStatus is what the share of a backend whose BackendTLSPolicy
// is not honoured answers.
const failClosedStatus = 503

// backendTarget is the target of backend b with weight w: b itself,
// carrying the BackendTLSPolicy that applies to it, or a 503 answer when
// that policy is not honoured.
func (t *routeTranslator) backendTarget(field string, b Backend, w int) Target {
	var p *BackendTLSPolicy
	if t.env.BackendTLS != nil {
		p = t.env.BackendTLS(b)
	}
	if p != nil && p.TLS == nil {
		t.problems = append(t.problems, model.Problem{Object: t.ref, Reason: model.ReasonInvalid,
			Message: fmt.Sprintf("%s: Service %s/%s port %d is to be spoken to with TLS as %s says, which is not accepted (%s); "+
				"its share answers %d", field, b.Namespace, b.Service, b.Port, p.Ref, p.Accepted.Message, failClosedStatus)})
		return Target{Status: failClosedStatus, Weight: w, TLS: p}
	}
	return Target{Backend: &b, Weight: w, TLS: p}
}

// locationTLS is the TLS of one location's backends: the first backend
// decides, with or without TLS; a backend that asks otherwise does not
// get the location's requests.
type locationTLS struct {
	decided bool
	tls     *model.UpstreamTLS
	first   Backend
}

// admit reports whether target t (a backend) can share the location, or
// why not.
func (lt *locationTLS) admit(t Target) string {
	var want *model.UpstreamTLS
	if t.TLS != nil {
		want = t.TLS.TLS
	}
	if !lt.decided {
		lt.decided, lt.tls, lt.first = true, want, *t.Backend
		return ""
	}
	if reflect.DeepEqual(want, lt.tls) {
		return ""
	}
	how := func(u *model.UpstreamTLS) string {
		if u == nil {
			return "without TLS"
		}
		switch {
		case u.CAConfigMap != "":
			return "with TLS to " + u.Name + " verified by ConfigMap " + u.CAConfigMap
		case u.SystemCAs:
			return "with TLS to " + u.Name + " verified by the system's CAs"
		}
		return "with TLS to " + u.Name
	}
	return fmt.Sprintf("Service %s/%s port %d is spoken to %s and %s/%s port %d, which the location also proxies to, %s: "+
		"one location speaks to its backends one way; its share answers %d",
		t.Backend.Namespace, t.Backend.Service, t.Backend.Port, how(want), lt.first.Namespace, lt.first.Service, lt.first.Port,
		how(lt.tls), failClosedStatus)
}

// policy is the location's policy pol with its backends' TLS: HTTPS (or
// GRPCS) with the policy's client. pol is not changed.
func (lt *locationTLS) policy(pol *model.Policy) *model.Policy {
	if lt.tls == nil {
		return pol
	}
	out := &model.Policy{}
	if pol != nil {
		c := *pol
		out = &c
	}
	if out.Protocol.GRPC() {
		out.Protocol = model.ProtocolGRPCS
	} else {
		out.Protocol = model.ProtocolHTTPS
	}
	tls := *lt.tls
	out.UpstreamTLS = &tls
	return out
}
