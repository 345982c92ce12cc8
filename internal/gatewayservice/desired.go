package gatewayservice

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

// Options say how the Services of the Gateways are made.
type Options struct {
	// Namespace is the controller's: a Service selects Pods of its own
	// namespace only.
	Namespace string
	// Selector are the labels of the controller's Pods.
	Selector map[string]string
	// Type is the Services' type; empty means LoadBalancer.
	Type corev1.ServiceType
	// Ports is the range the internal ports (targetPorts) are taken
	// from.
	Ports PortRange
	// Owner, when set, is an owner of every Service: an object of the
	// controller's installation in Namespace (its ConfigMap), so that
	// uninstalling the controller garbage-collects the Services. (A
	// Gateway cannot own them: an owner is in its dependent's namespace.)
	Owner *metav1.OwnerReference
}

// PortRange is an inclusive range of ports.
type PortRange struct{ First, Last int32 }

// ParsePortRange reads "FIRST-LAST" (1 ≤ FIRST ≤ LAST ≤ 65535).
func ParsePortRange(s string) (PortRange, error) {
	a, b, ok := strings.Cut(s, "-")
	var r PortRange
	if ok {
		_, errA := fmt.Sscanf(a, "%d", &r.First)
		_, errB := fmt.Sscanf(b, "%d", &r.Last)
		ok = errA == nil && errB == nil && fmt.Sprint(r.First) == a && fmt.Sprint(r.Last) == b
	}
	if !ok || r.First < 1 || r.Last > 65535 || r.First > r.Last {
		return PortRange{}, fmt.Errorf("%q: want FIRST-LAST, two ports (1-65535) in order", s)
	}
	return r, nil
}

func (r PortRange) String() string { return fmt.Sprintf("%d-%d", r.First, r.Last) }

// Contains reports whether p is in the range.
func (r PortRange) Contains(p int32) bool { return p >= r.First && p <= r.Last }

// Plan is what the Services of the controller's namespace should become.
type Plan struct {
	// Want are the Services to create or update, by name.
	Want map[string]*corev1.Service
	// Delete are the Services of ours that no Gateway wants: their
	// Gateway is gone, or of another class. A Service left as it is (see
	// Problems) is in neither.
	Delete []*corev1.Service
	// Problems name the Gateways that get no (new) Service: their ports
	// do not fit in the range, or a Service of their name is another
	// Gateway's. Their Service, if any, is left as it is.
	Problems []model.Problem
}

