package model

import (
	"fmt"
	"net/netip"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// serviceIndex finds Services and their EndpointSlices by namespace/name.
type serviceIndex struct {
	services map[string]*corev1.Service
	slices   map[string][]*discoveryv1.EndpointSlice
}

func newServiceIndex(services []*corev1.Service, slices []*discoveryv1.EndpointSlice) *serviceIndex {
	idx := &serviceIndex{services: map[string]*corev1.Service{}, slices: map[string][]*discoveryv1.EndpointSlice{}}
	for _, s := range services {
		idx.services[s.Namespace+"/"+s.Name] = s
	}
	for _, es := range slices {
		svc := es.Labels[discoveryv1.LabelServiceName]
		if svc == "" {
			continue
		}
		k := es.Namespace + "/" + svc
		idx.slices[k] = append(idx.slices[k], es)
	}
	return idx
}

// checkServiceBackend validates the names in a backend reference; it is
// part of deciding whether an Ingress is well-formed.
func checkServiceBackend(b *networkingv1.IngressBackend) error {
	if b.Resource != nil {
		return fmt.Errorf("resource backends are not supported; use a Service")
	}
	if b.Service == nil {
		return fmt.Errorf("backend names no Service")
	}
	if err := validateServiceName(b.Service.Name); err != nil {
		return err
	}
	if p := b.Service.Port; p.Name != "" {
		if p.Number != 0 {
			return fmt.Errorf("service %s: port has both a name and a number", b.Service.Name)
		}
		return validatePortName(p.Name)
	} else if p.Number < 1 || p.Number > 65535 {
		return fmt.Errorf("service %s: port number %d is out of range", b.Service.Name, p.Number)
	}
	return nil
}

// backendKey is "namespace/service/port".
func backendKey(ns string, b *networkingv1.IngressServiceBackend) string {
	port := b.Port.Name
	if port == "" {
		port = strconv.Itoa(int(b.Port.Number))
	}
	return ns + "/" + b.Name + "/" + port
}

// resolve builds the Backend for a validated reference, or explains why the
// reference cannot serve (the location then answers 503).
func (idx *serviceIndex) resolve(ns string, ref *networkingv1.IngressServiceBackend) (*Backend, error) {
	svc := idx.services[ns+"/"+ref.Name]
	if svc == nil {
		return nil, fmt.Errorf("service %s/%s not found", ns, ref.Name)
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil, fmt.Errorf("service %s/%s is of type ExternalName, which is not supported", ns, ref.Name)
	}
	var sp *corev1.ServicePort
	for i := range svc.Spec.Ports {
		p := &svc.Spec.Ports[i]
		if (ref.Port.Name != "" && p.Name == ref.Port.Name) || (ref.Port.Name == "" && p.Port == ref.Port.Number) {
			sp = p
			break
		}
	}
	if sp == nil {
		return nil, fmt.Errorf("service %s/%s has no port %s", ns, ref.Name, portString(ref.Port))
	}
	if sp.Protocol != "" && sp.Protocol != corev1.ProtocolTCP {
		return nil, fmt.Errorf("service %s/%s port %s is %s, not TCP", ns, ref.Name, portString(ref.Port), sp.Protocol)
	}
	b := &Backend{Key: backendKey(ns, ref), Namespace: ns, Service: ref.Name, Port: portString(ref.Port)}
	b.Endpoints = idx.endpoints(ns, ref.Name, sp.Name)
	return b, nil
}

// service returns a Service by namespace and name.
func (idx *serviceIndex) service(ns, name string) *corev1.Service {
	return idx.services[ns+"/"+name]
}

func portString(p networkingv1.ServiceBackendPort) string {
	if p.Name != "" {
		return p.Name
	}
	return strconv.Itoa(int(p.Number))
}

// endpoints collects the ready, non-terminating addresses of a Service port
// across its EndpointSlices. EndpointSlice ports carry the Service port's
// name, which is how a slice port is tied to a Service port.
func (idx *serviceIndex) endpoints(ns, svc, portName string) []Endpoint {
	seen := map[Endpoint]bool{}
	var out []Endpoint
	for _, es := range idx.slices[ns+"/"+svc] {
		if es.AddressType != discoveryv1.AddressTypeIPv4 && es.AddressType != discoveryv1.AddressTypeIPv6 {
			continue
		}
		var port int32
		found := false
		for _, p := range es.Ports {
			name := ""
			if p.Name != nil {
				name = *p.Name
			}
			if name == portName && p.Port != nil && (p.Protocol == nil || *p.Protocol == corev1.ProtocolTCP) {
				port, found = *p.Port, true
				break
			}
		}
		if !found || port < 1 || port > 65535 {
			continue
		}
		for _, ep := range es.Endpoints {
			if !endpointReady(ep.Conditions) {
				continue
			}
			zone := ""
			if ep.Zone != nil && len(validation.IsValidLabelValue(*ep.Zone)) == 0 {
				zone = *ep.Zone
			}
			for _, a := range ep.Addresses {
				addr, err := netip.ParseAddr(a)
				if err != nil || addr.Zone() != "" {
					continue // never let an unparsable address reach the config
				}
				e := Endpoint{Address: addr.String(), Port: port, Zone: zone}
				if !seen[e] {
					seen[e] = true
					out = append(out, e)
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Address != out[j].Address {
			return out[i].Address < out[j].Address
		}
		return out[i].Port < out[j].Port
	})
	return out
}

// endpointReady follows the EndpointSlice API: a nil ready condition means
// ready; terminating endpoints are excluded even if still serving.
func endpointReady(c discoveryv1.EndpointConditions) bool {
	if c.Terminating != nil && *c.Terminating {
		return false
	}
	return c.Ready == nil || *c.Ready
}
