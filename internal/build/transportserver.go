package build

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/frontend/nic"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

// This file adds Layer 4: the TCP and UDP listeners of the
// GlobalConfiguration that --global-configuration names, and the
// TransportServers that use them. One listener belongs to one
// TransportServer, the oldest (creationTimestamp, UID, namespace/name);
// the others get a Collision Problem.

// streamListener is a GlobalConfiguration listener that is bound.
type streamListener struct {
	name       string
	port       int
	proto      model.StreamProtocol
	ipv4, ipv6 netip.Addr
}

// globalConfiguration is what the build made of the GlobalConfiguration's
// listeners: TCP and UDP ones for TransportServers, HTTP ones for
// VirtualServers. why, when set, says why there are none.
type globalConfiguration struct {
	stream map[string]streamListener
	http   map[string]*model.HTTPListener
	why    string
}

// readGlobalConfiguration reads the GlobalConfiguration once per build,
// with its Problems.
func (b *builder) readGlobalConfiguration(snap *source.Snapshot) {
	b.gc.stream, b.gc.http, b.gc.why = b.globalListeners(snap)
}

// globalListeners reads the GlobalConfiguration's listeners; those that
// cannot be bound are reported on it and left out. A port serves one
// listener per transport: HTTP and TCP listeners share TCP's, UDP has its
// own, and none takes the controller's HTTP or HTTPS port. why, when set,
// says that there is no GlobalConfiguration (flag unset or object
// missing), for the Problems of the objects that name a listener.
func (b *builder) globalListeners(snap *source.Snapshot) (listeners map[string]streamListener, http map[string]*model.HTTPListener, why string) {
	name := b.opts.GlobalConfiguration
	if name == "" {
		return nil, nil, "no GlobalConfiguration is configured (--global-configuration)"
	}
	var gc *nicv1.GlobalConfiguration
	for _, g := range snap.GlobalConfigurations {
		if g.Namespace+"/"+g.Name == name {
			gc = g
		}
	}
	if gc == nil {
		return nil, nil, fmt.Sprintf("GlobalConfiguration %s (--global-configuration) does not exist", name)
	}
	ref := model.ObjectRef{Kind: "GlobalConfiguration", Namespace: gc.Namespace, Name: gc.Name, UID: string(gc.UID)}
	listeners, http = map[string]streamListener{}, map[string]*model.HTTPListener{}
	names := map[string]bool{}
	ports := map[string]string{} // "port/transport" -> listener
	reserved := map[int]string{b.opts.HTTPPort: "HTTP", b.opts.HTTPSPort: "HTTPS"}
	for i, l := range gc.Spec.Listeners {
		field := fmt.Sprintf("spec.listeners[%d]", i)
		leftOut := func(format string, args ...any) {
			b.problem(ref, model.ReasonInvalid, false, "%s (%s): %s; the listener is left out", field, model.Truncate(l.Name), fmt.Sprintf(format, args...))
		}
		if errs := validation.IsDNS1035Label(l.Name); len(errs) > 0 {
			leftOut("name: %s", strings.Join(errs, "; "))
			continue
		}
		if names[l.Name] {
			leftOut("the name is used by another listener")
			continue
		}
		names[l.Name] = true
		proto := model.StreamProtocol(l.Protocol)
		switch {
		case l.Protocol != "HTTP" && proto != model.StreamTCP && proto != model.StreamUDP:
			leftOut("protocol %q: want HTTP, TCP or UDP", model.Truncate(l.Protocol))
			continue
		case l.Port < 1 || l.Port > 65535:
			leftOut("port %d: want 1 to 65535", l.Port)
			continue
		case reserved[l.Port] != "" && l.Port != 0:
			leftOut("port %d is the controller's %s port", l.Port, reserved[l.Port])
			continue
		}
		pk := fmt.Sprintf("%d/%s", l.Port, model.StreamTCP)
		if proto == model.StreamUDP {
			pk = fmt.Sprintf("%d/%s", l.Port, proto)
		}
		if other, dup := ports[pk]; dup {
			leftOut("port %d %s is used by listener %q", l.Port, l.Protocol, other)
			continue
		}
		if l.Protocol == "HTTP" {
			hl, err := httpListener(l)
			if err != nil {
				leftOut("%v", err)
				continue
			}
			ports[pk] = l.Name
			http[l.Name] = hl
			continue
		}
		if l.Ssl {
			leftOut("ssl is not supported by Causeway yet")
			continue
		}
		v4, v6, err := listenerAddresses(l)
		if err != nil {
			leftOut("%v", err)
			continue
		}
		ports[pk] = l.Name
		listeners[l.Name] = streamListener{name: l.Name, port: l.Port, proto: proto, ipv4: v4, ipv6: v6}
	}
	return listeners, http, ""
}

