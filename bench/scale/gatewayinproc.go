package main

import (
	"fmt"
	"os"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/class"
	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/render"
	"github.com/causeway/causeway/internal/source"
)

// inProcessGateway times, side by side in this process, the model build
// and render of n Ingresses and of n HTTPRoutes spread over gateways
// Gateways (one HTTP listener each), with the same hosts, paths and
// Services, and of one route changed (its host), as a sync does
// (issue 34: 10,000 HTTPRoutes over 100 Gateways' listeners).
func inProcessGateway(n, shapes, gateways, rounds int) error {
	base := &source.Snapshot{}
	for i := range n {
		base.Services = append(base.Services, service(namespace, i))
		base.EndpointSlices = append(base.EndpointSlices, endpointSlice(namespace, i, "192.0.2.10", 8080))
	}
	ing := *base
	for i := range n {
		ing.Ingresses = append(ing.Ingresses, ingress(namespace, i, shapes, 0))
	}
	gw := *base
	gw.GatewayClasses = []*gwv1.GatewayClass{{ObjectMeta: metav1.ObjectMeta{Name: "causeway"},
		Spec: gwv1.GatewayClassSpec{ControllerName: gateway.ControllerName}}}
	for g := range gateways {
		gw.Gateways = append(gw.Gateways, gatewayObject(namespace, g, 10000+g))
	}
	for i := range n {
		gw.HTTPRoutes = append(gw.HTTPRoutes, httpRoute(namespace, i, shapes, gateways))
	}
	opts := build.Options{Class: class.Options{ControllerName: "causeway.io/ingress-controller", IngressClass: "causeway"},
		AnnotationsPrefix: "nginx.ingress.kubernetes.io", LuaAvailable: true, HTTPPort: 80, HTTPSPort: 443}
	params := render.Params{StateDir: layout.Dir(os.TempDir()), HTTPPort: 80, HTTPSPort: 443,
		Dynamic: &render.Dynamic{Modules: []string{"/usr/lib/nginx/modules/ndk_http_module.so", "/usr/lib/nginx/modules/ngx_http_lua_module.so"}}}
	type result struct {
		builds, renders []time.Duration
		size            int
		servers         int
	}
	measure := func(snap *source.Snapshot, change func(r int)) (result, error) {
		var res result
		var memo render.Memo
		for r := range rounds + 1 {
			change(r)
			start := time.Now()
			m, _ := build.Build(snap, opts)
			built := time.Now()
			out, err := memo.Render(m, params)
			if err != nil {
				return res, err
			}
			if r == 0 {
				for _, f := range out.Files {
					res.size += len(f)
				}
				res.servers = len(m.Servers)
				continue
			}
			res.builds, res.renders = append(res.builds, built.Sub(start)), append(res.renders, time.Since(built))
		}
		return res, nil
	}
	ingRes, err := measure(&ing, func(r int) {
		i := ingress(namespace, 0, shapes, 0)
		i.Spec.Rules[0].Host = fmt.Sprintf("changed-%d.bench.test", r)
		ing.Ingresses[0] = i
	})
	if err != nil {
		return err
	}
	gwRes, err := measure(&gw, func(r int) {
		rt := httpRoute(namespace, 0, shapes, gateways)
		rt.Spec.Hostnames = []gwv1.Hostname{gwv1.Hostname(fmt.Sprintf("changed-%d.bench.test", r))}
		gw.HTTPRoutes[0] = rt
	})
	if err != nil {
		return err
	}
	median := func(d []time.Duration) time.Duration {
		d = slices.Clone(d)
		slices.Sort(d)
		return d[len(d)/2]
	}
	fmt.Printf("In process: %d Ingresses, and %d HTTPRoutes over %d Gateways (one HTTP listener each), the same hosts, paths (%d layouts) and Services; one host changed per round, median of %d rounds\n\n",
		n, n, gateways, shapes, rounds)
	fmt.Println("| objects | servers | files | model build | render (memo: digest and render) | build + render | vs Ingresses |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|")
	row := func(what string, r result) {
		total := median(r.builds) + median(r.renders)
		fmt.Printf("| %s | %d | %.1f MiB | %s | %s | %s | %.2f× |\n", what, r.servers, float64(r.size)/(1<<20), median(r.builds).Round(time.Millisecond),
			median(r.renders).Round(time.Millisecond), total.Round(time.Millisecond),
			float64(total)/float64(median(ingRes.builds)+median(ingRes.renders)))
	}
	row(fmt.Sprintf("%d Ingresses", n), ingRes)
	row(fmt.Sprintf("%d HTTPRoutes, %d Gateways", n, gateways), gwRes)
	return nil
}

// httpRoute is HTTPRoute i of ns: Ingress i's host, paths and Service,
// on Gateway i%gateways of ns.
func httpRoute(ns string, i, shapes, gateways int) *gwv1.HTTPRoute {
	rule := func(p string) gwv1.HTTPRouteRule {
		return gwv1.HTTPRouteRule{
			Matches: []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Type: ptr.To(gwv1.PathMatchPathPrefix), Value: ptr.To(p)}}},
			BackendRefs: []gwv1.HTTPBackendRef{{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{
				Name: gwv1.ObjectName(name(i)), Port: ptr.To(gwv1.PortNumber(80))}}}},
		}
	}
	return &gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name(i)},
		Spec: gwv1.HTTPRouteSpec{
			CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{Name: gwv1.ObjectName(gatewayName(i % gateways))}}},
			Hostnames:       []gwv1.Hostname{gwv1.Hostname(host(i))},
			Rules:           []gwv1.HTTPRouteRule{rule("/"), rule(fmt.Sprintf("/s%d", i%shapes))},
		}}
}

func gatewayName(g int) string { return fmt.Sprintf("gw-%03d", g) }

// gatewayObject is Gateway g of ns, of GatewayClass causeway, with one
// HTTP listener on port.
func gatewayObject(ns string, g, port int) *gwv1.Gateway {
	return &gwv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: gatewayName(g)},
		Spec: gwv1.GatewaySpec{GatewayClassName: "causeway", Listeners: []gwv1.Listener{{Name: "http", Port: gwv1.PortNumber(port), Protocol: gwv1.HTTPProtocolType}}}}
}
