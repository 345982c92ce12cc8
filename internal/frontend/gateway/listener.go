package gateway

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

// Listener is one Gateway listener, checked.
type Listener struct {
	Name     gwv1.SectionName
	Port     gwv1.PortNumber
	Protocol gwv1.ProtocolType
	// TLSMode is Terminate or Passthrough for HTTPS and TLS listeners, ""
	// for the others.
	TLSMode gwv1.TLSModeType
	// Hostname is the listener's hostname; "" matches every host (and is
	// always "" for TCP and UDP, which have none).
	Hostname string
	// Kinds are the route kinds that may attach: those the protocol
	// supports, narrowed to allowedRoutes.kinds when set. It is
	// status.listeners[].supportedKinds.
	Kinds []gwv1.RouteGroupKind
	// Certificates are the Secrets of a terminating listener's
	// certificateRefs, all resolved (else ResolvedRefs is false).
	Certificates []model.ObjectName
	// ClientValidation is how an HTTPS listener checks client
	// certificates (spec.tls.frontend); nil when it does not.
	ClientValidation *ClientValidation

	// Accepted, ResolvedRefs and Conflicted are the listener's conditions.
	Accepted, ResolvedRefs, Conflicted bool
	// Set is the ListenerSet the listener is of, nil for the Gateway's
	// own listeners.
	Set *ListenerSet

	// home is the namespace of the Gateway or ListenerSet the listener
	// is of: allowedRoutes' Same.
	home string
	// namespaces is allowedRoutes.namespaces: where routes may attach from.
	from     gwv1.FromNamespaces
	selector labels.Selector

	// why the conditions are what they are, kept until they are written
	notAccepted, notResolved, conflict failure
}

// Ready reports whether the data plane serves the listener: accepted,
// with every reference resolved, and in conflict with no other.
func (l *Listener) Ready() bool { return l.Accepted && l.ResolvedRefs && !l.Conflicted }

// failure is a condition's reason and message when it is not healthy.
type failure struct{ reason, msg string }

func (f *failure) set(reason, msg string) {
	if f.reason == "" { // the first failure found is the one reported
		*f = failure{reason, msg}
	}
}

// routeKinds are the route kinds each protocol's listener admits.
var routeKinds = map[gwv1.ProtocolType][]string{
	gwv1.HTTPProtocolType:  {kindHTTPRoute, kindGRPCRoute},
	gwv1.HTTPSProtocolType: {kindHTTPRoute, kindGRPCRoute},
	gwv1.TLSProtocolType:   {kindTLSRoute},
	gwv1.TCPProtocolType:   {kindTCPRoute},
	gwv1.UDPProtocolType:   {kindUDPRoute},
}

// grantee is the object whose references a ReferenceGrant may allow: a
// Gateway, or a ListenerSet (for its listeners' certificates).
type grantee struct{ kind, namespace string }

// checkListener reads one listener of a Gateway or ListenerSet (from):
// everything but conflicts with the other listeners, which checkConflicts
// adds.
func checkListener(from grantee, spec gwv1.Listener, in Inputs) *Listener {
	l := &Listener{Name: spec.Name, Port: spec.Port, Protocol: spec.Protocol, Kinds: []gwv1.RouteGroupKind{}, home: from.namespace}
	supported, ok := routeKinds[spec.Protocol]
	if !ok {
		l.notAccepted.set(string(gwv1.ListenerReasonUnsupportedProtocol),
			fmt.Sprintf("protocol %q is not supported: HTTP, HTTPS, TLS, TCP and UDP are", model.Truncate(string(spec.Protocol))))
		return l
	}
	if spec.Port < 1 || spec.Port > 65535 {
		l.notAccepted.set(string(gwv1.ListenerReasonPortUnavailable), fmt.Sprintf("port %d is not in 1-65535", spec.Port))
	}
	l.checkHostname(spec)
	l.checkTLS(from, spec, in)
	l.checkKinds(spec, supported)
	l.checkNamespaces(spec)
	return l
}

func (l *Listener) checkHostname(spec gwv1.Listener) {
	if spec.Hostname == nil || *spec.Hostname == "" {
		return
	}
	h := string(*spec.Hostname)
	switch spec.Protocol {
	case gwv1.TCPProtocolType, gwv1.UDPProtocolType:
		l.notAccepted.set(string(gwv1.ListenerReasonUnsupportedValue),
			"hostname must not be specified for protocols TCP and UDP")
		return
	}
	if err := CheckHostname(h); err != nil {
		l.notAccepted.set(string(gwv1.ListenerReasonUnsupportedValue),
			fmt.Sprintf("hostname %q: %v", model.Truncate(h), err))
		return
	}
	l.Hostname = h
}