// ourTransportServers are those of our classes, oldest first (those on
// the tls-passthrough listener too).
func (b *builder) ourTransportServers(tss []*nicv1.TransportServer) []*nicv1.TransportServer {
	var out []*nicv1.TransportServer
	for _, ts := range tss {
		if nic.TransportServerClass.IsOurs(b.classes, ts) {
			out = append(out, ts)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return ranksFirst(out[i], out[j]) })
	return out
}

// addTransportServers turns the TransportServers into Model.Streams.
func (b *builder) addTransportServers(snap *source.Snapshot) {
	tss := b.ourTransportServers(snap.TransportServers)
	listeners, why := b.gc.stream, b.gc.why
	owner := owners[string]{}
	for _, ts := range tss {
		if nic.IsPassthroughListener(ts.Spec.Listener) {
			continue // with the hosts (passthrough.go)
		}
		ref := nic.TSRef(ts)
		t, ok := intake(b, ref, ts, func() (*nic.TransportServer, []model.Problem, error) { return nic.TranslateTransportServer(ts) })
		if !ok {
			continue
		}
		if !b.opts.StreamAvailable {
			b.problem(ref, model.ReasonUnsupported, true, "nginx has no stream module (ngx_stream_module.so, Debian's libnginx-mod-stream, is not installed in the nginx modules directory); the TransportServer is not served")
			continue
		}
		if why != "" {
			b.problem(ref, model.ReasonInvalid, true, "listener %q: %s", t.Listener, why)
			continue
		}
		l, ok := listeners[t.Listener]
		switch {
		case !ok:
			b.problem(ref, model.ReasonInvalid, true, "listener %q is not a TCP or UDP listener of GlobalConfiguration %s", t.Listener, b.opts.GlobalConfiguration)
			continue
		case l.proto != t.Protocol:
			b.problem(ref, model.ReasonInvalid, true, "listener %q is %s, not %s", t.Listener, l.proto, t.Protocol)
			continue
		}
		if o, fresh := owner.claim(l.name, ref); !fresh {
			b.lost(ref, o, true, "listener %q belongs to %s", l.name, o)
			continue
		}
		srv := &model.StreamServer{Listener: l.name, Port: l.port, IPv4: l.ipv4, IPv6: l.ipv6, Protocol: l.proto, Upstream: t.Upstream.Settings, Proxy: t.Proxy, Source: ref}
		proto := corev1.ProtocolTCP
		if l.proto == model.StreamUDP {
			proto = corev1.ProtocolUDP
		}
		be, err := b.idx.resolveProtocol(t.Namespace, &networkingv1.IngressServiceBackend{Name: t.Upstream.Service,
			Port: networkingv1.ServiceBackendPort{Number: t.Upstream.Port}}, proto)
		if t.TLSSecret != "" {
			if reason, why := b.loadTLSSecret(t.Namespace, t.TLSSecret); why != "" {
				// Never hand a TLS client's bytes to the backend in the
				// clear, nor serve the default certificate for it:
				// connections are closed until the Secret is usable.
				b.problem(ref, reason, false, "spec.tls.secret: TLS secret %s/%s%s; connections to listener %q are closed",
					t.Namespace, t.TLSSecret, why, l.name)
				b.addStream(srv)
				continue
			}
			srv.TLS = &model.StreamTLS{Secret: t.Namespace + "/" + t.TLSSecret}
		}
		if err != nil {
			b.problem(ref, model.ReasonMissingService, false, "upstream %q: %v; connections to listener %q are closed", t.Upstream.Name, err, l.name)
		} else {
			srv.Backend, srv.Endpoints = be.Key, be.Endpoints
		}
		b.addStream(srv)
	}
	slices.SortFunc(b.model.Streams, func(x, y *model.StreamServer) int { return strings.Compare(x.Listener, y.Listener) })
}

// transportServerProcessor adds the TransportServers of our classes:
// those of the tls-passthrough listener claim hosts with the other kinds
// (passthrough.go); those of TCP and UDP listeners become stream servers
// once the hosts are settled.
type transportServerProcessor struct {
	*builder
}

func (b *transportServerProcessor) objects(snap *source.Snapshot) []object {
	var out []object
	for _, ts := range b.passthroughTransportServers(snap.TransportServers) {
		out = append(out, object{meta: ts, add: func() { b.addPassthroughTransportServer(ts) }})
	}
	return out
}

func (b *transportServerProcessor) after(snap *source.Snapshot) { b.addTransportServers(snap) }
