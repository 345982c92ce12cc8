package kube

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	k8stesting "k8s.io/client-go/testing"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/source"
)

// fakeDynamic is a fake dynamic client for the custom resources that
// records the watches opened, since (like the typed fake) it loses what
// changes between a list and its watch.
type fakeDynamic struct {
	*dynamicfake.FakeDynamicClient
	mu      sync.Mutex
	watches map[string]int // by "resource namespace"
}

func newFakeDynamic(objs ...runtime.Object) *fakeDynamic {
	listKinds := map[schema.GroupVersionResource]string{}
	resources := map[schema.GroupVersionKind]schema.GroupVersionResource{}
	for _, g := range []*customGroup{nicGroup, gatewayGroup} {
		for _, k := range g.kinds {
			listKinds[g.gv.WithResource(k.resource)] = k.kind + "List"
			resources[g.gv.WithKind(k.kind)] = g.gv.WithResource(k.resource)
		}
	}
	f := &fakeDynamic{
		FakeDynamicClient: dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds),
		watches:           map[string]int{},
	}
	// Added under their resources: the fake would guess "gatewaies".
	for _, o := range objs {
		u := o.(*unstructured.Unstructured)
		if err := f.Tracker().Create(resources[u.GroupVersionKind()], u, u.GetNamespace()); err != nil {
			panic(err)
		}
	}
	f.PrependWatchReactor("*", func(action k8stesting.Action) (bool, watch.Interface, error) {
		w, err := f.Tracker().Watch(action.GetResource(), action.GetNamespace())
		if err == nil {
			f.mu.Lock()
			f.watches[action.GetResource().Resource+" "+action.GetNamespace()]++
			f.mu.Unlock()
		}
		return true, w, err
	})
	return f
}

func (f *fakeDynamic) waitWatch(t *testing.T, resource, ns string) {
	t.Helper()
	eventually(t, "a watch of "+resource+" in "+ns, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.watches[resource+" "+ns] > 0
	})
}

// advertise makes api's discovery serve the k8s.nginx.org/v1 resources.
func advertise(api *fakeAPI, resources ...string) {
	list := &metav1.APIResourceList{GroupVersion: nicv1.SchemeGroupVersion.String()}
	for _, r := range resources {
		list.APIResources = append(list.APIResources,
			metav1.APIResource{Name: r, Namespaced: true, Verbs: metav1.Verbs{"list", "watch"}},
			metav1.APIResource{Name: r + "/status", Namespaced: true})
	}
	api.Resources = append(api.Resources, list)
}

func allCustomResources() []string {
	var out []string
	for _, k := range customKinds {
		out = append(out, k.resource)
	}
	return out
}

// unstructuredVS is a VirtualServer as the API server would send it.
func unstructuredVS(ns, name, host string, generation int64) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(nicv1.SchemeGroupVersion.String())
	u.SetKind("VirtualServer")
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetGeneration(generation)
	u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl"}})
	_ = unstructured.SetNestedField(u.Object, host, "spec", "host")
	return u
}

var vsGVR = nicv1.SchemeGroupVersion.WithResource("virtualservers")