func (l *Listener) checkTLS(from grantee, spec gwv1.Listener, in Inputs) {
	tls := spec.TLS
	unsupported := func(msg string) { l.notAccepted.set(string(gwv1.ListenerReasonUnsupportedValue), msg) }
	switch spec.Protocol {
	case gwv1.HTTPProtocolType, gwv1.TCPProtocolType, gwv1.UDPProtocolType:
		if tls != nil {
			unsupported("tls must not be specified for protocols HTTP, TCP and UDP")
		}
		return
	case gwv1.HTTPSProtocolType:
		l.TLSMode = gwv1.TLSModeTerminate
		if tls != nil && tls.Mode != nil && *tls.Mode != gwv1.TLSModeTerminate {
			unsupported(fmt.Sprintf("tls mode must be Terminate for protocol HTTPS, not %q", model.Truncate(string(*tls.Mode))))
			return
		}
	case gwv1.TLSProtocolType:
		if tls == nil || tls.Mode == nil || *tls.Mode == "" {
			unsupported("tls mode must be set for protocol TLS")
			return
		}
		switch *tls.Mode {
		case gwv1.TLSModePassthrough:
			l.TLSMode = gwv1.TLSModePassthrough
			return // certificateRefs are ignored in this mode
		case gwv1.TLSModeTerminate:
			// TLSRouteModeTerminate: the data plane terminates TLS with
			// the listener's certificate and passes the decrypted
			// stream by server name.
			l.TLSMode = gwv1.TLSModeTerminate
		default:
			unsupported(fmt.Sprintf("tls mode %q is neither Terminate nor Passthrough", model.Truncate(string(*tls.Mode))))
			return
		}
	}
	if tls == nil || len(tls.CertificateRefs) == 0 {
		l.notResolved.set(string(gwv1.ListenerReasonInvalidCertificateRef), "a terminating listener needs tls.certificateRefs")
		return
	}
	for i, ref := range tls.CertificateRefs {
		name, f := resolveCertificate(from, ref, in)
		if f.reason != "" {
			l.notResolved.set(f.reason, fmt.Sprintf("tls.certificateRefs[%d]: %s", i, f.msg))
			continue
		}
		l.Certificates = append(l.Certificates, name)
	}
}

// resolveCertificate resolves a listener's certificateRef
// (ListenerTLSConfig.CertificateRefs): a core Secret, in the namespace of
// the Gateway or ListenerSet from, or in one whose ReferenceGrant lets it
// name the Secret, holding a usable key pair.
func resolveCertificate(from grantee, ref gwv1.SecretObjectReference, in Inputs) (model.ObjectName, failure) {
	g, k := "", kindSecret
	if ref.Group != nil {
		g = string(*ref.Group)
	}
	if ref.Kind != nil {
		k = string(*ref.Kind)
	}
	ns := from.namespace
	if ref.Namespace != nil && *ref.Namespace != "" {
		ns = string(*ref.Namespace)
	}
	name := model.ObjectName{Namespace: ns, Name: string(ref.Name)}
	if g != "" || k != kindSecret {
		return name, failure{string(gwv1.ListenerReasonInvalidCertificateRef),
			fmt.Sprintf("%s %s: only core Secrets hold certificates", model.Truncate(groupKind(g, k)), name)}
	}
	if !Granted(in.Grants, GrantFrom{Group: group, Kind: from.kind, Namespace: from.namespace},
		GrantTo{Kind: kindSecret, Namespace: ns, Name: name.Name}) {
		return name, failure{string(gwv1.ListenerReasonRefNotPermitted),
			fmt.Sprintf("Secret %s is in another namespace and no ReferenceGrant there lets %ss of namespace %s name it", name, from.kind, from.namespace)}
	}
	if in.Secret == nil {
		return name, failure{string(gwv1.ListenerReasonInvalidCertificateRef), fmt.Sprintf("Secret %s cannot be read", name)}
	}
	if err := in.Secret(ns, name.Name); err != nil {
		return name, failure{string(gwv1.ListenerReasonInvalidCertificateRef), fmt.Sprintf("Secret %s: %v", name, err)}
	}
	return name, failure{}
}

func groupKind(g, k string) string {
	if g == "" {
		return k
	}
	return k + "." + g
}

