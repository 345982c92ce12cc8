package build

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

// This file reads ingress-nginx's tcp-services and udp-services
// ConfigMaps into stream servers, beside the TransportServers:
//
//	"9000": "namespace/service:port"          a TCP (or UDP) listener on 9000
//	"9001": "namespace/service:port:PROXY"    reading the PROXY protocol from clients
//	"9002": "namespace/service:port::PROXY"   sending it to the upstream
//	"9003": "namespace/service:port:PROXY:PROXY"
//
// A port a GlobalConfiguration listener (or the HTTP ports) already uses
// is a Collision on the ConfigMap; the listener is left out.

// Defaults of a stream server from a services ConfigMap: ingress-nginx's
// proxy-stream-timeout and proxy-stream-next-upstream* defaults.
var servicesConfigMapProxy = model.StreamProxy{ConnectTimeout: 5e9, Timeout: 600e9, NextUpstream: true, NextUpstreamTimeout: 600e9, NextUpstreamTries: 3}

// addServicesConfigMaps adds the stream servers of the tcp-services and
// udp-services ConfigMaps.
func (b *builder) addServicesConfigMaps() {
	for _, c := range []struct {
		name  string
		proto model.StreamProtocol
		flag  string
	}{{b.opts.TCPServices, model.StreamTCP, "--tcp-services-configmap"}, {b.opts.UDPServices, model.StreamUDP, "--udp-services-configmap"}} {
		if c.name == "" {
			continue
		}
		ns, name, _ := strings.Cut(c.name, "/")
		ref := model.ObjectRef{Kind: "ConfigMap", Namespace: ns, Name: name}
		cm := b.configMaps[c.name]
		if cm == nil {
			b.problem(ref, model.ReasonMissingConfigMap, false, "%s names ConfigMap %s, which does not exist; no %s services are served", c.flag, c.name, c.proto)
			continue
		}
		ref.UID = string(cm.UID)
		if b.excluded(ref) {
			// nginx refused what it renders: the rest keeps serving.
			continue
		}
		if !b.opts.StreamAvailable {
			b.problem(ref, model.ReasonUnsupported, false, "nginx has no stream module (Debian's libnginx-mod-stream); the %s services are not served", c.proto)
			continue
		}
		ports := make([]string, 0, len(cm.Data))
		for k := range cm.Data {
			ports = append(ports, k)
		}
		slices.SortFunc(ports, func(x, y string) int {
			a, _ := strconv.Atoi(x)
			b, _ := strconv.Atoi(y)
			if a != b {
				return a - b
			}
			return strings.Compare(x, y)
		})
		for _, k := range ports {
			b.addServicesEntry(ref, c.proto, k, cm.Data[k])
		}
	}
	slices.SortFunc(b.model.Streams, func(x, y *model.StreamServer) int { return strings.Compare(x.Listener, y.Listener) })
}

// addServicesEntry adds one "port: namespace/service:port[:PROXY[:PROXY]]".
func (b *builder) addServicesEntry(ref model.ObjectRef, proto model.StreamProtocol, key, value string) {
	leftOut := func(format string, args ...any) {
		b.problem(ref, model.ReasonInvalidConfig, false, "key %q: %s; left out", model.Truncate(key), fmt.Sprintf(format, args...))
	}
	port, err := strconv.Atoi(key)
	if err != nil || port < 1 || port > 65535 || strconv.Itoa(port) != key {
		leftOut("want a port from 1 to 65535")
		return
	}
	if port == b.opts.HTTPPort || port == b.opts.HTTPSPort {
		leftOut("port %d is the controller's HTTP or HTTPS port", port)
		return
	}
	if owner, taken := b.streamPorts[streamPort{port, proto}]; taken {
		b.problem(ref, model.ReasonCollision, false, "key %q: %s port %d is already served for %s; left out", key, proto, port, owner)
		return
	}
	svc, rest, ok := strings.Cut(value, ":")
	ns, svcName, okNS := strings.Cut(svc, "/")
	if !ok || !okNS {
		leftOut("value %q: want NAMESPACE/SERVICE:PORT[:PROXY[:PROXY]]", model.Truncate(value))
		return
	}
	fields := strings.Split(rest, ":")
	if len(fields) > 3 {
		leftOut("value %q: want NAMESPACE/SERVICE:PORT[:PROXY[:PROXY]]", model.Truncate(value))
		return
	}
	if len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1035Label(svcName)) > 0 {
		leftOut("value %q: invalid namespace or Service name", model.Truncate(value))
		return
	}
	proxy := servicesConfigMapProxy
	for i, f := range fields[1:] {
		switch {
		case f == "":
		case f != "PROXY":
			leftOut("value %q: %q is not PROXY", model.Truncate(value), model.Truncate(f))
			return
		case proto == model.StreamUDP:
			leftOut("value %q: the PROXY protocol is for TCP", model.Truncate(value))
			return
		case i == 0:
			proxy.AcceptProxyProtocol = true
		default:
			proxy.SendProxyProtocol = true
		}
	}
	sp := networkingv1.ServiceBackendPort{Name: fields[0]}
	if n, err := strconv.Atoi(fields[0]); err == nil {
		if n < 1 || n > 65535 {
			leftOut("value %q: port %d is out of range", model.Truncate(value), n)
			return
		}
		sp = networkingv1.ServiceBackendPort{Number: int32(n)}
	} else if len(validation.IsValidPortName(fields[0])) > 0 {
		leftOut("value %q: %q is not a port number or name", model.Truncate(value), model.Truncate(fields[0]))
		return
	}
	// A name starting with a digit: never a GlobalConfiguration
	// listener's (DNS-1035 labels start with a letter).
	srv := &model.StreamServer{Listener: key + "-" + strings.ToLower(string(proto)), Port: port, Protocol: proto,
		Upstream: model.StreamUpstream{Balance: model.StreamBalance{Method: model.StreamRoundRobin}, MaxFails: 1, FailTimeout: 10e9},
		Proxy:    proxy, Source: ref}
	cproto := corev1.ProtocolTCP
	if proto == model.StreamUDP {
		cproto = corev1.ProtocolUDP
	}
	be, err := b.idx.resolveProtocol(ns, &networkingv1.IngressServiceBackend{Name: svcName, Port: sp}, cproto)
	if err != nil {
		b.problem(ref, model.ReasonMissingService, false, "key %q: %v; connections to port %d are closed", key, err, port)
	} else {
		srv.Backend, srv.Endpoints = be.Key, be.Endpoints
	}
	b.addStream(srv)
}

// servicesConfigMapProcessor adds the stream servers of the tcp-services
// and udp-services ConfigMaps, after the TransportServers, whose
// listeners' ports they cannot take.
type servicesConfigMapProcessor struct {
	*builder
}

func (b *servicesConfigMapProcessor) objects(*source.Snapshot) []object { return nil }

func (b *servicesConfigMapProcessor) after(*source.Snapshot) { b.addServicesConfigMaps() }
