package build

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/frontend/ingress"
	"github.com/causeway/causeway/internal/frontend/nic"
	"github.com/causeway/causeway/internal/model"
)

// This file adds TLS passthrough by server name on the HTTPS port: the
// TransportServers of NGINX Ingress Controller's tls-passthrough listener
// and the Ingresses with ingress-nginx's ssl-passthrough annotation. A
// passed-through host belongs to its object alone: one host, one Ingress,
// VirtualServer or passthrough TransportServer, the oldest of any kind
// (see process, processor.go).

// passthroughFlag is what the Problems tell users to turn on.
const passthroughFlag = "--enable-tls-passthrough (or --enable-ssl-passthrough)"

// nginx's stream defaults (NGINX Ingress Controller's too) for the routes
// of ssl-passthrough Ingresses, which have no settings of their own.
var ingressPassthroughProxy = model.StreamProxy{ConnectTimeout: 60 * time.Second, Timeout: 10 * time.Minute}
var ingressPassthroughUpstream = model.StreamUpstream{Balance: model.StreamBalance{Method: model.StreamRoundRobin},
	MaxFails: 1, FailTimeout: 10 * time.Second}

// initPassthrough decides whether passthrough is served. It is off
// without the flag; with it, it is off (why says so, for the Problems
// of the objects asking for it) when nginx cannot serve it, or when the
// ConfigMap takes the client address from a header: the HTTPS requests
// then reach nginx through the passthrough proxy, whose PROXY header and
// the header cannot both be believed by nginx's one realip setting.
func (b *builder) initPassthrough() {
	if !b.opts.TLSPassthrough {
		b.passthroughWhy = "TLS passthrough is off: start the controller with " + passthroughFlag
		return
	}
	rip := b.model.Config.RealIP
	switch {
	case !b.opts.StreamAvailable:
		b.passthroughWhy = "nginx has no stream module (ngx_stream_module.so, Debian's libnginx-mod-stream), which TLS passthrough needs"
	case rip.Enabled() && !rip.UseProxyProtocol:
		b.passthroughWhy = "the ConfigMap takes the client address from " + rip.ForwardedForHeader +
			" (use-forwarded-headers or enable-real-ip), which TLS passthrough cannot honour on the HTTPS port"
		if cm := b.configMaps[b.opts.ConfigMap]; cm != nil {
			b.problem(configMapObject(cm), model.ReasonInvalidConfig, false,
				"TLS passthrough (%s) is not served: HTTPS requests would reach nginx through the passthrough proxy, and nginx believes "+
					"one source of client addresses, here %s; use use-proxy-protocol with a load balancer that sends the PROXY protocol, "+
					"or turn the header off", passthroughFlag, rip.ForwardedForHeader)
		}
	case rip.UseProxyProtocol && !b.opts.StreamRealIPAvailable:
		b.passthroughWhy = "with use-proxy-protocol, TLS passthrough needs nginx's stream realip module (--with-stream_realip_module), which this nginx lacks"
	default:
		b.model.Passthrough = &model.Passthrough{}
	}
}

// passthroughTransportServers are the TransportServers of ours on the
// tls-passthrough listener, which process orders with the Ingresses
// and VirtualServers.
func (b *builder) passthroughTransportServers(tss []*nicv1.TransportServer) []*nicv1.TransportServer {
	var out []*nicv1.TransportServer
	for _, ts := range b.ourTransportServers(tss) {
		if nic.IsPassthroughListener(ts.Spec.Listener) {
			out = append(out, ts)
		}
	}
	return out
}

