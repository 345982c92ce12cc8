package kube

import (
	"context"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
)

// shareIngress is an Ingress as the API server would send it: every
// call decodes anew, so nothing is shared with an earlier call's.
func shareIngress(uid string, gen int64, host string, annotations map[string]string) *networkingv1.Ingress {
	prefix := networkingv1.PathTypePrefix
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: strings.Clone("shop"), Name: strings.Clone("web"), UID: types.UID(strings.Clone(uid)), Generation: gen,
			Labels: map[string]string{"app": "web"}, Annotations: annotations},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: host,
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "/", PathType: &prefix,
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web",
					Port: networkingv1.ServiceBackendPort{Number: 80}}},
			}}}}}}},
	}
}

func mapData(m map[string]string) unsafe.Pointer { return reflect.ValueOf(m).UnsafePointer() }

// TestShareUnchanged: an update takes the cached version's spec, labels
// and annotations wherever they are equal, and nothing else: a changed
// part, another object under the same name (a new UID), another kind.
func TestShareUnchanged(t *testing.T) {
	cors := func(v string) map[string]string {
		return map[string]string{"nginx.ingress.kubernetes.io/enable-cors": v}
	}
	for _, tc := range []struct {
		name                          string
		obj                           any
		spec, labels, annotationsKept bool
	}{
		{"status only", shareIngress("u1", 1, "a.example", cors("true")), true, true, true},
		{"spec changed (new generation)", shareIngress("u1", 2, "b.example", cors("true")), false, true, true},
		{"annotation changed", shareIngress("u1", 1, "a.example", cors("false")), true, true, false},
		{"equal generation, unequal spec", shareIngress("u1", 1, "b.example", cors("true")), false, true, true},
		{"recreated (another UID)", shareIngress("u2", 1, "a.example", cors("true")), false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cached := shareIngress("u1", 1, "a.example", cors("true"))
			want := tc.obj.(*networkingv1.Ingress).DeepCopy()
			shareUnchanged(cached, tc.obj)
			got := tc.obj.(*networkingv1.Ingress)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("sharing changed the object:\n got %+v\nwant %+v", got, want)
			}
			if shared := unsafe.SliceData(got.Spec.Rules) == unsafe.SliceData(cached.Spec.Rules); shared != tc.spec {
				t.Errorf("spec shared %v, want %v", shared, tc.spec)
			}
			// The namespace, name and UID go with the labels: shared
			// whenever the UID is the same.
			if shared := unsafe.StringData(got.Name) == unsafe.StringData(cached.Name) &&
				unsafe.StringData(got.Namespace) == unsafe.StringData(cached.Namespace) &&
				unsafe.StringData(string(got.UID)) == unsafe.StringData(string(cached.UID)); shared != tc.labels {
				t.Errorf("namespace, name and UID shared %v, want %v", shared, tc.labels)
			}
			if shared := mapData(got.Labels) == mapData(cached.Labels); shared != tc.labels {
				t.Errorf("labels shared %v, want %v", shared, tc.labels)
			}
			if shared := mapData(got.Annotations) == mapData(cached.Annotations); shared != tc.annotationsKept {
				t.Errorf("annotations shared %v, want %v", shared, tc.annotationsKept)
			}
		})
	}
	// Another kind under the same name and UID is not the same object.
	vs := &nicv1.VirtualServer{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "u1",
		Labels: map[string]string{"app": "web"}}}
	labels := mapData(vs.Labels)
	shareUnchanged(shareIngress("u1", 1, "a.example", nil), vs)
	if mapData(vs.Labels) != labels {
		t.Error("a VirtualServer took an Ingress's labels")
	}
}

