package build

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/causeway/causeway/internal/model"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
)

// serviceIndex finds Services and their EndpointSlices by namespace/name.
type serviceIndex struct {
	// services are the snapshot's Services by "namespace/name", read
	// through lookup only: it records what the build looked at.
	services map[string]*corev1.Service
	// found are the Services lookup found, missed the keys it did not
	// (lookedUp).
	found  map[*corev1.Service]struct{}
	missed map[string]bool
	slices map[string][]*discoveryv1.EndpointSlice
	// pods are Pods' labels by namespace/name (for subselectors).
	pods map[string]map[string]string
	// dropped collects, per Service key, the addresses endpoints left out
	// because they cannot be used as written.
	dropped map[string]map[droppedAddress]bool
	// noExternal refuses ExternalName Services
	// (--disable-svc-external-name).
	noExternal bool
	// streamed are the Services ("namespace/name") resolved for stream
	// servers (resolveProtocol): Result.StreamServices.
	streamed map[string]bool
}

// droppedAddress is an EndpointSlice address that cannot be used as
// written. Not-ready and terminating endpoints are not dropped: leaving
// them out is what the API asks.
type droppedAddress struct {
	slice, address, why string
}

func (d droppedAddress) String() string {
	return fmt.Sprintf("%q in EndpointSlice %s (%s)", model.Truncate(d.address), model.Truncate(d.slice), d.why)
}

func newServiceIndex(services []*corev1.Service, slices []*discoveryv1.EndpointSlice, pods []*corev1.Pod, noExternal bool) *serviceIndex {
	idx := &serviceIndex{services: map[string]*corev1.Service{}, slices: map[string][]*discoveryv1.EndpointSlice{},
		pods: map[string]map[string]string{}, dropped: map[string]map[droppedAddress]bool{}, noExternal: noExternal,
		streamed: map[string]bool{}, found: map[*corev1.Service]struct{}{}, missed: map[string]bool{}}
	for _, p := range pods {
		idx.pods[p.Namespace+"/"+p.Name] = p.Labels
	}
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

// backendKey is "namespace/service/port".
func backendKey(ns string, b *networkingv1.IngressServiceBackend) string {
	port := b.Port.Name
	if port == "" {
		port = strconv.Itoa(int(b.Port.Number))
	}
	return ns + "/" + b.Name + "/" + port
}

// resolve builds the Backend for a validated reference, or explains why the
// reference cannot serve (the location then answers 503). An ExternalName
// Service is an HTTP backend whose endpoints the controller resolves
// (externalname.go).
func (idx *serviceIndex) resolve(ns string, ref *networkingv1.IngressServiceBackend) (*model.Backend, error) {
	if svc := idx.service(ns, ref.Name); svc != nil && svc.Spec.Type == corev1.ServiceTypeExternalName {
		return idx.externalBackend(svc, ref)
	}
	return idx.resolveWhere(ns, ref, corev1.ProtocolTCP, nil)
}

// resolveProtocol is resolve for a Service port of protocol proto (a
// Service may have a TCP and a UDP port of the same number), for the
// stream servers: without ExternalName Services. The Service is recorded
// as streamed: its endpoints go into the files.
func (idx *serviceIndex) resolveProtocol(ns string, ref *networkingv1.IngressServiceBackend, proto corev1.Protocol) (*model.Backend, error) {
	idx.streamed[ns+"/"+ref.Name] = true
	return idx.resolveWhere(ns, ref, proto, nil)
}

// subselectorSuffix marks the backend key of a Service port's endpoints
// that a subselector picks, by a hash of the subselector.
const subselectorSuffix = "@subselector-"

// resolveSubset is resolve keeping only the endpoints of the Pods whose
// labels include sel (an EndpointSlice endpoint names its Pod in its
// targetRef), as NGINX Ingress Controller's subselector: a backend of its
// own, whose key ends in subselectorSuffix and a hash of sel.
func (idx *serviceIndex) resolveSubset(ns string, ref *networkingv1.IngressServiceBackend, sel map[string]string) (*model.Backend, error) {
	want := labels.SelectorFromSet(sel)
	b, err := idx.resolveWhere(ns, ref, corev1.ProtocolTCP, func(r *corev1.ObjectReference) bool {
		if r == nil || r.Kind != "Pod" {
			return false
		}
		l, ok := idx.pods[ns+"/"+r.Name]
		return ok && want.Matches(labels.Set(l))
	})
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(want.String()))
	b.Key += subselectorSuffix + hex.EncodeToString(sum[:6])
	return b, nil
}

