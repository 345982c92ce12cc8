package kube

import (
	"fmt"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// TestBucketedIndex: with more hosts than buckets, so that buckets are
// shared, a host's lookup gives exactly the Ingresses with a rule for it,
// after adds, an update that moves a host, and a delete.
func TestBucketedIndex(t *testing.T) {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{hostIndex: bucketed(ingressHosts)})
	ing := func(name string, hosts ...string) *networkingv1.Ingress {
		i := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
		for _, h := range hosts {
			i.Spec.Rules = append(i.Spec.Rules, networkingv1.IngressRule{Host: h})
		}
		return i
	}
	const n = 3 * indexBuckets
	for i := range n {
		if err := idx.Add(ing(fmt.Sprint("i", i), fmt.Sprintf("h%d.test", i), "shared.test")); err != nil {
			t.Fatal(err)
		}
	}
	names := func(host string) map[string]bool {
		out := map[string]bool{}
		for _, obj := range inBucket(idx, hostIndex, host, ingressHosts) {
			out[obj.(*networkingv1.Ingress).Name] = true
		}
		return out
	}
	for i := range n {
		if got := names(fmt.Sprintf("h%d.test", i)); len(got) != 1 || !got[fmt.Sprint("i", i)] {
			t.Fatalf("h%d.test: %v, want i%d alone", i, got, i)
		}
	}
	if got := names("shared.test"); len(got) != n {
		t.Fatalf("shared.test: %d Ingresses, want %d", len(got), n)
	}
	if got := names("nobody.test"); len(got) != 0 {
		t.Fatalf("nobody.test: %v, want none", got)
	}
	if err := idx.Update(ing("i7", "moved.test")); err != nil {
		t.Fatal(err)
	}
	if err := idx.Delete(ing("i8")); err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]int{"h7.test": 0, "moved.test": 1, "h8.test": 0, "shared.test": n - 2} {
		if got := names(host); len(got) != want {
			t.Errorf("%s: %v, want %d", host, got, want)
		}
	}
}

// TestNoNamespaceIndex: the informers of the kinds a cluster has thousands
// of keep only the source's own indexes, not the factory's namespace
// index (a set entry per object, which nothing here reads), in every
// watched namespace.
func TestNoNamespaceIndex(t *testing.T) {
	s, err := New(Options{Client: newFakeAPI(t), Namespaces: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		kind  string
		infs  []cache.SharedIndexInformer
		index string
	}{{"Ingress", s.ingresses, hostIndex}, {"Service", s.services, ""}, {"EndpointSlice", s.slices, serviceIndex}} {
		if len(c.infs) != 2 {
			t.Fatalf("%s: %d informers, want one per namespace", c.kind, len(c.infs))
		}
		for _, inf := range c.infs {
			idx := inf.GetIndexer().GetIndexers()
			if _, ok := idx[cache.NamespaceIndex]; ok {
				t.Errorf("%s: the namespace index is kept", c.kind)
			}
			if _, ok := idx[c.index]; c.index != "" && !ok {
				t.Errorf("%s: index %q missing: %v", c.kind, c.index, idx)
			}
		}
	}
}
