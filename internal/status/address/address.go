// Package address says which addresses Ingresses are published at: the
// values of --publish-address, or the load-balancer addresses (else the
// external IPs) of the Service named by --publish-service, followed through
// an informer so that a new load-balancer address reaches every Ingress.
package address

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Source yields the addresses to publish. ok is false while they are not
// known yet (the Service has not been listed), in which case a status
// writer must wait rather than clear what is published.
type Source interface {
	Addresses() (addrs []networkingv1.IngressLoadBalancerIngress, ok bool)
}

// Parse turns --publish-address values (each may be a comma-separated
// list) into status entries: IP addresses as IP, DNS names as Hostname. The
// result is sorted and free of duplicates.
func Parse(values []string) ([]networkingv1.IngressLoadBalancerIngress, error) {
	var out []networkingv1.IngressLoadBalancerIngress
	for _, v := range values {
		for _, a := range strings.Split(v, ",") {
			a = strings.TrimSpace(a)
			if a == "" {
				continue
			}
			e, err := parseOne(a)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
	}
	return Normalize(out), nil
}

func parseOne(a string) (networkingv1.IngressLoadBalancerIngress, error) {
	if ip, err := netip.ParseAddr(a); err == nil {
		if ip.Zone() != "" {
			return networkingv1.IngressLoadBalancerIngress{}, fmt.Errorf("publish address %q: an IPv6 zone cannot be published", a)
		}
		return networkingv1.IngressLoadBalancerIngress{IP: ip.String()}, nil
	}
	if errs := validation.IsDNS1123Subdomain(a); len(errs) > 0 {
		return networkingv1.IngressLoadBalancerIngress{}, fmt.Errorf("publish address %q is neither an IP address nor a DNS name: %s", a, strings.Join(errs, "; "))
	}
	return networkingv1.IngressLoadBalancerIngress{Hostname: a}, nil
}

// FromService returns what a Service publishes: its load-balancer ingress
// addresses when it has any, else its external IPs.
func FromService(svc *corev1.Service) []networkingv1.IngressLoadBalancerIngress {
	if svc == nil {
		return nil
	}
	var out []networkingv1.IngressLoadBalancerIngress
	for _, lb := range svc.Status.LoadBalancer.Ingress {
		if lb.IP != "" || lb.Hostname != "" {
			out = append(out, networkingv1.IngressLoadBalancerIngress{IP: lb.IP, Hostname: lb.Hostname})
		}
	}
	if len(out) == 0 {
		for _, ip := range svc.Spec.ExternalIPs {
			out = append(out, networkingv1.IngressLoadBalancerIngress{IP: ip})
		}
	}
	return Normalize(out)
}

// EndpointPorts formats ports as NGINX Ingress Controller's
// externalEndpoints[].ports: "[80,443]".
func EndpointPorts(ports []int32) string {
	s := make([]string, len(ports))
	for i, p := range ports {
		s[i] = strconv.Itoa(int(p))
	}
	return "[" + strings.Join(s, ",") + "]"
}

// ServicePorts are the ports of a Service that lead to nginx's HTTP and
// HTTPS listeners (httpPort, httpsPort), sorted: those whose targetPort
// is one of them, or is named http or https, as NGINX Ingress Controller
// picks them for externalEndpoints.
func ServicePorts(svc *corev1.Service, httpPort, httpsPort int) []int32 {
	if svc == nil {
		return nil
	}
	var out []int32
	for _, p := range svc.Spec.Ports {
		t := p.TargetPort
		if t.Type == intstr.Int && (int(t.IntVal) == httpPort || int(t.IntVal) == httpsPort) ||
			t.Type == intstr.String && (t.StrVal == "http" || t.StrVal == "https") {
			out = append(out, p.Port)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Normalize sorts entries (IPs before host names) and drops duplicates, so
// that two lists can be compared with Equal.
func Normalize(in []networkingv1.IngressLoadBalancerIngress) []networkingv1.IngressLoadBalancerIngress {
	out := slices.Clone(in)
	slices.SortFunc(out, compare)
	return slices.CompactFunc(out, func(a, b networkingv1.IngressLoadBalancerIngress) bool { return compare(a, b) == 0 })
}

func compare(a, b networkingv1.IngressLoadBalancerIngress) int {
	if a.IP != b.IP {
		if a.IP == "" {
			return 1
		}
		if b.IP == "" {
			return -1
		}
		return strings.Compare(a.IP, b.IP)
	}
	if c := strings.Compare(a.Hostname, b.Hostname); c != 0 {
		return c
	}
	return slices.CompareFunc(a.Ports, b.Ports, func(x, y networkingv1.IngressPortStatus) int {
		if x.Port != y.Port {
			return int(x.Port - y.Port)
		}
		if x.Protocol != y.Protocol {
			return strings.Compare(string(x.Protocol), string(y.Protocol))
		}
		return strings.Compare(ptrString(x.Error), ptrString(y.Error))
	})
}

func ptrString(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// Equal reports whether two status lists hold the same entries, in any
// order.
func Equal(a, b []networkingv1.IngressLoadBalancerIngress) bool {
	return slices.EqualFunc(Normalize(a), Normalize(b), func(x, y networkingv1.IngressLoadBalancerIngress) bool { return compare(x, y) == 0 })
}

// Static is a fixed list of addresses (--publish-address).
type Static []networkingv1.IngressLoadBalancerIngress

// Addresses returns the list; it is always known.
func (s Static) Addresses() ([]networkingv1.IngressLoadBalancerIngress, bool) { return s, true }

// ServiceWatcher follows one Service (--publish-service) through an
// informer that lists and watches only that name.
type ServiceWatcher struct {
	informer cache.SharedIndexInformer
	factory  informers.SharedInformerFactory
	key      string

	mu      sync.Mutex                                // guards current
	current []networkingv1.IngressLoadBalancerIngress // as last seen by the change handler
	ports   string                                    // the Service's ports, as last seen
	// httpPort and httpsPort are nginx's listeners (ServicePorts).
	httpPort, httpsPort int
	// said is what was last logged of the Service's state (see state).
	said     string
	onChange func()
	log      *slog.Logger
}

// state says why a Service publishes nothing, "" when it publishes.
func state(svc *corev1.Service, addrs []networkingv1.IngressLoadBalancerIngress) string {
	switch {
	case svc == nil:
		return "does not exist"
	case len(addrs) == 0:
		return "has no load-balancer address nor external IP yet"
	}
	return ""
}

// NewServiceWatcher watches namespace/name. onChange is called, from the
// informer's goroutine, whenever the published addresses, or the ports of
// the Service that lead to nginx's httpPort and httpsPort, change. log
// hears when the Service publishes nothing (Ingress status then stays
// empty) and when it publishes again.
func NewServiceWatcher(client kubernetes.Interface, namespace, name string, httpPort, httpsPort int, onChange func(), log *slog.Logger) (*ServiceWatcher, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
		}))
	w := &ServiceWatcher{informer: f.Core().V1().Services().Informer(), factory: f, key: namespace + "/" + name,
		httpPort: httpPort, httpsPort: httpsPort}
	w.onChange, w.log = onChange, log
	_, err := w.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { w.update() },
		UpdateFunc: func(any, any) { w.update() },
		DeleteFunc: func(any) { w.update() },
	})
	if err != nil {
		return nil, fmt.Errorf("watch publish service %s: %w", w.key, err)
	}
	return w, nil
}