func TestCustomResourcesWatched(t *testing.T) {
	api := newFakeAPI(t)
	advertise(api, allCustomResources()...)
	dyn := newFakeDynamic()
	s, logs := startSource(t, api, Options{Namespaces: []string{"web", "shop"}, CustomResources: true, Dynamic: dyn})
	dyn.waitWatch(t, "virtualservers", "web")
	dyn.waitWatch(t, "virtualservers", "shop")
	if !strings.Contains(logs.String(), "watching custom resources") ||
		!strings.Contains(logs.String(), "resources=virtualservers,virtualserverroutes,policies,transportservers,globalconfigurations") {
		t.Fatalf("logs %q: want the watched custom resources named", logs.String())
	}

	// The first listing's signal is taken first: left pending, it could
	// be the one waitSignal takes once the VirtualServer is cached but
	// before its handler signals, and that later signal would then look
	// like the status update's.
	waitSignal(t, s, "the first listing", func(*source.Snapshot) bool { return true })

	ctx := context.Background()
	// Outside the watched namespaces: never listed, never in a snapshot.
	if _, err := dyn.Resource(vsGVR).Namespace("other").Create(ctx, unstructuredVS("other", "hidden", "hidden.example.com", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(vsGVR).Namespace("web").Create(ctx, unstructuredVS("web", "shop", "shop.example.com", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, s, "the VirtualServer", func(snap *source.Snapshot) bool { return len(snap.VirtualServers) > 0 })
	snap := s.Snapshot()
	if len(snap.VirtualServers) != 1 {
		t.Fatalf("VirtualServers %+v: want only the one in a watched namespace", snap.VirtualServers)
	}
	vs := snap.VirtualServers[0]
	if vs.Namespace != "web" || vs.Name != "shop" || vs.Spec.Host != "shop.example.com" {
		t.Fatalf("VirtualServer %+v: want web/shop for shop.example.com, typed", vs)
	}
	if vs.ManagedFields != nil {
		t.Fatalf("managed fields kept: %+v", vs.ManagedFields)
	}
	if len(snap.Problems) != 0 {
		t.Fatalf("problems %+v", snap.Problems)
	}

	// A status-only update (same generation) signals nothing; a spec
	// change, which bumps the generation, does.
	drain(s)
	withStatus := unstructuredVS("web", "shop", "shop.example.com", 1)
	_ = unstructured.SetNestedField(withStatus.Object, "Valid", "status", "state")
	if _, err := dyn.Resource(vsGVR).Namespace("web").Update(ctx, withStatus, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the status in the cache", func() bool {
		vss := s.Snapshot().VirtualServers
		return len(vss) == 1 && vss[0].Status.State == "Valid"
	})
	select {
	case <-s.Changed():
		t.Fatal("a status-only update signalled a change")
	case <-time.After(100 * time.Millisecond):
	}
	if _, err := dyn.Resource(vsGVR).Namespace("web").Update(ctx, unstructuredVS("web", "shop", "new.example.com", 2), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, s, "the new host", func(snap *source.Snapshot) bool {
		return len(snap.VirtualServers) == 1 && snap.VirtualServers[0].Spec.Host == "new.example.com"
	})
}

// Without the CRDs the source syncs all the same, and says why the
// custom resources are off.
func TestCustomResourcesNotInstalled(t *testing.T) {
	api := newFakeAPI(t)
	dyn := newFakeDynamic()
	s, logs := startSource(t, api, Options{CustomResources: true, Dynamic: dyn})
	if !strings.Contains(logs.String(), "custom resources off: the k8s.nginx.org CRDs are not installed (kubectl apply -k deploy/crds") {
		t.Fatalf("logs %q: want the reason custom resources are off", logs.String())
	}
	if n := len(dyn.Actions()); n != 0 {
		t.Fatalf("%d requests to the dynamic client, want none: %v", n, dyn.Actions())
	}
	if snap := s.Snapshot(); snap.VirtualServers != nil {
		t.Fatalf("VirtualServers %+v", snap.VirtualServers)
	}
}

// Only the resources the API server serves are watched (an older CRD
// set, say); the log names the missing ones.
func TestCustomResourcesPartlyInstalled(t *testing.T) {
	api := newFakeAPI(t)
	advertise(api, "virtualservers", "policies")
	dyn := newFakeDynamic(unstructuredVS("default", "a", "a.example.com", 1))
	s, logs := startSource(t, api, Options{CustomResources: true, Dynamic: dyn})
	if snap := s.Snapshot(); len(snap.VirtualServers) != 1 {
		t.Fatalf("VirtualServers %+v: want the one listed at start", snap.VirtualServers)
	}
	if !strings.Contains(logs.String(), `resources=virtualservers,policies notInstalled=virtualserverroutes,transportservers,globalconfigurations`) {
		t.Fatalf("logs %q: want the watched and the missing resources", logs.String())
	}
	for _, a := range dyn.Actions() {
		if r := a.GetResource().Resource; r != "virtualservers" && r != "policies" {
			t.Fatalf("request for %s, which is not served", r)
		}
	}
}

// A custom resource that does not fit the Go type is a problem, not a
// stuck informer.
func TestCustomResourceUnreadable(t *testing.T) {
	api := newFakeAPI(t)
	advertise(api, "virtualservers")
	bad := unstructuredVS("default", "bad", "", 1)
	_ = unstructured.SetNestedField(bad.Object, int64(3), "spec", "host")
	dyn := newFakeDynamic(bad, unstructuredVS("default", "good", "good.example.com", 1))
	s, _ := startSource(t, api, Options{CustomResources: true, Dynamic: dyn})
	snap := s.Snapshot()
	if len(snap.VirtualServers) != 1 || snap.VirtualServers[0].Name != "good" {
		t.Fatalf("VirtualServers %+v: want the readable one", snap.VirtualServers)
	}
	if len(snap.Problems) != 1 || snap.Problems[0].Where != "VirtualServer/default/bad" {
		t.Fatalf("problems %+v: want one for VirtualServer/default/bad", snap.Problems)
	}
}

func TestNewNeedsDynamicAndMetadataClients(t *testing.T) {
	if _, err := New(Options{Client: newFakeAPI(t), CustomResources: true}); err == nil {
		t.Fatal("custom resources without a dynamic client must be refused")
	}
	if _, err := New(Options{Client: newFakeAPI(t), CustomResources: true, Dynamic: newFakeDynamic()}); err == nil {
		t.Fatal("custom resources without a metadata client must be refused")
	}
}

// TestPodsFromMetadata: with the custom resources, Pods are listed and
// watched by their metadata alone, and reach the snapshot as Pods with
// their namespace, name and labels.
func TestPodsFromMetadata(t *testing.T) {
	pod := func(name, version string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, Labels: map[string]string{"app": "tea", "version": version},
				Annotations: map[string]string{"big": strings.Repeat("x", 1000)}}}
	}
	scheme := metadatafake.NewTestScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	meta := metadatafake.NewSimpleMetadataClient(scheme, pod("tea-0", "v1"))
	s, _ := startSource(t, newFakeAPI(t), Options{CustomResources: true, Dynamic: newFakeDynamic(), Metadata: meta})
	podsGVR := corev1.SchemeGroupVersion.WithResource("pods")
	if _, err := meta.Resource(podsGVR).Namespace("shop").(metadatafake.MetadataClient).CreateFake(pod("tea-1", "v2"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "both Pods, trimmed", func() bool {
		pods := s.Snapshot().Pods
		if len(pods) != 2 {
			return false
		}
		for _, p := range pods {
			if p.Namespace != "shop" || p.Labels["app"] != "tea" || p.Annotations != nil {
				return false
			}
		}
		return true
	})
}

// switchableDiscovery serves the k8s.nginx.org/v1 resources (or those of
// gv when set) a test sets while the source runs.
type switchableDiscovery struct {
	*fakediscovery.FakeDiscovery
	gv        schema.GroupVersion
	mu        sync.Mutex
	resources []string
}

func (d *switchableDiscovery) set(resources ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.resources = resources
}

func (d *switchableDiscovery) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	want := d.gv
	if want.Empty() {
		want = nicv1.SchemeGroupVersion
	}
	if gv != want.String() || len(d.resources) == 0 {
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: want.Group}, "")
	}
	list := &metav1.APIResourceList{GroupVersion: gv}
	for _, r := range d.resources {
		list.APIResources = append(list.APIResources, metav1.APIResource{Name: r, Namespaced: r != "gatewayclasses"})
	}
	return list, nil
}

