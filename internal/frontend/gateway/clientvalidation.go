package gateway

import (
	"fmt"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

// Client certificate validation (spec.tls.frontend): each HTTPS listener
// takes its port's perPort entry, else the default. The data plane asks
// every client of the port for a certificate and checks it against one CA
// bundle, a ConfigMap's ca.crt; in AllowValidOnly mode a request without
// a valid one gets no answer (the connection is closed), in
// AllowInsecureFallback it is served all the same. A listener whose
// validation cannot be honoured as written is not served (fail closed):
// ResolvedRefs False (InvalidCACertificateRef, InvalidCACertificateKind,
// RefNotPermitted), and Accepted False NoValidCACertificate when no
// reference resolves.

// ClientValidation is how an HTTPS listener checks client certificates.
type ClientValidation struct {
	// CA is the key of the CA bundle (gateway.CACheck's).
	CA string
	// InsecureFallback serves clients without a valid certificate too
	// (AllowInsecureFallback).
	InsecureFallback bool
}

// kindConfigMap is the one kind a CA reference may name.
const kindConfigMap = "ConfigMap"

// checkClientValidation sets the ClientValidation of gw's HTTPS listeners
// from spec.tls.frontend, or their failures, and reports whether any of
// its validations lets clients in without a valid certificate (the
// Gateway's InsecureFrontendValidationMode condition).
func checkClientValidation(r *reporter, gw *gwv1.Gateway, listeners []*Listener, in Inputs) (insecure bool) {
	if gw.Spec.TLS == nil || gw.Spec.TLS.Frontend == nil {
		return false
	}
	f := gw.Spec.TLS.Frontend
	insecure = f.Default.Validation != nil && f.Default.Validation.Mode == gwv1.AllowInsecureFallback
	for _, p := range f.PerPort {
		insecure = insecure || (p.TLS.Validation != nil && p.TLS.Validation.Mode == gwv1.AllowInsecureFallback)
	}
	used := map[gwv1.PortNumber]bool{}
	for _, l := range listeners {
		if port, ok := setClientValidation(gw, l, in); ok {
			used[port] = true
		}
	}
	for i, p := range f.PerPort {
		if !used[p.Port] {
			r.problems = append(r.problems, model.Problem{Object: r.obj, Reason: model.ReasonIgnored,
				Message: fmt.Sprintf("spec.tls.frontend.perPort[%d]: port %d has no HTTPS listener; the entry is ignored", i, p.Port)})
		}
	}
	return insecure
}

// setClientValidation sets the ClientValidation of l, an HTTPS listener
// of gw or of a ListenerSet of gw (whose listeners share its ports'
// handshakes), from gw's spec.tls.frontend; ok reports a perPort entry
// used, for port.
func setClientValidation(gw *gwv1.Gateway, l *Listener, in Inputs) (port gwv1.PortNumber, ok bool) {
	if gw.Spec.TLS == nil || gw.Spec.TLS.Frontend == nil || l.Protocol != gwv1.HTTPSProtocolType {
		return 0, false
	}
	f := gw.Spec.TLS.Frontend
	v, field := f.Default.Validation, "spec.tls.frontend.default.validation"
	for i, p := range f.PerPort {
		if p.Port == l.Port {
			v, field = p.TLS.Validation, fmt.Sprintf("spec.tls.frontend.perPort[%d].tls.validation", i)
			port, ok = p.Port, true
			break
		}
	}
	if v != nil {
		l.ClientValidation = resolveValidation(gw, l, v, field, in)
	}
	return port, ok
}

// resolveValidation resolves one listener's validation: its CA
// reference, which must be a core ConfigMap, in the Gateway's namespace
// or allowed by a ReferenceGrant, holding a CA bundle. Failures are the
// listener's.
func resolveValidation(gw *gwv1.Gateway, l *Listener, v *gwv1.FrontendTLSValidation, field string, in Inputs) *ClientValidation {
	var keys []string
	for i, ref := range v.CACertificateRefs {
		at := fmt.Sprintf("%s.caCertificateRefs[%d]", field, i)
		ns := gw.Namespace
		if ref.Namespace != nil && *ref.Namespace != "" {
			ns = string(*ref.Namespace)
		}
		name := model.ObjectName{Namespace: ns, Name: string(ref.Name)}
		switch {
		case ref.Group != "" || ref.Kind != kindConfigMap:
			l.notResolved.set(string(gwv1.ListenerReasonInvalidCACertificateKind),
				fmt.Sprintf("%s: %s %s: only core ConfigMaps (key ca.crt) hold CA certificates", at, model.Truncate(groupKind(string(ref.Group), string(ref.Kind))), name))
			continue
		case !Granted(in.Grants, GrantFrom{Group: group, Kind: kindGateway, Namespace: gw.Namespace},
			GrantTo{Kind: kindConfigMap, Namespace: ns, Name: name.Name}):
			l.notResolved.set(string(gwv1.ListenerReasonRefNotPermitted),
				fmt.Sprintf("%s: ConfigMap %s is in another namespace and no ReferenceGrant there lets Gateways of namespace %s name it", at, name, gw.Namespace))
			continue
		case in.CA == nil:
			l.notResolved.set(string(gwv1.ListenerReasonInvalidCACertificateRef), fmt.Sprintf("%s: ConfigMap %s cannot be read", at, name))
			continue
		}
		key, err := in.CA(ns, name.Name)
		if err != nil {
			l.notResolved.set(string(gwv1.ListenerReasonInvalidCACertificateRef), fmt.Sprintf("%s: %v", at, err))
			continue
		}
		keys = append(keys, key)
	}
	if len(keys) == 0 {
		l.notAccepted.set(string(gwv1.ListenerReasonNoValidCACertificate),
			field+": no CA certificate reference resolves: the listener is not served without client certificate validation")
		return nil
	}
	if len(keys) > 1 {
		l.notResolved.set(string(gwv1.ListenerReasonInvalidCACertificateRef),
			field+": Causeway validates client certificates against one CA reference; put the CAs in one ConfigMap's ca.crt")
		return nil
	}
	return &ClientValidation{CA: keys[0], InsecureFallback: v.Mode == gwv1.AllowInsecureFallback}
}
