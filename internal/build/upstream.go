package build

import (
	"net/netip"
	"reflect"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/causeway/causeway/internal/frontend/ingress"
	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/model"
)

// clusterIPSuffix marks the backend key of a Service reached through its
// cluster IP (service-upstream) rather than its endpoints; both may be in
// use at once by different Ingresses.
const clusterIPSuffix = "@cluster-ip"

// clusterIPBackend turns a resolved backend into one whose only endpoint
// is the Service's cluster IP and port (ingress-nginx's service-upstream,
// a VirtualServer upstream's use-cluster-ip, which what names): kube-proxy
// then spreads the connections. A headless Service has no cluster IP; its
// endpoints are kept, with a Problem.
func (b *builder) clusterIPBackend(ref model.ObjectRef, be *model.Backend, what string) *model.Backend {
	svc := b.idx.service(be.Namespace, be.Service)
	e, ok := clusterIPEndpoint(svc, be.Port)
	if !ok {
		b.problem(ref, unsupportedReason(ref), false, "%s: Service %s/%s has no cluster IP (%q); its endpoints are used",
			what, be.Namespace, be.Service, model.Truncate(svc.Spec.ClusterIP))
		return be
	}
	out := *be
	out.Key = be.Key + clusterIPSuffix
	out.Endpoints = []model.Endpoint{e}
	return &out
}

// clusterIPEndpoint is the one endpoint of a backend on svc's port (a
// Service port's name or number, as model.Backend.Port) reached through
// its cluster IP; false for a headless Service.
func clusterIPEndpoint(svc *corev1.Service, port string) (model.Endpoint, bool) {
	ip, err := netip.ParseAddr(svc.Spec.ClusterIP)
	if err != nil {
		return model.Endpoint{}, false
	}
	var n int32
	for _, p := range svc.Spec.Ports {
		if p.Name == port || port == strconv.Itoa(int(p.Port)) {
			n = p.Port
		}
	}
	return model.Endpoint{Address: ip.String(), Port: n}, true
}

// unsupportedReason is the Problem reason of a setting that is not used:
// an Ingress's come from annotations.
func unsupportedReason(ref model.ObjectRef) string {
	if ref.Kind == "Ingress" {
		return model.ReasonUnsupportedAnnotation
	}
	return model.ReasonUnsupported
}

// ingressBalance applies an Ingress's balancing annotations to a backend.
func (b *builder) ingressBalance(t *ingress.Translation, be *model.Backend) {
	want := t.Annotations.Balance
	if want == nil {
		return
	}
	b.claimBalance(t.Ref, "balancing annotations "+strings.Join(want.Keys, ", "), be,
		model.Balance{Method: want.Method, HashKey: want.HashKey, Sticky: want.Sticky})
}

// claimBalance applies the balancing an object asks for (what names its
// fields) to a backend whose Service sets none of Causeway's own: the
// oldest object (Ingress or VirtualServer) that sets it wins for the
// backend, as in ingress-nginx, and a younger one that asks for something
// else gets a Problem. The backend keeps its retries.
func (b *builder) claimBalance(ref model.ObjectRef, what string, be *model.Backend, bal model.Balance) {
	if svc := b.idx.service(be.Namespace, be.Service); svc != nil && hasOwnBalance(svc.Annotations) {
		b.problem(ref, unsupportedReason(ref), false,
			"%s: Service %s/%s sets causeway.io/load-balance, which takes precedence; ignored", what, be.Namespace, be.Service)
		return
	}
	bal.Retries = be.Balance.Retries
	if b.claim(b.balanceOwner, ref, what, be, !reflect.DeepEqual(be.Balance, bal)) {
		be.Balance = bal
	}
}

// claim makes ref the owner of a setting of be in owners when it has
// none and reports true; else false, with a Collision Problem when ref
// is not the owner and asks for something else (differs).
func (b *builder) claim(owners map[string]model.ObjectRef, ref model.ObjectRef, what string, be *model.Backend, differs bool) bool {
	if owner, ok := owners[be.Key]; ok {
		if owner != ref && differs {
			b.problem(ref, model.ReasonCollision, false,
				"%s for Service %s/%s port %s are already set differently by %s, %s; ignored",
				what, be.Namespace, be.Service, be.Port, owner, b.whyFirst(owner, ref))
		}
		return false
	}
	owners[be.Key] = ref
	return true
}

// claimLimits applies the peer limits an object asks for (what names its
// fields) to a backend, as claimBalance does balancing: the oldest object
// that sets them wins for the backend (a Service port), and a younger one
// that asks for others gets a Problem.
func (b *builder) claimLimits(ref model.ObjectRef, what string, be *model.Backend, l model.PeerLimits) {
	if b.claim(b.limitsOwner, ref, what, be, be.Limits != l) {
		be.Limits = l
	}
}

// claimKeepalive applies the pool an object asks for to a backend, as
// claimLimits does the peer limits. nginx allocates every pool when it
// loads the configuration, so the pools together hold at most
// model.MaxKeepaliveTotal idle connections: one per size with the Lua
// balancer (render's keepaliveUpstreams), one per backend without it. An
// ask that would go over leaves the backend in the ConfigMap's pool, with
// a Problem; objects come oldest first.
func (b *builder) claimKeepalive(ref model.ObjectRef, what string, be *model.Backend, k model.Keepalive) {
	pool := be.Key
	if b.opts.LuaAvailable {
		pool = strconv.Itoa(k.Idle)
	}
	_, owned := b.keepaliveOwner[be.Key]
	if !owned && !b.keepalivePools[pool] && b.keepaliveTotal+k.Idle > model.MaxKeepaliveTotal {
		b.problem(ref, model.ReasonUnsupported, false,
			"%s %d: the upstreams' own pools would keep over %d idle connections per nginx worker together; "+
				"Service %s/%s port %s keeps the ConfigMap's pool (upstream-keepalive-connections)",
			what, k.Idle, model.MaxKeepaliveTotal, be.Namespace, be.Service, be.Port)
		return
	}
	if b.claim(b.keepaliveOwner, ref, what, be, be.Keepalive != k) {
		be.Keepalive = k
		if !b.keepalivePools[pool] {
			b.keepalivePools[pool] = true
			b.keepaliveTotal += k.Idle
		}
	}
}

// hasOwnBalance reports whether a Service sets Causeway's own balancing.
func hasOwnBalance(a map[string]string) bool {
	_, ok := a[AnnotationLoadBalance]
	return ok
}

// defaultBackendService resolves --default-backend-service, "" when it is
// unset or cannot serve (with a Problem naming the Service).
func (b *builder) defaultBackendService() string {
	v := b.opts.DefaultBackendService
	if v == "" {
		return ""
	}
	ns, rest, _ := strings.Cut(v, "/")
	name, port, _ := strings.Cut(rest, ":")
	ref := model.ObjectRef{Kind: "Service", Namespace: ns, Name: name}
	return b.serviceBackend(ref, ns, &annotations.ServiceRef{Name: name, Port: port}, "--default-backend-service")
}
