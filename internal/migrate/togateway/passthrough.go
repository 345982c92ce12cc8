package togateway

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// tlsListenerName is the name of a passed-through host's listener.
func tlsListenerName(host string) string {
	return "tls-" + strings.ReplaceAll(host, "*", "wildcard")
}

// sslPassthrough claims the hosts of an ssl-passthrough Ingress and
// writes their TLSRoutes.
func (c *converter) sslPassthrough(w *ingressWork) {
	key := c.key("ssl-passthrough")
	if !w.tr.Annotations.SSLPassthrough {
		switch v, set := w.ing.Annotations[key]; {
		case !set:
		case isFalse(v):
			w.find(ruleNoEffect, key, v, "")
		default:
			c.invalid(w, "ssl-passthrough")
		}
		return
	}
	me := w.ing.Namespace + "/" + w.ing.Name
	for i, r := range w.tr.Rules {
		field := fmt.Sprintf("spec.rules[%d]", i)
		b := w.ing.Spec.DefaultBackend
		for _, p := range r.Paths {
			if p.Written == "/" {
				b = p.Backend
				break
			}
		}
		var why string
		switch owner := c.passthroughOwner[r.Host]; {
		case r.Host == "":
			why = field + " has no host"
		case owner == me:
			continue // another rule of this Ingress
		case owner != "":
			why = "host " + r.Host + " is passed through by the older Ingress " + owner
		case b == nil:
			why = "host " + r.Host + ": the rule has no path / and the Ingress no spec.defaultBackend"
		}
		if why != "" {
			w.find(ruleSSLPassthroughNot, key, w.ing.Annotations[key], why)
			continue
		}
		ref, ok := backendRef(w, field, b)
		if !ok {
			continue
		}
		rt := &gwv1.TLSRoute{
			TypeMeta:   metav1.TypeMeta{APIVersion: gwv1.GroupVersion.String(), Kind: "TLSRoute"},
			ObjectMeta: metav1.ObjectMeta{Namespace: w.ing.Namespace, Name: c.routeName(w.ing.Namespace, w.ing.Name, strings.ReplaceAll(r.Host, "*", "wildcard")+"-passthrough")},
			Spec: gwv1.TLSRouteSpec{
				CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{c.parentRef(w.ing.Namespace, tlsListenerName(r.Host))}},
				Hostnames:       []gwv1.Hostname{gwv1.Hostname(r.Host)},
				Rules:           []gwv1.TLSRouteRule{{BackendRefs: []gwv1.BackendRef{ref}}},
			},
		}
		c.passthrough[r.Host], c.passthroughOwner[r.Host] = rt, me
		w.rep.Routes = append(w.rep.Routes, "TLSRoute/"+rt.Name)
		w.find(ruleSSLPassthrough, key, w.ing.Annotations[key], "host "+r.Host)
	}
	if !w.handled[key] {
		w.find(ruleNoEffect, key, w.ing.Annotations[key], "no rule has a host")
	}
}