// Desired plans the Services of gateways (the Gateways of Causeway's
// classes), given the ListenerSets that may add listeners to them and
// have, the Services of ours that exist now (Parse's ok ones; others are
// ignored). It is pure: the same input gives the same plan.
//
// Each Gateway gets one Service, named ServiceName, with one port per
// distinct listener port, its own listeners' and those of the
// ListenerSets it admits. Its internal ports (targetPorts) are those its
// Service has now, where still in the range and not another Service's;
// a new listener port takes the lowest port of the range that no Service
// has. So a Gateway's internal ports do not move while it exists (unless
// the range is changed so as to leave them out).
func Desired(gateways []*gwv1.Gateway, sets ListenerSets, have []*corev1.Service, opts Options) Plan {
	gateways = slices.Clone(gateways)
	slices.SortFunc(gateways, func(a, b *gwv1.Gateway) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	byName := map[string]*corev1.Service{}
	for _, s := range have {
		if _, ok := Parse(s); ok && s.Namespace == opts.Namespace {
			byName[s.Name] = s
		}
	}
	// used are the internal ports taken: every existing Service's (also
	// one about to be deleted, so that two Services never share a port
	// while the deletion is under way), and those given in this plan.
	used := map[int32]string{}
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		for _, t := range portsOf(byName[name]) {
			if _, taken := used[t]; !taken {
				used[t] = name
			}
		}
	}
	plan := Plan{Want: map[string]*corev1.Service{}}
	left := map[string]bool{} // Services left as they are
	type pending struct {
		gw    *gwv1.Gateway
		name  string
		ports []listenerPort
		alloc map[int32]int32
	}
	var todo []*pending
	nsLabels := sets.labels()
	// First every Gateway keeps what it has, then the new ports are
	// given out: a Gateway sorted first never takes a port a later one
	// holds.
	for _, gw := range gateways {
		name := ServiceName(gw.Namespace, gw.Name)
		p := &pending{gw: gw, name: name, ports: listenerPorts(gw, sets.of(gw, nsLabels)), alloc: map[int32]int32{}}
		if s := byName[name]; s != nil {
			o, _ := Parse(s)
			if o.Namespace != labelValue(gw.Namespace) || o.Name != labelValue(gw.Name) {
				plan.Problems = append(plan.Problems, problem(gw, fmt.Sprintf(
					"Service %s/%s, the name of this Gateway's, is Gateway %s's: it is left as it is and this Gateway has no address",
					opts.Namespace, name, o.Key())))
				left[name] = true
				continue
			}
			for _, lp := range p.ports {
				t, ok := o.Ports[lp.port]
				if ok && opts.Ports.Contains(t) && used[t] == name {
					p.alloc[lp.port] = t
				}
			}
		}
		if len(p.ports) == 0 {
			continue // a Service needs a port (the API requires a listener anyway)
		}
		todo = append(todo, p)
	}
	for _, p := range todo {
		var short, dropped []int32
		given := map[int32]bool{}
		// The Gateway's own ports first: a ListenerSet that asks for
		// more ports than the range has left loses its own ports only.
		slices.SortStableFunc(p.ports, func(a, b listenerPort) int { return cmp.Compare(boolInt(a.sets), boolInt(b.sets)) })
		for _, lp := range p.ports {
			if _, ok := p.alloc[lp.port]; ok {
				continue
			}
			t, ok := lowestFree(opts.Ports, used, given)
			switch {
			case !ok && lp.sets:
				dropped = append(dropped, lp.port)
				continue
			case !ok:
				short = append(short, lp.port)
				continue
			}
			given[t] = true
			p.alloc[lp.port] = t
		}
		slices.SortFunc(p.ports, func(a, b listenerPort) int {
			return cmp.Or(cmp.Compare(a.port, b.port), cmp.Compare(a.protocol, b.protocol))
		})
		if len(dropped) > 0 && len(short) == 0 {
			p.ports = slices.DeleteFunc(p.ports, func(lp listenerPort) bool { return slices.Contains(dropped, lp.port) })
			plan.Problems = append(plan.Problems, problemOf(p.gw, model.ReasonInvalid, fmt.Sprintf(
				"no internal port is free in --gateway-port-range %s for port(s) %s, which only its ListenerSets' listeners name: "+
					"the Service has no such port and those listeners are not served", opts.Ports, joinPorts(dropped))))
		}
		if len(short) > 0 {
			what := "the Gateway has no Service, so no address"
			if byName[p.name] != nil {
				left[p.name] = true
				what = "the Gateway's Service is left as it is"
			}
			plan.Problems = append(plan.Problems, problem(p.gw, fmt.Sprintf(
				"no internal port is free in --gateway-port-range %s for listener port(s) %s: %s",
				opts.Ports, joinPorts(short), what)))
			continue
		}
		for t := range given {
			used[t] = p.name
		}
		svc := build(p.gw, p.name, p.ports, p.alloc, opts)
		if refused := infrastructure(p.gw, svc); len(refused) > 0 {
			plan.Problems = append(plan.Problems, problemOf(p.gw, model.ReasonIgnored, refusedMessage(refused)))
		}
		plan.Want[p.name] = svc
	}
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		if plan.Want[name] == nil && !left[name] {
			plan.Delete = append(plan.Delete, byName[name])
		}
	}
	return plan
}

// portsOf are a Service's numeric targetPorts.
func portsOf(s *corev1.Service) []int32 {
	var out []int32
	for _, p := range s.Spec.Ports {
		if p.TargetPort.Type == intstr.Int && p.TargetPort.IntVal > 0 {
			out = append(out, p.TargetPort.IntVal)
		}
	}
	slices.Sort(out)
	return out
}

// lowestFree is the lowest port of r neither used nor given.
func lowestFree(r PortRange, used map[int32]string, given map[int32]bool) (int32, bool) {
	for t := r.First; t <= r.Last && t > 0; t++ {
		if _, taken := used[t]; !taken && !given[t] {
			return t, true
		}
	}
	return 0, false
}

type listenerPort struct {
	port     int32
	protocol corev1.Protocol
	// sets says only ListenerSets name the port: when the range has no
	// internal port left for it, it is left out, not the whole Service.
	sets bool
}

