package gateway

import (
	"fmt"
	"net/netip"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

// Inputs are what checking Gateways and attaching routes read besides the
// objects themselves. All of it comes from the Snapshot, or from the build
// that owns it.
type Inputs struct {
	// Now stamps the conditions' lastTransitionTime; the status writer
	// keeps the old time of a condition whose status did not change.
	Now metav1.Time
	// Grants are the Snapshot's ReferenceGrants.
	Grants []*gwv1.ReferenceGrant
	// Secret reports whether the Secret namespace/name exists and holds a
	// key pair the data plane can serve: nil, or why not. Nil Secret
	// resolves no certificate.
	Secret func(namespace, name string) error
	// CA validates a ConfigMap's ca.crt as a CA bundle and returns its
	// key, for client certificate validation (clientvalidation.go); nil
	// resolves none.
	CA CACheck
	// Namespaces are the labels of each namespace by name, for listeners
	// that admit routes from namespaces a label selector picks. Every
	// namespace also has kubernetes.io/metadata.name, whether listed or
	// not.
	Namespaces map[string]map[string]string
	// NoAddress says why a Gateway without addresses has none ("" is
	// the kube source's reason: its Service has none yet).
	NoAddress string
}

// Gateway is a Gateway Causeway serves, checked.
type Gateway struct {
	Ref        model.ObjectRef
	Generation int64
	// Accepted is the Accepted condition's status: a Gateway that is not
	// accepted is not served.
	Accepted bool
	// Listeners are spec.listeners in order, checked; Status.Listeners[i]
	// is Listeners[i]'s status.
	Listeners []*Listener
	// Status is what Causeway writes: addresses, conditions and each
	// listener's. SetAttachedRoutes fills the listeners' attachedRoutes.
	Status gwv1.GatewayStatus
	// BackendClientCert is spec.tls.backend.clientCertificateRef's
	// Secret, resolved: the certificate the data plane presents to the
	// backends it speaks TLS to for the Gateway's routes (a
	// BackendTLSPolicy's). Nil without one, or when it is not resolved.
	BackendClientCert *model.ObjectName
	// Sets are the ListenerSets attached to the Gateway (accepted), in
	// precedence order: their listeners are served beside the Gateway's
	// own, on its addresses.
	Sets []*ListenerSet

	// spec is the Gateway as written; addressed says whether it has an
	// address (its listeners' Programmed condition).
	spec      *gwv1.Gateway
	addressed bool
	// all is AllListeners', when the Gateway has ListenerSets.
	all []*Listener
}

// AllListeners are the Gateway's listeners and those of its attached
// ListenerSets, in precedence order. Route attachment asks for them once
// per route and listener: they are made once, when the ListenerSets are
// attached (checkListenerSets).
func (g *Gateway) AllListeners() []*Listener {
	if g.all != nil {
		return g.all
	}
	return g.Listeners
}

// Listener returns the listener named name, or nil.
func (g *Gateway) Listener(name gwv1.SectionName) *Listener {
	for _, l := range g.Listeners {
		if l.Name == name {
			return l
		}
	}
	return nil
}

// CheckGateway checks a Gateway of a class Causeway serves (nil class: the
// Gateway is not Causeway's, and the result is nil) and returns it with
// the status the spec asks for: the Gateway's Accepted and Programmed
// conditions and each listener's Accepted, Programmed, ResolvedRefs and
// Conflicted, at the Gateway's generation. addresses are the data plane's
// addresses for this Gateway (its Service's); none yet leaves it
// Programmed=False AddressNotAssigned.
func CheckGateway(gw *gwv1.Gateway, class *Class, addresses []string, in Inputs) (*Gateway, []model.Problem) {
	if gw == nil || class == nil {
		return nil, nil
	}
	r := &reporter{obj: refOf(kindGateway, gw), gen: gw.Generation, now: in.Now}
	g := &Gateway{Ref: r.obj, Generation: gw.Generation, spec: gw, addressed: len(addresses) > 0}
	for _, spec := range gw.Spec.Listeners {
		g.Listeners = append(g.Listeners, checkListener(grantee{kindGateway, gw.Namespace}, spec, in))
	}
	insecure := checkClientValidation(r, gw, g.Listeners, in)
	checkConflicts(g.Listeners)
	for _, l := range g.Listeners {
		l.Accepted = l.notAccepted.reason == "" && l.conflict.reason == ""
		l.ResolvedRefs = l.notResolved.reason == ""
	}
	ignored(r, gw)

	accepted := gatewayAccepted(r, gw, class, g.Listeners)
	g.Accepted = accepted.Status == metav1.ConditionTrue
	typ := string(gwv1.GatewayConditionProgrammed)
	var programmed metav1.Condition
	switch {
	case !g.Accepted:
		programmed = r.bad(where{}, typ, metav1.ConditionFalse, string(gwv1.GatewayReasonInvalid), "the Gateway is not accepted")
	case len(addresses) == 0:
		why := in.NoAddress
		if why == "" {
			why = "its Service has none"
		}
		programmed = r.bad(where{}, typ, metav1.ConditionFalse, string(gwv1.GatewayReasonAddressNotAssigned),
			"the Gateway has no address yet: "+why)
	default:
		programmed = r.ok(typ, metav1.ConditionTrue, string(gwv1.GatewayReasonProgrammed), "the data plane serves the Gateway")
	}
	g.Status.Conditions = []metav1.Condition{accepted, programmed}
	if c, ok := backendClientCert(r, gw, g, in); ok {
		g.Status.Conditions = append(g.Status.Conditions, c)
	}
	if insecure {
		g.Status.Conditions = append(g.Status.Conditions, r.ok(string(gwv1.GatewayConditionInsecureFrontendValidationMode), metav1.ConditionTrue,
			string(gwv1.GatewayReasonConfigurationChanged), "spec.tls.frontend lets clients without a valid certificate in (AllowInsecureFallback)"))
	}
	for _, a := range addresses {
		t := gwv1.HostnameAddressType
		if _, err := netip.ParseAddr(a); err == nil {
			t = gwv1.IPAddressType
		}
		g.Status.Addresses = append(g.Status.Addresses, gwv1.GatewayStatusAddress{Type: &t, Value: a})
	}
	for _, l := range g.Listeners {
		g.Status.Listeners = append(g.Status.Listeners, listenerStatus(r, l, g.Accepted, len(addresses) > 0))
	}
	return g, r.problems
}

// gatewayAccepted is the Gateway's Accepted condition: False for
// parameters, addresses or a class Causeway cannot honour; else True when
// every listener is accepted, True with ListenersNotValid when some are,
// False with ListenersNotValid when none is.
func gatewayAccepted(r *reporter, gw *gwv1.Gateway, class *Class, listeners []*Listener) metav1.Condition {
	typ := string(gwv1.GatewayConditionAccepted)
	bad := func(reason gwv1.GatewayConditionReason, msg string) metav1.Condition {
		return r.bad(where{}, typ, metav1.ConditionFalse, string(reason), msg)
	}
	if inf := gw.Spec.Infrastructure; inf != nil && inf.ParametersRef != nil {
		p := inf.ParametersRef
		return bad(gwv1.GatewayReasonInvalidParameters, fmt.Sprintf("Causeway takes no parameters: infrastructure.parametersRef %s %s is not supported",
			model.Truncate(groupKind(string(p.Group), string(p.Kind))), model.Truncate(p.Name)))
	}
	for i, a := range gw.Spec.Addresses {
		// An address without a value asks for one to be assigned: the
		// Gateway's Service assigns IP addresses.
		if a.Value != "" || (a.Type != nil && *a.Type != gwv1.IPAddressType) {
			return bad(gwv1.GatewayReasonUnsupportedAddress, fmt.Sprintf("spec.addresses[%d]: Causeway assigns each Gateway the addresses of its Service and cannot take a requested one", i))
		}
	}
	if !class.Accepted {
		return bad(gwv1.GatewayReasonInvalid, fmt.Sprintf("GatewayClass %s is not accepted", class.Name))
	}
	var valid, invalid []string
	for _, l := range listeners {
		if l.Accepted {
			valid = append(valid, string(l.Name))
		} else {
			invalid = append(invalid, model.Truncate(string(l.Name)))
		}
	}
	switch {
	case len(invalid) == 0:
		return r.ok(typ, metav1.ConditionTrue, string(gwv1.GatewayReasonAccepted), "the Gateway is accepted")
	case len(valid) == 0:
		return bad(gwv1.GatewayReasonListenersNotValid, "no listener is accepted: "+listNames(invalid))
	}
	// True, but with a reason that says some listeners are left out: a
	// Problem too, so that it is not silent.
	msg := "listeners not accepted: " + listNames(invalid)
	r.problems = append(r.problems, model.Problem{Object: r.obj, Reason: string(gwv1.GatewayReasonListenersNotValid), Message: msg})
	return r.ok(typ, metav1.ConditionTrue, string(gwv1.GatewayReasonListenersNotValid), msg)
}

// backendClientCert resolves spec.tls.backend.clientCertificateRef as a
// listener's certificateRef is resolved, into g.BackendClientCert, and
// returns the Gateway's ResolvedRefs condition, which only that reference
// sets (ok is false without one). An unresolved certificate is not
// presented: backends that ask for one refuse the connection.
func backendClientCert(r *reporter, gw *gwv1.Gateway, g *Gateway, in Inputs) (metav1.Condition, bool) {
	if gw.Spec.TLS == nil || gw.Spec.TLS.Backend == nil || gw.Spec.TLS.Backend.ClientCertificateRef == nil {
		return metav1.Condition{}, false
	}
	typ := string(gwv1.GatewayConditionResolvedRefs)
	name, f := resolveCertificate(grantee{kindGateway, gw.Namespace}, *gw.Spec.TLS.Backend.ClientCertificateRef, in)
	if f.reason == "" {
		g.BackendClientCert = &name
		return r.ok(typ, metav1.ConditionTrue, string(gwv1.GatewayReasonResolvedRefs), "every reference is resolved"), true
	}
	reason := gwv1.GatewayReasonInvalidClientCertificateRef
	if f.reason == string(gwv1.ListenerReasonRefNotPermitted) {
		reason = gwv1.GatewayReasonRefNotPermitted
	}
	return r.bad(where{}, typ, metav1.ConditionFalse, string(reason),
		"spec.tls.backend.clientCertificateRef: "+f.msg+"; backends are spoken to without a client certificate"), true
}

// listNames lists names for a message, at most ten of them.
func listNames(names []string) string {
	const most = 10
	if len(names) > most {
		return strings.Join(names[:most], ", ") + fmt.Sprintf(" and %d more", len(names)-most)
	}
	return strings.Join(names, ", ")
}

// ignored reports the Gateway fields Causeway does not use.
func ignored(r *reporter, gw *gwv1.Gateway) {
	note := func(msg string) {
		r.problems = append(r.problems, model.Problem{Object: r.obj, Reason: model.ReasonUnsupported, Message: msg})
	}
	if gw.Spec.DefaultScope != "" && gw.Spec.DefaultScope != gwv1.GatewayDefaultScopeNone {
		note("spec.defaultScope: default Gateways are not supported; routes attach only by parentRefs")
	}
	for _, l := range gw.Spec.Listeners {
		if l.TLS != nil && len(l.TLS.Options) > 0 {
			note(fmt.Sprintf("listener %q: tls.options are not supported and are ignored", model.Truncate(string(l.Name))))
		}
	}
}

// listenerStatus is a listener's status: its conditions and supported
// kinds (attachedRoutes comes later, from SetAttachedRoutes).
func listenerStatus(r *reporter, l *Listener, gatewayAccepted, addressed bool) gwv1.ListenerStatus {
	at := where{listener: string(l.Name)}
	var accepted, resolved, conflicted, programmed metav1.Condition
	switch {
	case l.notAccepted.reason != "":
		accepted = r.bad(at, string(gwv1.ListenerConditionAccepted), metav1.ConditionFalse, l.notAccepted.reason, l.notAccepted.msg)
	case l.conflict.reason != "":
		// A conflicted listener is not accepted: the spec lets none of
		// the indistinct listeners win.
		accepted = r.bad(at, string(gwv1.ListenerConditionAccepted), metav1.ConditionFalse, l.conflict.reason, l.conflict.msg)
	default:
		accepted = r.ok(string(gwv1.ListenerConditionAccepted), metav1.ConditionTrue, string(gwv1.ListenerReasonAccepted), "the listener is accepted")
	}
	if l.ResolvedRefs {
		resolved = r.ok(string(gwv1.ListenerConditionResolvedRefs), metav1.ConditionTrue, string(gwv1.ListenerReasonResolvedRefs), "every reference is resolved")
	} else {
		resolved = r.bad(at, string(gwv1.ListenerConditionResolvedRefs), metav1.ConditionFalse, l.notResolved.reason, l.notResolved.msg)
	}
	if l.Conflicted {
		conflicted = r.bad(at, string(gwv1.ListenerConditionConflicted), metav1.ConditionTrue, l.conflict.reason, l.conflict.msg)
	} else {
		conflicted = r.ok(string(gwv1.ListenerConditionConflicted), metav1.ConditionFalse, string(gwv1.ListenerReasonNoConflicts), "no conflict with another listener")
	}
	typ := string(gwv1.ListenerConditionProgrammed)
	switch {
	case l.Conflicted:
		programmed = r.bad(at, typ, metav1.ConditionFalse, l.conflict.reason, "the listener is conflicted")
	case !l.Ready():
		programmed = r.bad(at, typ, metav1.ConditionFalse, string(gwv1.ListenerReasonInvalid), "the listener is not accepted or has unresolved references")
	case !gatewayAccepted:
		programmed = r.bad(at, typ, metav1.ConditionFalse, string(gwv1.ListenerReasonInvalid), "the "+parentOf(l)+" is not accepted")
	case !addressed:
		programmed = r.bad(at, typ, metav1.ConditionFalse, string(gwv1.ListenerReasonPending), "the Gateway has no address yet")
	default:
		programmed = r.ok(typ, metav1.ConditionTrue, string(gwv1.ListenerReasonProgrammed), "the data plane serves the listener")
	}
	return gwv1.ListenerStatus{Name: l.Name, SupportedKinds: l.Kinds,
		Conditions: []metav1.Condition{accepted, programmed, resolved, conflicted}}
}