// TestSharingInformer: through a real informer, the version a status
// write brings back holds the spec and annotations of the one cached
// before it, and the store shows the new status.
func TestSharingInformer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := fake.NewSimpleClientset()
	inf := informers.NewSharedInformerFactory(client, 0).Networking().V1().Ingresses().Informer()
	if err := inf.SetTransform(sharing(inf.GetIndexer(), trim)); err != nil {
		t.Fatal(err)
	}
	go inf.Run(ctx.Done())
	ing := shareIngress("u1", 1, "a.example", map[string]string{"nginx.ingress.kubernetes.io/enable-cors": "true"})
	if _, err := client.NetworkingV1().Ingresses("shop").Create(ctx, ing, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cachedWhere := func(ok func(*networkingv1.Ingress) bool) *networkingv1.Ingress {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if obj, found, _ := inf.GetIndexer().GetByKey("shop/web"); found && ok(obj.(*networkingv1.Ingress)) {
				return obj.(*networkingv1.Ingress)
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Fatal("the informer never cached the expected version")
		return nil
	}
	first := cachedWhere(func(*networkingv1.Ingress) bool { return true })
	ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.1"}}
	if _, err := client.NetworkingV1().Ingresses("shop").UpdateStatus(ctx, ing, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	second := cachedWhere(func(i *networkingv1.Ingress) bool { return len(i.Status.LoadBalancer.Ingress) == 1 })
	if second == first {
		t.Fatal("the update did not bring a new object")
	}
	if unsafe.SliceData(second.Spec.Rules) != unsafe.SliceData(first.Spec.Rules) {
		t.Error("the status write brought back a second copy of the spec")
	}
	if mapData(second.Annotations) != mapData(first.Annotations) {
		t.Error("the status write brought back a second copy of the annotations")
	}
	if !reflect.DeepEqual(second.Spec, ing.Spec) {
		t.Errorf("cached spec %+v, want %+v", second.Spec, ing.Spec)
	}
}

// TestSharingCustom: through a custom resource's transform (the dynamic
// client's unstructured object made typed), a status-only update of a
// VirtualServer takes the cached version's spec; a changed spec does not.
func TestSharingCustom(t *testing.T) {
	s := &Source{opts: Options{Log: slog.New(slog.DiscardHandler)}}
	k := nicGroup.kinds[slices.IndexFunc(nicGroup.kinds, func(k customKind) bool { return k.kind == "VirtualServer" })]
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, nil)
	transform := sharing(store, func(obj any) (any, error) { return s.toTyped(obj, k), nil })
	decoded := func(gen int64, host, ip string) any {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "k8s.nginx.org/v1", "kind": "VirtualServer",
			"metadata": map[string]any{"namespace": "shop", "name": "web", "uid": "u1", "generation": gen},
			"spec":     map[string]any{"host": host, "policies": []any{map[string]any{"name": "rate"}}},
			"status":   map[string]any{"externalEndpoints": []any{map[string]any{"ip": ip}}},
		}}
	}
	first, err := transform(decoded(1, "shop.example", ""))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Add(first); err != nil {
		t.Fatal(err)
	}
	cached := first.(*nicv1.VirtualServer)
	for _, tc := range []struct {
		name   string
		obj    any
		shared bool
	}{
		{"status only", decoded(1, "shop.example", "192.0.2.1"), true},
		{"spec changed", decoded(2, "other.example", "192.0.2.1"), false},
	} {
		got, err := transform(tc.obj)
		if err != nil {
			t.Fatal(err)
		}
		vs, ok := got.(*nicv1.VirtualServer)
		if !ok {
			t.Fatalf("%s: transformed to %T", tc.name, got)
		}
		if shared := unsafe.SliceData(vs.Spec.Policies) == unsafe.SliceData(cached.Spec.Policies); shared != tc.shared {
			t.Errorf("%s: spec shared %v, want %v", tc.name, shared, tc.shared)
		}
		if len(vs.Status.ExternalEndpoints) != 1 || vs.Status.ExternalEndpoints[0].IP != "192.0.2.1" {
			t.Errorf("%s: status %+v, want the update's", tc.name, vs.Status)
		}
	}
}