// listenerPorts are the distinct listener ports of a Gateway and of its
// admitted ListenerSets, in order, each once per transport its listeners
// use: TCP for HTTP, HTTPS, TLS and TCP, UDP for UDP (a Service may have
// one port number in both, as DNS does on 53).
func listenerPorts(gw *gwv1.Gateway, sets []*gwv1.ListenerSet) []listenerPort {
	type key struct {
		port int32
		udp  bool
	}
	seen := map[key]bool{} // true: the Gateway's own listeners name it
	add := func(port gwv1.PortNumber, proto gwv1.ProtocolType, own bool) {
		if p := int32(port); p >= 1 && p <= 65535 {
			k := key{p, proto == gwv1.UDPProtocolType}
			seen[k] = seen[k] || own
		}
	}
	for _, l := range gw.Spec.Listeners {
		add(l.Port, l.Protocol, true)
	}
	for _, ls := range sets {
		for _, l := range ls.Spec.Listeners {
			add(l.Port, l.Protocol, false)
		}
	}
	out := make([]listenerPort, 0, len(seen))
	for _, k := range slices.SortedFunc(maps.Keys(seen), func(a, b key) int {
		return cmp.Or(cmp.Compare(a.port, b.port), cmp.Compare(boolInt(a.udp), boolInt(b.udp)))
	}) {
		proto := corev1.ProtocolTCP
		if k.udp {
			proto = corev1.ProtocolUDP
		}
		out = append(out, listenerPort{port: k.port, protocol: proto, sets: !seen[k]})
	}
	return out
}

// build is the Service of gw.
func build(gw *gwv1.Gateway, name string, ports []listenerPort, alloc map[int32]int32, opts Options) *corev1.Service {
	typ := opts.Type
	if typ == "" {
		typ = corev1.ServiceTypeLoadBalancer
	}
	labels := Labels(gw.Namespace, gw.Name)
	s := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Namespace: opts.Namespace, Name: name, Labels: labels},
		Spec:       corev1.ServiceSpec{Type: typ, Selector: maps.Clone(opts.Selector)},
	}
	if opts.Owner != nil {
		s.OwnerReferences = []metav1.OwnerReference{*opts.Owner}
	}
	for i, lp := range ports {
		name := PortName(lp.port)
		if i > 0 && ports[i-1].port == lp.port {
			// The UDP twin of a TCP port (ports are in order, TCP
			// first): one internal port number serves both.
			name += "-udp"
		}
		s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{
			Name: name, Protocol: lp.protocol, Port: lp.port, TargetPort: intstr.FromInt32(alloc[lp.port])})
	}
	return s
}

// Labels are the labels of the Service of Gateway namespace/name. Label
// values are at most 63 characters, as Gateway names and namespaces are
// (DNS-1123 labels and subdomains of up to 63 in practice); a longer
// name is cut, and the Service name's hash still tells Gateways apart.
func Labels(namespace, name string) map[string]string {
	return map[string]string{LabelManagedBy: ManagedBy, LabelNamespace: labelValue(namespace), LabelName: labelValue(name)}
}

func labelValue(s string) string {
	if len(s) > 63 {
		s = strings.TrimRight(s[:63], "-._")
	}
	return s
}

// maxNameLen bounds a Service name: a DNS-1035 label.
const maxNameLen = 63

// ServiceName is the name of the Service of Gateway namespace/name: "gw-",
// then the namespace and name (dots as dashes), cut so that the whole
// fits in 63 characters, then a hash of "namespace/name" that tells apart
// Gateways whose names cut alike. It is a DNS-1035 label: lower-case
// letters, digits and dashes, starting with a letter.
func ServiceName(namespace, name string) string {
	sum := sha256.Sum256([]byte(namespace + "/" + name))
	hash := hex.EncodeToString(sum[:])[:10]
	var b strings.Builder
	for _, r := range strings.ToLower(namespace + "-" + name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	mid := b.String()
	if room := maxNameLen - len("gw-") - len("-") - len(hash); len(mid) > room {
		mid = mid[:room]
	}
	mid = strings.Trim(mid, "-")
	if mid == "" {
		return "gw-" + hash
	}
	return "gw-" + mid + "-" + hash
}

// problemOf is a Problem naming gw, without a condition.
func problemOf(gw *gwv1.Gateway, reason, msg string) model.Problem {
	return model.Problem{Object: model.ObjectRef{Kind: "Gateway", Namespace: gw.Namespace, Name: gw.Name, UID: string(gw.UID)},
		Reason: reason, Message: msg}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func problem(gw *gwv1.Gateway, msg string) model.Problem {
	reason := string(gwv1.GatewayReasonNoResources)
	return model.Problem{
		Object:  model.ObjectRef{Kind: "Gateway", Namespace: gw.Namespace, Name: gw.Name, UID: string(gw.UID)},
		Reason:  reason,
		Message: msg,
		Condition: &model.StatusCondition{Type: string(gwv1.GatewayConditionProgrammed),
			Status: string(metav1.ConditionFalse), Reason: reason},
	}
}

func joinPorts(ps []int32) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = fmt.Sprint(p)
	}
	return strings.Join(s, ", ")
}