// resolveWhere is resolveProtocol keeping only the endpoints keep
// accepts by their targetRef (nil keeps all).
func (idx *serviceIndex) resolveWhere(ns string, ref *networkingv1.IngressServiceBackend, proto corev1.Protocol,
	keep func(*corev1.ObjectReference) bool) (*model.Backend, error) {
	svc := idx.service(ns, ref.Name)
	if svc == nil {
		return nil, fmt.Errorf("service %s/%s not found", ns, ref.Name)
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil, fmt.Errorf("service %s/%s is of type ExternalName, which only HTTP backends without a subselector may be", ns, ref.Name)
	}
	var sp *corev1.ServicePort
	for i := range svc.Spec.Ports {
		p := &svc.Spec.Ports[i]
		if (ref.Port.Name != "" && p.Name == ref.Port.Name) || (ref.Port.Name == "" && p.Port == ref.Port.Number) {
			if sp == nil || portProtocol(p.Protocol) == proto && portProtocol(sp.Protocol) != proto {
				sp = p
			}
		}
	}
	if sp == nil {
		return nil, fmt.Errorf("service %s/%s has no port %s", ns, ref.Name, portString(ref.Port))
	}
	if portProtocol(sp.Protocol) != proto {
		return nil, fmt.Errorf("service %s/%s port %s is %s, not %s", ns, ref.Name, portString(ref.Port), sp.Protocol, proto)
	}
	b := &model.Backend{Key: backendKey(ns, ref), Namespace: ns, Service: ref.Name, Port: portString(ref.Port)}
	b.Endpoints = idx.endpoints(ns, ref.Name, sp.Name, proto, keep)
	return b, nil
}

// portProtocol is a Service port's protocol, TCP when not set.
func portProtocol(p corev1.Protocol) corev1.Protocol {
	if p == "" {
		return corev1.ProtocolTCP
	}
	return p
}

// service returns a Service by namespace and name.
func (idx *serviceIndex) service(ns, name string) *corev1.Service {
	return idx.lookup(ns + "/" + name)
}

// lookup returns the Service key ("namespace/name") names, nil if there
// is none, and records that the build looked for it.
func (idx *serviceIndex) lookup(key string) *corev1.Service {
	svc := idx.services[key]
	if svc != nil {
		idx.found[svc] = struct{}{}
	} else if !idx.missed[key] {
		idx.missed[strings.Clone(key)] = true // the caller's key stays on its stack
	}
	return svc
}

// lookedUp are the Services ("namespace/name") the build looked for,
// found or not (Result.Services). Those found keep the index's key
// strings rather than making their own.
func (idx *serviceIndex) lookedUp() map[string]bool {
	out := make(map[string]bool, len(idx.found)+len(idx.missed))
	for key, svc := range idx.services {
		if _, ok := idx.found[svc]; ok {
			out[key] = true
		}
	}
	for key := range idx.missed {
		out[key] = true
	}
	return out
}

func portString(p networkingv1.ServiceBackendPort) string {
	if p.Name != "" {
		return p.Name
	}
	return strconv.Itoa(int(p.Number))
}