// addPassthroughTransportServer serves one tls-passthrough TransportServer.
func (b *builder) addPassthroughTransportServer(ts *nicv1.TransportServer) {
	ref := nic.TSRef(ts)
	t, ok := intake(b, ref, ts, func() (*nic.TransportServer, []model.Problem, error) { return nic.TranslateTransportServer(ts) })
	if !ok {
		return
	}
	if b.model.Passthrough == nil {
		b.problem(ref, model.ReasonInvalid, true, "listener %q: %s; the TransportServer is not served", t.Listener, b.passthroughWhy)
		return
	}
	if !b.claimHost(ref, t.Host) {
		// A Collision, as for a VirtualServer's host: Warning status.
		return
	}
	route := &model.PassthroughRoute{Host: t.Host, Upstream: t.Upstream.Settings, Proxy: t.Proxy, Source: ref}
	be, err := b.idx.resolveProtocol(t.Namespace, &networkingv1.IngressServiceBackend{Name: t.Upstream.Service,
		Port: networkingv1.ServiceBackendPort{Number: t.Upstream.Port}}, corev1.ProtocolTCP)
	if err != nil {
		b.problem(ref, model.ReasonMissingService, false, "upstream %q: %v; TLS connections for %q are closed", t.Upstream.Name, err, t.Host)
	} else {
		route.Backend, route.Endpoints = be.Key, be.Endpoints
	}
	b.model.Passthrough.Routes = append(b.model.Passthrough.Routes, route)
}

// passthroughIngress reports whether the rule host of an ssl-passthrough
// Ingress is passed through; it claims the host for the Ingress alone.
// Without passthrough, the annotation is reported once and the Ingress is
// served as if it were absent.
func (b *builder) passthroughIngress(t *ingress.Translation, host string) bool {
	ref, key := t.Ref, b.opts.AnnotationsPrefix+"/ssl-passthrough"
	switch {
	case !t.Annotations.SSLPassthrough:
		return false
	case b.model.Passthrough == nil:
		if !b.reported["passthrough/"+ref.Key()] {
			b.reported["passthrough/"+ref.Key()] = true
			b.problem(ref, model.ReasonUnsupportedAnnotation, false, "annotation %q: %s; the Ingress is served as if it were absent", key, b.passthroughWhy)
		}
		return false
	case host == "":
		b.problem(ref, model.ReasonInvalidAnnotation, false, "annotation %q: a rule without a host is not passed through (TLS passthrough routes by server name)", key)
		return false
	}
	if owner, ok := b.hostOwner[host]; ok && owner == ref {
		return false // another rule of the Ingress passed it through
	}
	if other, used := b.ingressHost[host]; used && other != ref {
		b.problem(ref, model.ReasonCollision, false, "host %q belongs to %s, %s; annotation %q needs the host alone, so the host is not passed through",
			displayHost(host), other, b.whyFirst(other, ref), key)
		return false
	}
	b.hostOwner[host] = ref
	return true
}

// addIngressPassthrough adds the route of a host an ssl-passthrough
// Ingress owns: to the Service of the rule's "/" path, else of the
// Ingress's spec.defaultBackend (ingress-nginx's root location).
func (b *builder) addIngressPassthrough(t *ingress.Translation, r ingress.Rule) {
	key := b.opts.AnnotationsPrefix + "/ssl-passthrough"
	ib := t.Default
	for _, p := range r.Paths {
		if p.Written == "/" {
			ib = p.Backend
			break
		}
	}
	route := &model.PassthroughRoute{Host: r.Host, Upstream: ingressPassthroughUpstream, Proxy: ingressPassthroughProxy, Source: t.Ref}
	var err error
	switch {
	case ib == nil:
		err = fmt.Errorf("the rule has no path / and the Ingress no spec.defaultBackend")
	case ib.Service == nil:
		err = fmt.Errorf("the backend of / is not a Service")
	default:
		var be *model.Backend
		if be, err = b.idx.resolveProtocol(t.Namespace, ib.Service, corev1.ProtocolTCP); err == nil {
			route.Backend, route.Endpoints = be.Key, be.Endpoints
		}
	}
	if err != nil {
		b.problem(t.Ref, model.ReasonMissingService, false, "annotation %q: host %q: %v; its TLS connections are closed", key, r.Host, err)
	}
	b.model.Passthrough.Routes = append(b.model.Passthrough.Routes, route)
}

// finishPassthrough sorts the routes by host.
func (b *builder) finishPassthrough() {
	if b.model.Passthrough != nil {
		slices.SortFunc(b.model.Passthrough.Routes, func(x, y *model.PassthroughRoute) int { return strings.Compare(x.Host, y.Host) })
	}
}
