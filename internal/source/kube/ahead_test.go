package kube

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/causeway/causeway/internal/source"
)

// SnapshotAhead, from the caches' indexes, holds exactly what
// source.Ahead finds by scanning a whole Snapshot, for a row per case.
func TestSnapshotAheadIsAhead(t *testing.T) {
	ing := func(ns, name string, hosts ...string) *networkingv1.Ingress {
		i := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		for _, h := range hosts {
			i.Spec.Rules = append(i.Spec.Rules, networkingv1.IngressRule{Host: h, IngressRuleValue: networkingv1.IngressRuleValue{
				HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{Path: "/",
					Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: name}}}}}}})
		}
		return i
	}
	var objs []runtime.Object
	for _, o := range []*networkingv1.Ingress{ing("shop", "web", "web.test"), ing("shop", "api", "api.test", "web.test"),
		ing("blog", "web", "blog.test"), ing("blog", "other", "other.test"), ing("shop", "nohost", "")} {
		objs = append(objs, o,
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: o.Namespace, Name: o.Name}},
			&discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: o.Namespace, Name: o.Name + "-1",
				Labels: map[string]string{discoveryv1.LabelServiceName: o.Name}}})
	}
	objs = append(objs, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "tls"}})
	s, _ := runSynced(t, fake.NewSimpleClientset(objs...))
	// services names each Ingress's own Service, as its paths do.
	services := func(ings []*networkingv1.Ingress) map[string]bool {
		out := map[string]bool{}
		for _, i := range ings {
			out[i.Namespace+"/"+i.Name] = true
		}
		return out
	}
	names := func(snap *source.Snapshot) string {
		var out []string
		for _, i := range snap.Ingresses {
			out = append(out, "ing:"+i.Namespace+"/"+i.Name)
		}
		for _, sv := range snap.Services {
			out = append(out, "svc:"+sv.Namespace+"/"+sv.Name)
		}
		for _, es := range snap.EndpointSlices {
			out = append(out, "es:"+es.Namespace+"/"+es.Name)
		}
		for _, sec := range snap.Secrets {
			out = append(out, "secret:"+sec.Namespace+"/"+sec.Name)
		}
		slices.Sort(out)
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		keys []string
		want string
	}{
		{[]string{"shop/web"}, "es:shop/api-1 es:shop/web-1 ing:shop/api ing:shop/web secret:shop/tls svc:shop/api svc:shop/web"},
		{[]string{"blog/web"}, "es:blog/web-1 ing:blog/web secret:shop/tls svc:blog/web"},
		{[]string{"blog/gone"}, "secret:shop/tls"},
		{[]string{"blog/other", "shop/nohost"}, "es:blog/other-1 es:shop/nohost-1 ing:blog/other ing:shop/nohost secret:shop/tls svc:blog/other svc:shop/nohost"},
	} {
		keys := map[string]bool{}
		for _, k := range c.keys {
			keys[k] = true
		}
		got, scanned := names(s.SnapshotAhead(keys, services)), names(source.Ahead(s.Snapshot(), keys, services))
		if got != c.want || scanned != c.want {
			t.Errorf("%v:\nindexes %s\nscan    %s\nwant    %s", c.keys, got, scanned, c.want)
		}
	}
}