// update notes the Service's addresses and ports, calls onChange when
// they changed and logs when it starts or stops publishing.
func (w *ServiceWatcher) update() {
	// One read of the store, so addresses and ports are of one version of
	// the Service.
	svc := w.service()
	addrs := FromService(svc)
	ports, _ := w.portsOf(svc)
	w.mu.Lock()
	changed := !Equal(addrs, w.current) || ports != w.ports
	w.current, w.ports = addrs, ports
	now, before := state(svc, addrs), w.said
	w.said = now
	w.mu.Unlock()
	switch {
	case now != "" && now != before:
		w.log.Warn("publish service "+now+": Ingress status gets no address until it has one", "service", w.key)
	case now == "" && before != "":
		w.log.Info("publish service has addresses again", "service", w.key, "addresses", len(addrs))
	}
	if changed && w.onChange != nil {
		w.onChange()
	}
}

// Run starts the informer and blocks until ctx is done. Once the Service
// has been listed, it is checked even if it does not exist (no event
// would say so).
func (w *ServiceWatcher) Run(ctx context.Context) {
	w.factory.Start(ctx.Done())
	if cache.WaitForCacheSync(ctx.Done(), w.informer.HasSynced) {
		w.update()
	}
	<-ctx.Done()
	w.factory.Shutdown()
}

// Addresses returns the Service's addresses once it has been listed. It
// reads the store rather than what the change handler last saw, because
// handlers may lag behind the store right after the initial list.
func (w *ServiceWatcher) Addresses() ([]networkingv1.IngressLoadBalancerIngress, bool) {
	if !w.informer.HasSynced() {
		return nil, false
	}
	return w.fromStore(), true
}

func (w *ServiceWatcher) fromStore() []networkingv1.IngressLoadBalancerIngress {
	return FromService(w.service())
}

func (w *ServiceWatcher) service() *corev1.Service {
	obj, _, _ := w.informer.GetStore().GetByKey(w.key) // a cache store never errors
	svc, _ := obj.(*corev1.Service)
	return svc
}

// EndpointPorts returns the Service's ports that lead to nginx
// (ServicePorts) in NGINX Ingress Controller's format; ok is false when it
// has none, or is not known yet.
func (w *ServiceWatcher) EndpointPorts() (string, bool) {
	return w.portsOf(w.service())
}

// portsOf is EndpointPorts for svc.
func (w *ServiceWatcher) portsOf(svc *corev1.Service) (string, bool) {
	ports := ServicePorts(svc, w.httpPort, w.httpsPort)
	if len(ports) == 0 {
		return "", false
	}
	return EndpointPorts(ports), true
}