// discoveryAPI is a fake API whose discovery the test switches.
type discoveryAPI struct {
	*fakeAPI
	d *switchableDiscovery
}

func (a discoveryAPI) Discovery() discovery.DiscoveryInterface { return a.d }

// TestCustomResourcesRediscovered: CRDs installed while the controller
// runs are watched from the next discovery on, and ones removed stop
// being watched, without a restart.
func TestCustomResourcesRediscovered(t *testing.T) {
	api := newFakeAPI(t)
	d := &switchableDiscovery{FakeDiscovery: api.Discovery().(*fakediscovery.FakeDiscovery)}
	dyn := newFakeDynamic(unstructuredVS("web", "shop", "shop.example.com", 1))
	s, logs := startSource(t, api, Options{Client: discoveryAPI{api, d}, Namespaces: []string{"web"}, CustomResources: true, Dynamic: dyn,
		RediscoverEvery: 20 * time.Millisecond})
	eventually(t, "the first sync", s.HasSynced)
	if !strings.Contains(logs.String(), "custom resources off") || len(s.Snapshot().VirtualServers) != 0 {
		t.Fatalf("without the CRDs: logs %q, VirtualServers %v", logs.String(), s.Snapshot().VirtualServers)
	}
	d.set("virtualservers")
	waitSignal(t, s, "the VirtualServer once its CRD is installed", func(snap *source.Snapshot) bool { return len(snap.VirtualServers) == 1 })
	if !strings.Contains(logs.String(), "resources=virtualservers ") {
		t.Errorf("logs %q: want the newly watched resources named", logs.String())
	}
	d.set()
	waitSignal(t, s, "no VirtualServer once its CRD is removed", func(snap *source.Snapshot) bool { return len(snap.VirtualServers) == 0 })
}