// endpoints collects the ready, non-terminating addresses of a Service port
// across its EndpointSlices. EndpointSlice ports carry the Service port's
// name, which is how a slice port is tied to a Service port. Addresses that
// cannot be used as written are recorded in idx.dropped. keep, when set,
// selects endpoints by their targetRef.
func (idx *serviceIndex) endpoints(ns, svc, portName string, proto corev1.Protocol, keep func(*corev1.ObjectReference) bool) []model.Endpoint {
	key := ns + "/" + svc
	drop := func(es *discoveryv1.EndpointSlice, addr, why string) {
		if idx.dropped[key] == nil {
			idx.dropped[key] = map[droppedAddress]bool{}
		}
		idx.dropped[key][droppedAddress{slice: es.Name, address: addr, why: why}] = true
	}
	dropAll := func(es *discoveryv1.EndpointSlice, why string) {
		for _, ep := range es.Endpoints {
			for _, a := range ep.Addresses {
				drop(es, a, why)
			}
		}
	}
	// One endpoint per address and port, whatever the slices say: nginx
	// refuses (Lua) or double-weights (plain upstreams) a peer listed
	// twice. Slices that disagree on its zone keep the smallest zone, so
	// the result does not depend on the order the slices arrive in.
	type peer struct {
		addr string
		port int32
	}
	seen := map[peer]int{} // index in out
	var out []model.Endpoint
	for _, es := range idx.slices[key] {
		if es.AddressType != discoveryv1.AddressTypeIPv4 && es.AddressType != discoveryv1.AddressTypeIPv6 {
			dropAll(es, fmt.Sprintf("addressType %q is not supported", model.Truncate(string(es.AddressType))))
			continue
		}
		var sp *discoveryv1.EndpointPort
		for i, p := range es.Ports {
			name := ""
			if p.Name != nil {
				name = *p.Name
			}
			if name == portName && (p.Protocol == nil && proto == corev1.ProtocolTCP || p.Protocol != nil && *p.Protocol == proto) {
				sp = &es.Ports[i]
				break
			}
		}
		if sp == nil {
			continue // this slice does not serve the port
		}
		if sp.Port == nil {
			dropAll(es, fmt.Sprintf("port %q has no number", portName))
			continue
		}
		port := *sp.Port
		if port < 1 || port > 65535 {
			dropAll(es, fmt.Sprintf("port %d is out of range", port))
			continue
		}
		for _, ep := range es.Endpoints {
			ready := endpointReady(ep.Conditions)
			zone := ""
			if ep.Zone != nil && len(validation.IsValidLabelValue(*ep.Zone)) == 0 {
				zone = *ep.Zone
			}
			for _, a := range ep.Addresses {
				// Never let an address nginx might misread reach the
				// config, ready or not.
				addr, err := netip.ParseAddr(a)
				switch {
				case err != nil:
					drop(es, a, "not an IP address")
					continue
				case addr.Zone() != "":
					drop(es, a, "an IPv6 zone is not allowed")
					continue
				case es.AddressType == discoveryv1.AddressTypeIPv4 && !addr.Is4() && !addr.Is4In6(),
					es.AddressType == discoveryv1.AddressTypeIPv6 && (addr.Is4() || addr.Is4In6()):
					drop(es, a, fmt.Sprintf("not an %s address", es.AddressType))
					continue
				}
				if !ready || keep != nil && !keep(ep.TargetRef) {
					continue
				}
				e := model.Endpoint{Address: addr.String(), Port: port, Zone: zone}
				if i, dup := seen[peer{e.Address, port}]; dup {
					out[i].Zone = min(out[i].Zone, zone)
					continue
				}
				seen[peer{e.Address, port}] = len(out)
				out = append(out, e)
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

// reportDropped raises one Problem per live Service whose EndpointSlices
// hold addresses that cannot be used.
func (b *builder) reportDropped() {
	empty := map[string][]string{} // Service key -> ports left without endpoints
	var order []string
	for _, be := range b.model.Backends {
		k := be.Namespace + "/" + be.Service
		if _, ok := empty[k]; !ok {
			order = append(order, k)
			empty[k] = nil
		}
		if len(be.Endpoints) == 0 {
			empty[k] = append(empty[k], be.Port)
		}
	}
	for _, k := range order {
		dropped := b.idx.dropped[k]
		if len(dropped) == 0 {
			continue
		}
		msg := droppedMessage(dropped)
		if ports := empty[k]; len(ports) > 0 {
			msg += fmt.Sprintf("; port %s has no usable endpoint left, so its paths answer 503", strings.Join(ports, ", "))
		}
		svc := b.idx.lookup(k)
		b.problem(serviceRef(svc), model.ReasonDroppedEndpoints, false, "%s", msg)
	}
}

// droppedMessage summarises a Service's dropped addresses: a count and a
// few examples, so one bad slice of thousands raises one short Problem.
func droppedMessage(dropped map[droppedAddress]bool) string {
	list := make([]droppedAddress, 0, len(dropped))
	for d := range dropped {
		list = append(list, d)
	}
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if a.slice != b.slice {
			return a.slice < b.slice
		}
		if a.address != b.address {
			return a.address < b.address
		}
		return a.why < b.why
	})
	const examples = 3
	var b strings.Builder
	fmt.Fprintf(&b, "%d EndpointSlice address(es) cannot be used and are left out: ", len(list))
	for i, d := range list {
		if i == examples {
			fmt.Fprintf(&b, ", and %d more", len(list)-examples)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(d.String())
	}
	return b.String()
}

// endpointReady follows the EndpointSlice API: a nil ready condition means
// ready; terminating endpoints are excluded even if still serving.
func endpointReady(c discoveryv1.EndpointConditions) bool {
	if c.Terminating != nil && *c.Terminating {
		return false
	}
	return c.Ready == nil || *c.Ready
}

// ServiceEndpoints computes, as Run does, the endpoints of backend key
// (model.Backend.Key) of Service svc from its EndpointSlices alone, for
// the controller's incremental path: an EndpointSlice change updates the
// backends of its Service without a build. A backend reached through the
// cluster IP gets it, whatever the slices. ok is false when Run could
// compute them differently or would report something about them: key is
// not a backend of one of svc's TCP ports (a subselector's, which Pods
// decide, an ExternalName Service's, a port svc lacks, a cluster IP svc
// lacks), or an address of the slices cannot be used as written (a
// DroppedEndpoints Problem, which only a build raises).
func ServiceEndpoints(svc *corev1.Service, slices []*discoveryv1.EndpointSlice, key string) (eps []model.Endpoint, ok bool) {
	if svc == nil || svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil, false
	}
	base, cluster := strings.CutSuffix(key, clusterIPSuffix)
	ns, rest, _ := strings.Cut(base, "/")
	name, port, _ := strings.Cut(rest, "/")
	if ns != svc.Namespace || name != svc.Name || port == "" {
		return nil, false
	}
	ref := &networkingv1.IngressServiceBackend{Name: name}
	if n, err := strconv.ParseInt(port, 10, 32); err == nil && strconv.Itoa(int(n)) == port {
		ref.Port.Number = int32(n)
	} else {
		ref.Port.Name = port
	}
	if cluster {
		slices = nil // not read: the cluster IP is the one endpoint
	}
	idx := newServiceIndex([]*corev1.Service{svc}, slices, nil, false)
	be, err := idx.resolveWhere(ns, ref, corev1.ProtocolTCP, nil)
	if err != nil || be.Key != base || len(idx.dropped) > 0 {
		return nil, false
	}
	if cluster {
		e, ok := clusterIPEndpoint(svc, port)
		return []model.Endpoint{e}, ok
	}
	return be.Endpoints, true
}