// checkKinds fills Kinds: the protocol's route kinds, or those of
// allowedRoutes.kinds the protocol supports. A kind it does not is
// InvalidRouteKinds (AllowedRoutes.Kinds, ListenerStatus.SupportedKinds:
// the valid ones are still listed).
func (l *Listener) checkKinds(spec gwv1.Listener, supported []string) {
	rgk := func(kind string) gwv1.RouteGroupKind {
		g := gwv1.Group(group)
		return gwv1.RouteGroupKind{Group: &g, Kind: gwv1.Kind(kind)}
	}
	if spec.AllowedRoutes == nil || len(spec.AllowedRoutes.Kinds) == 0 {
		for _, k := range supported {
			l.Kinds = append(l.Kinds, rgk(k))
		}
		return
	}
	var invalid []string
	for _, k := range spec.AllowedRoutes.Kinds {
		g := group
		if k.Group != nil {
			g = string(*k.Group)
		}
		if g != group || !slices.Contains(supported, string(k.Kind)) {
			invalid = append(invalid, model.Truncate(groupKind(g, string(k.Kind))))
			continue
		}
		if !slices.ContainsFunc(l.Kinds, func(have gwv1.RouteGroupKind) bool { return have.Kind == k.Kind }) {
			l.Kinds = append(l.Kinds, rgk(string(k.Kind)))
		}
	}
	if len(invalid) > 0 {
		l.notResolved.set(string(gwv1.ListenerReasonInvalidRouteKinds),
			fmt.Sprintf("route kinds %s are not supported on a %s listener (it takes %s)",
				strings.Join(invalid, ", "), spec.Protocol, strings.Join(supported, ", ")))
	}
}

// checkNamespaces reads allowedRoutes.namespaces: Same when unset.
func (l *Listener) checkNamespaces(spec gwv1.Listener) {
	l.from = gwv1.NamespacesFromSame
	if spec.AllowedRoutes == nil || spec.AllowedRoutes.Namespaces == nil {
		return
	}
	ns := spec.AllowedRoutes.Namespaces
	if ns.From != nil {
		l.from = *ns.From
	}
	switch l.from {
	case gwv1.NamespacesFromSame, gwv1.NamespacesFromAll, gwv1.NamespacesFromNone:
	case gwv1.NamespacesFromSelector:
		if ns.Selector == nil {
			l.from = gwv1.NamespacesFromNone
			l.notAccepted.set(string(gwv1.ListenerReasonUnsupportedValue),
				"allowedRoutes.namespaces.selector must be set when from is Selector")
			return
		}
		sel, err := metav1.LabelSelectorAsSelector(ns.Selector)
		if err != nil {
			l.from = gwv1.NamespacesFromNone
			l.notAccepted.set(string(gwv1.ListenerReasonUnsupportedValue),
				"allowedRoutes.namespaces.selector: "+model.Truncate(err.Error()))
			return
		}
		l.selector = sel
	default:
		l.notAccepted.set(string(gwv1.ListenerReasonUnsupportedValue),
			fmt.Sprintf("allowedRoutes.namespaces.from %q is not All, Selector or Same", model.Truncate(string(l.from))))
		l.from = gwv1.NamespacesFromNone
	}
}

// allowsNamespace reports whether routes of namespace ns may attach
// (RouteNamespaces.From): the namespace of the listener's Gateway or
// ListenerSet for Same, any for All, those whose labels the selector
// matches for Selector.
func (l *Listener) allowsNamespace(ns string, nsLabels map[string]map[string]string) bool {
	switch l.from {
	case gwv1.NamespacesFromAll:
		return true
	case gwv1.NamespacesFromSame:
		return ns == l.home
	case gwv1.NamespacesFromSelector:
		return l.selector.Matches(namespaceLabels(ns, nsLabels[ns]))
	}
	return false
}

// namespaceLabels are a namespace's labels with the one the API server
// sets on every namespace, kubernetes.io/metadata.name (immutable, equal
// to its name), present even when the Snapshot has no labels for it.
func namespaceLabels(ns string, lbls map[string]string) labels.Set {
	set := make(labels.Set, len(lbls)+1)
	maps.Copy(set, lbls)
	set[corev1.LabelMetadataName] = ns
	return set
}

// allowsKind reports whether routes of kind may attach.
func (l *Listener) allowsKind(kind string) bool {
	return slices.ContainsFunc(l.Kinds, func(k gwv1.RouteGroupKind) bool { return string(k.Kind) == kind })
}
