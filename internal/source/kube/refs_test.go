package kube

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/causeway/causeway/internal/source"
)

// The fake clientset ignores field selectors. fakeAPI applies them to the
// lists and watches of ConfigMaps and Secrets as an API server would, and
// records every such request, so that tests see what reaches memory and
// which requests the source makes.
type fakeAPI struct {
	*fake.Clientset
	mu       sync.Mutex
	requests []string       // "verb resource namespace fieldSelector"
	watches  map[string]int // watches opened, by "resource namespace fieldSelector"
}

func newFakeAPI(t *testing.T, objs ...runtime.Object) *fakeAPI {
	f := &fakeAPI{Clientset: fake.NewClientset(objs...), watches: map[string]int{}}
	for _, resource := range []string{"configmaps", "secrets"} {
		f.PrependReactor("list", resource, func(action k8stesting.Action) (bool, runtime.Object, error) {
			la := action.(k8stesting.ListAction)
			sel := la.GetListRestrictions().Fields
			f.record("list", resource, action.GetNamespace(), sel)
			handled, obj, err := k8stesting.ObjectReaction(f.Tracker())(action)
			if err != nil || !handled {
				return handled, obj, err
			}
			items, err := meta.ExtractList(obj)
			if err != nil {
				return true, nil, err
			}
			var kept []runtime.Object
			for _, it := range items {
				if matches(sel, it) {
					kept = append(kept, it)
				}
			}
			if err := meta.SetList(obj, kept); err != nil {
				return true, nil, err
			}
			return true, obj, nil
		})
		f.PrependWatchReactor(resource, func(action k8stesting.Action) (bool, watch.Interface, error) {
			wa := action.(k8stesting.WatchAction)
			sel := wa.GetWatchRestrictions().Fields
			w, err := f.Tracker().Watch(action.GetResource(), action.GetNamespace())
			if err != nil {
				return true, nil, err
			}
			f.record("watch", resource, action.GetNamespace(), sel)
			return true, newFilterWatch(w, sel), nil
		})
	}
	f.PrependWatchReactor("ingresses", func(action k8stesting.Action) (bool, watch.Interface, error) {
		w, err := f.Tracker().Watch(action.GetResource(), action.GetNamespace())
		if err == nil {
			f.record("watch", "ingresses", action.GetNamespace(), fields.Everything())
		}
		return true, w, err
	})
	return f
}

func (f *fakeAPI) record(verb, resource, ns string, sel fields.Selector) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, fmt.Sprintf("%s %s %s %s", verb, resource, ns, sel))
	if verb == "watch" {
		f.watches[fmt.Sprintf("%s %s %s", resource, ns, sel)]++
	}
}

func (f *fakeAPI) recorded() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.requests...)
}

// waitWatch waits until a watch of resource in ns with the selector is
// open, since the fake loses what changes between a list and its watch.
func (f *fakeAPI) waitWatch(t *testing.T, resource, ns, sel string) {
	t.Helper()
	eventually(t, "a watch of "+resource+" "+ns+" "+sel, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.watches[resource+" "+ns+" "+sel] > 0
	})
}

func matches(sel fields.Selector, obj runtime.Object) bool {
	set := fields.Set{}
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		set["metadata.name"], set["metadata.namespace"] = o.Name, o.Namespace
	case *corev1.Secret:
		set["metadata.name"], set["metadata.namespace"], set["type"] = o.Name, o.Namespace, string(o.Type)
	default:
		return true
	}
	return sel.Matches(set)
}

// filterWatch passes on the events of objects matching a field selector.
type filterWatch struct {
	in   watch.Interface
	out  chan watch.Event
	done chan struct{}
	once sync.Once
}

func newFilterWatch(in watch.Interface, sel fields.Selector) *filterWatch {
	w := &filterWatch{in: in, out: make(chan watch.Event), done: make(chan struct{})}
	go func() {
		defer close(w.out)
		for {
			select {
			case ev, ok := <-in.ResultChan():
				if !ok {
					return
				}
				if !matches(sel, ev.Object) {
					continue
				}
				select {
				case w.out <- ev:
				case <-w.done:
					return
				}
			case <-w.done:
				return
			}
		}
	}()
	return w
}

func (w *filterWatch) ResultChan() <-chan watch.Event { return w.out }
func (w *filterWatch) Stop() {
	w.once.Do(func() {
		close(w.done)
		w.in.Stop()
	})
}

// logBuffer collects log lines for assertions.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startSource runs a source on api until the test ends.
func startSource(t *testing.T, api *fakeAPI, opts Options) (*Source, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	if opts.Client == nil {
		opts.Client = api
	}
	if opts.CustomResources && opts.Metadata == nil {
		opts.Metadata = metadatafake.NewSimpleMetadataClient(metadatafake.NewTestScheme())
	}
	opts.Log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Run did not return")
		}
		if n := len(s.refs.active); n != 0 {
			t.Errorf("%d referenced-object informers left after Run", n)
		}
	})
	eventually(t, "the source to sync", s.HasSynced)
	for _, ns := range opts.Namespaces {
		api.waitWatch(t, "ingresses", ns, "")
	}
	if len(opts.Namespaces) == 0 {
		api.waitWatch(t, "ingresses", "", "")
	}
	return s, logs
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitSignal waits for a change signal after which cond holds.
func waitSignal(t *testing.T, s *Source, what string, cond func(*source.Snapshot) bool) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case <-s.Changed():
			if cond(s.Snapshot()) {
				return
			}
		case <-timeout:
			t.Fatalf("no change signal with %s", what)
		}
	}
}

func drain(s *Source) {
	for {
		select {
		case <-s.Changed():
		default:
			return
		}
	}
}

func ingress(ns, name string, annotations map[string]string) *networkingv1.Ingress {
	return &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations}}
}

func configMap(ns, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

func secret(ns, name string, typ corev1.SecretType, keys ...string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Type: typ, Data: map[string][]byte{}}
	for _, k := range keys {
		s.Data[k] = []byte("data of " + k)
	}
	return s
}

func findConfigMap(snap *source.Snapshot, ns, name string) *corev1.ConfigMap {
	var found *corev1.ConfigMap
	for _, cm := range snap.ConfigMaps {
		if cm.Namespace == ns && cm.Name == name {
			if found != nil {
				panic("ConfigMap " + ns + "/" + name + " is twice in the snapshot")
			}
			found = cm
		}
	}
	return found
}

func findSecret(snap *source.Snapshot, ns, name string) *corev1.Secret {
	var found *corev1.Secret
	for _, s := range snap.Secrets {
		if s.Namespace == ns && s.Name == name {
			if found != nil {
				panic("Secret " + ns + "/" + name + " is twice in the snapshot")
			}
			found = s
		}
	}
	return found
}

func names(snap *source.Snapshot) (configMaps, secrets []string) {
	for _, cm := range snap.ConfigMaps {
		configMaps = append(configMaps, cm.Namespace+"/"+cm.Name)
	}
	for _, s := range snap.Secrets {
		secrets = append(secrets, s.Namespace+"/"+s.Name)
	}
	return configMaps, secrets
}

const nginx = DefaultAnnotationsPrefix + "/"

func TestReferencedObjects(t *testing.T) {
	headers := configMap("app", "headers", map[string]string{"X-A": "1"})
	headers.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	api := newFakeAPI(t,
		configMap("system", "causeway", map[string]string{"k": "v"}),
		headers,
		configMap("app", "unreferenced", nil),
		secret("app", "backend-tls", corev1.SecretTypeOpaque, "ca.crt", "tls.crt", "tls.key"),
		secret("app", "token", corev1.SecretTypeOpaque, "token"),
		secret("app", "site-tls", corev1.SecretTypeTLS, "tls.crt", "tls.key", "ca.crt"),
		secret("app", "client-ca", corev1.SecretTypeTLS, "tls.crt", "tls.key", "ca.crt"),
		ingress("app", "web", map[string]string{
			nginx + "custom-headers":   "headers", // the Ingress's namespace
			nginx + "proxy-ssl-secret": "app/backend-tls",
			nginx + "auth-tls-secret":  "app/client-ca", // also a TLS Secret
		}),
	)
	s, _ := startSource(t, api, Options{ConfigMap: "system/causeway"})

	// The first snapshot after sync already has them.
	snap := s.Snapshot()
	cms, secrets := names(snap)
	if got := findConfigMap(snap, "app", "headers"); got == nil || got.Data["X-A"] != "1" {
		t.Errorf("referenced ConfigMap missing or wrong: %v", got)
	} else if got.ManagedFields != nil {
		t.Error("the referenced ConfigMap kept its managed fields")
	}
	if findConfigMap(snap, "system", "causeway") == nil {
		t.Errorf("the controller's ConfigMap is missing: %v", cms)
	}
	if findConfigMap(snap, "app", "unreferenced") != nil {
		t.Errorf("an unreferenced ConfigMap is in the snapshot: %v", cms)
	}
	if got := findSecret(snap, "app", "backend-tls"); got == nil || len(got.Data) != 3 {
		t.Errorf("referenced Opaque Secret missing or trimmed: %v", got)
	}
	if got := findSecret(snap, "app", "client-ca"); got == nil || got.Data["ca.crt"] == nil {
		t.Errorf("referenced TLS Secret missing, or the TLS informer's trimmed copy: %v", got)
	}
	if got := findSecret(snap, "app", "site-tls"); got == nil || got.Data["ca.crt"] != nil {
		t.Errorf("unreferenced TLS Secret missing or untrimmed: %v", got)
	}
	if findSecret(snap, "app", "token") != nil {
		t.Errorf("an unreferenced Opaque Secret is in the snapshot: %v", secrets)
	}
	if n := len(s.refs.active); n != 3 {
		t.Errorf("%d referenced-object informers, want 3", n)
	}
	// Nothing unreferenced reached memory at all.
	for _, ri := range s.refs.active {
		if n := len(ri.inf.GetStore().List()); n != 1 {
			t.Errorf("informer of %v caches %d objects", ri.key, n)
		}
	}

	// A change of the ConfigMap is signalled with its new data.
	api.waitWatch(t, "configmaps", "app", "metadata.name=headers")
	drain(s)
	headers.Data = map[string]string{"X-A": "2"}
	if _, err := api.CoreV1().ConfigMaps("app").Update(t.Context(), headers, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, s, "the new ConfigMap data", func(snap *source.Snapshot) bool {
		cm := findConfigMap(snap, "app", "headers")
		return cm != nil && cm.Data["X-A"] == "2"
	})
	// So is an unreferenced one's, never.
	if _, err := api.CoreV1().ConfigMaps("app").Update(t.Context(), configMap("app", "unreferenced", map[string]string{"a": "b"}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Its deletion too.
	api.waitWatch(t, "secrets", "app", "metadata.name=backend-tls")
	drain(s)
	if err := api.CoreV1().Secrets("app").Delete(t.Context(), "backend-tls", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, s, "the referenced Secret gone", func(snap *source.Snapshot) bool {
		return findSecret(snap, "app", "backend-tls") == nil
	})

	// Dropping the annotation drops the object and stops its informer.
	headersInformer := s.refs.active[refKey{kindConfigMap, "app", "headers"}].inf
	drain(s)
	ing := ingress("app", "web", map[string]string{
		nginx + "proxy-ssl-secret": "app/backend-tls",
		nginx + "auth-tls-secret":  "app/client-ca",
	})
	ing.Generation = 2
	if _, err := api.NetworkingV1().Ingresses("app").Update(t.Context(), ing, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, s, "the ConfigMap gone", func(snap *source.Snapshot) bool {
		return findConfigMap(snap, "app", "headers") == nil
	})
	eventually(t, "the ConfigMap's informer to stop", headersInformer.IsStopped)
	if cm := findConfigMap(s.Snapshot(), "system", "causeway"); cm == nil {
		t.Error("the controller's ConfigMap went too")
	}
	if sec := findSecret(s.Snapshot(), "app", "client-ca"); sec == nil || sec.Data["ca.crt"] == nil {
		t.Errorf("the Secret still referenced is missing or trimmed: %v", sec)
	}

	// Deleting the Ingress stops the rest; the TLS Secret stays, trimmed.
	drain(s)
	if err := api.NetworkingV1().Ingresses("app").Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, s, "the referenced TLS Secret back to its TLS-informer copy", func(snap *source.Snapshot) bool {
		sec := findSecret(snap, "app", "client-ca")
		return sec != nil && sec.Data["ca.crt"] == nil
	})
	eventually(t, "every referenced-object informer to stop", func() bool {
		s.refs.mu.Lock()
		defer s.refs.mu.Unlock()
		return len(s.refs.active) == 0 && len(s.refs.byIngress) == 0
	})

	// Every ConfigMap and Secret request selected: by name, or Secrets by
	// type; never a whole namespace or the cluster.
	for _, r := range api.recorded() {
		f := strings.Split(r, " ")
		if f[1] != "configmaps" && f[1] != "secrets" {
			continue
		}
		if len(f) != 4 {
			t.Errorf("request without a field selector: %s", r)
			continue
		}
		sel := f[3]
		ok := strings.HasPrefix(sel, "metadata.name=") ||
			(f[1] == "secrets" && sel == "type=kubernetes.io/tls")
		if !ok {
			t.Errorf("request selects too much: %s", r)
		}
	}
}

func TestReferenceShared(t *testing.T) {
	api := newFakeAPI(t, configMap("app", "headers", map[string]string{"X-A": "1"}))
	s, _ := startSource(t, api, Options{})
	key := refKey{kindConfigMap, "app", "headers"}
	for _, name := range []string{"a", "b"} {
		ing := ingress("app", name, map[string]string{nginx + "custom-headers": "app/headers"})
		if _, err := api.NetworkingV1().Ingresses("app").Create(t.Context(), ing, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitSignal(t, s, "the shared ConfigMap", func(snap *source.Snapshot) bool {
		return findConfigMap(snap, "app", "headers") != nil
	})
	eventually(t, "both references counted", func() bool {
		s.refs.mu.Lock()
		defer s.refs.mu.Unlock()
		ri := s.refs.active[key]
		return ri != nil && ri.users == 2 && len(s.refs.active) == 1
	})
	inf := s.refs.active[key].inf
	if err := api.NetworkingV1().Ingresses("app").Delete(t.Context(), "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "one reference left", func() bool {
		s.refs.mu.Lock()
		defer s.refs.mu.Unlock()
		return s.refs.active[key] != nil && s.refs.active[key].users == 1
	})
	if inf.IsStopped() || findConfigMap(s.Snapshot(), "app", "headers") == nil {
		t.Fatal("the ConfigMap still referenced by b was dropped")
	}
	if err := api.NetworkingV1().Ingresses("app").Delete(t.Context(), "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the informer to stop", inf.IsStopped)
	if findConfigMap(s.Snapshot(), "app", "headers") != nil {
		t.Fatal("the ConfigMap outlived its references")
	}
}

func TestReferenceCreatedLater(t *testing.T) {
	// An Ingress naming an object that does not exist yet: the object is
	// picked up when it is created, and its arrival signalled.
	api := newFakeAPI(t, ingress("app", "web", map[string]string{nginx + "auth-secret": "htpasswd"}))
	s, _ := startSource(t, api, Options{})
	if findSecret(s.Snapshot(), "app", "htpasswd") != nil {
		t.Fatal("a Secret out of nowhere")
	}
	api.waitWatch(t, "secrets", "app", "metadata.name=htpasswd")
	drain(s)
	if _, err := api.CoreV1().Secrets("app").Create(t.Context(), secret("app", "htpasswd", corev1.SecretTypeOpaque, "auth"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, s, "the new Secret", func(snap *source.Snapshot) bool {
		sec := findSecret(snap, "app", "htpasswd")
		return sec != nil && sec.Data["auth"] != nil
	})
}

func TestReferenceInvalidNames(t *testing.T) {
	api := newFakeAPI(t,
		configMap("app", "Headers", nil),
		ingress("app", "web", map[string]string{
			nginx + "custom-headers":   "Headers",
			nginx + "proxy-ssl-secret": "a/b/c",
			nginx + "auth-secret":      "/secret",
			nginx + "auth-tls-secret":  "Other_NS/ca",
		}),
	)
	s, logs := startSource(t, api, Options{})
	time.Sleep(100 * time.Millisecond)
	s.refs.mu.Lock()
	n := len(s.refs.active)
	s.refs.mu.Unlock()
	if n != 0 {
		t.Errorf("%d informers for invalid names", n)
	}
	for _, r := range api.recorded() {
		if strings.Contains(r, "metadata.name=") {
			t.Errorf("request for an invalid name: %s", r)
		}
	}
	if c := strings.Count(logs.String(), "invalid object name"); c != 4 {
		t.Errorf("%d log lines about invalid names, want 4:\n%s", c, logs)
	}
}

func TestReferenceAnnotationsPrefix(t *testing.T) {
	api := newFakeAPI(t,
		configMap("app", "ours", nil),
		configMap("app", "theirs", nil),
		ingress("app", "web", map[string]string{
			"example.com/custom-headers": "ours",
			nginx + "custom-headers":     "theirs", // another prefix now
		}),
	)
	s, _ := startSource(t, api, Options{AnnotationsPrefix: "example.com"})
	snap := s.Snapshot()
	if findConfigMap(snap, "app", "ours") == nil {
		t.Error("the ConfigMap under the configured prefix is missing")
	}
	if findConfigMap(snap, "app", "theirs") != nil {
		t.Error("the ConfigMap under the default prefix is watched")
	}
}

func TestReferenceOutsideNamespaces(t *testing.T) {
	api := newFakeAPI(t,
		configMap("other", "headers", nil),
		configMap("app", "headers", nil),
		ingress("app", "web", map[string]string{
			nginx + "custom-headers":   "other/headers",
			nginx + "proxy-ssl-secret": "app/backend",
		}),
	)
	s, logs := startSource(t, api, Options{Namespaces: []string{"app"}})
	if findConfigMap(s.Snapshot(), "other", "headers") != nil {
		t.Error("a ConfigMap outside the watched namespaces is in the snapshot")
	}
	// Another update of the Ingress does not log again.
	ing := ingress("app", "web", map[string]string{
		nginx + "custom-headers":   "other/headers",
		nginx + "proxy-ssl-secret": "app/backend-2",
	})
	ing.Generation = 2
	drain(s)
	if _, err := api.NetworkingV1().Ingresses("app").Update(t.Context(), ing, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the new Secret reference", func() bool {
		s.refs.mu.Lock()
		defer s.refs.mu.Unlock()
		return s.refs.active[refKey{kindSecret, "app", "backend-2"}] != nil
	})
	for _, r := range api.recorded() {
		if strings.Contains(r, " other ") {
			t.Errorf("request into an unwatched namespace: %s", r)
		}
	}
	if c := strings.Count(logs.String(), "not watched"); c != 1 {
		t.Errorf("%d log lines about the unwatched namespace, want 1:\n%s", c, logs)
	}
}

func TestReferenceLimit(t *testing.T) {
	defer func(n int) { maxReferenced = n }(maxReferenced)
	maxReferenced = 2
	api := newFakeAPI(t,
		ingress("app", "a", map[string]string{nginx + "custom-headers": "one", nginx + "auth-secret": "two"}),
	)
	s, logs := startSource(t, api, Options{})
	over := ingress("app", "over", map[string]string{nginx + "custom-headers": "three"})
	if _, err := api.NetworkingV1().Ingresses("app").Create(t.Context(), over, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the warning", func() bool { return strings.Contains(logs.String(), "ingress=app/over") })
	if !strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("not a warning:\n%s", logs)
	}
	s.refs.mu.Lock()
	n := len(s.refs.active)
	s.refs.mu.Unlock()
	if n != 2 {
		t.Errorf("%d informers, want the limit of 2", n)
	}
	// Room frees up: the skipped reference is watched.
	if err := api.NetworkingV1().Ingresses("app").Delete(t.Context(), "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the skipped reference to be watched", func() bool {
		s.refs.mu.Lock()
		defer s.refs.mu.Unlock()
		return len(s.refs.active) == 1 && s.refs.active[refKey{kindConfigMap, "app", "three"}] != nil
	})
}

func TestReferenceRace(t *testing.T) {
	// Many Ingresses in several namespaces (one informer each) churn
	// their references concurrently; at the end none is left.
	namespaces := []string{"a", "b", "c"}
	api := newFakeAPI(t)
	s, _ := startSource(t, api, Options{Namespaces: namespaces})
	var wg sync.WaitGroup
	for _, ns := range namespaces {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				ing := ingress(ns, fmt.Sprint("ing-", i%4), map[string]string{
					nginx + "custom-headers": fmt.Sprint("a/cm-", i%3),
					nginx + "auth-secret":    fmt.Sprint("s-", i%5),
				})
				if _, err := api.NetworkingV1().Ingresses(ns).Create(context.Background(), ing, metav1.CreateOptions{}); err != nil {
					ing.Generation = int64(i + 1)
					_, _ = api.NetworkingV1().Ingresses(ns).Update(context.Background(), ing, metav1.UpdateOptions{})
				}
				_ = s.Snapshot()
			}
			for i := range 4 {
				_ = api.NetworkingV1().Ingresses(ns).Delete(context.Background(), fmt.Sprint("ing-", i), metav1.DeleteOptions{})
			}
		}()
	}
	wg.Wait()
	eventually(t, "every informer to stop", func() bool {
		s.refs.mu.Lock()
		defer s.refs.mu.Unlock()
		return len(s.refs.active) == 0 && len(s.refs.byIngress) == 0
	})
}

func TestControllerConfigMapReferences(t *testing.T) {
	// The controller's ConfigMap names ConfigMaps and a Secret, in any
	// namespace, watched or not: they are in the first snapshot whole,
	// their changes are signalled, and they leave when no longer named.
	config := configMap("causeway", "causeway", map[string]string{
		"add-headers": "causeway/add", "proxy-set-headers": "other/set", "ssl-dh-param": "causeway/dh",
	})
	api := newFakeAPI(t, config, configMap("causeway", "add", map[string]string{"X-A": "1"}),
		configMap("other", "set", map[string]string{"X-B": "2"}),
		secret("causeway", "dh", corev1.SecretTypeOpaque, "dhparam.pem"),
		configMap("other", "unrelated", nil))
	s, _ := startSource(t, api, Options{Namespaces: []string{"app"}, ConfigMap: "causeway/causeway"})
	snap := s.Snapshot()
	if findConfigMap(snap, "causeway", "add") == nil || findConfigMap(snap, "other", "set") == nil ||
		findConfigMap(snap, "other", "unrelated") != nil {
		t.Fatalf("ConfigMaps in the first snapshot: %v", snap.ConfigMaps)
	}
	if sec := findSecret(snap, "causeway", "dh"); sec == nil || sec.Data["dhparam.pem"] == nil {
		t.Fatalf("the DH parameters Secret is missing or trimmed: %v", sec)
	}

	api.waitWatch(t, "configmaps", "other", "metadata.name=set")
	drain(s)
	if _, err := api.CoreV1().ConfigMaps("other").Update(t.Context(), configMap("other", "set", map[string]string{"X-B": "3"}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, s, "the changed proxy-set-headers ConfigMap", func(snap *source.Snapshot) bool {
		cm := findConfigMap(snap, "other", "set")
		return cm != nil && cm.Data["X-B"] == "3"
	})

	api.waitWatch(t, "configmaps", "causeway", "metadata.name=causeway")
	if _, err := api.CoreV1().ConfigMaps("causeway").Update(t.Context(), configMap("causeway", "causeway", map[string]string{"add-headers": "causeway/add"}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, s, "the references dropped", func(snap *source.Snapshot) bool {
		return findConfigMap(snap, "other", "set") == nil && findSecret(snap, "causeway", "dh") == nil && findConfigMap(snap, "causeway", "add") != nil
	})
}

// TestReferencedForAdmission: the webhook reads what an Ingress not yet
// stored names, by name and in its namespace only; objects already cached
// are not read again.
func TestReferencedForAdmission(t *testing.T) {
	api := newFakeAPI(t,
		configMap("app", "headers", nil),
		configMap("app", "cached", nil),
		configMap("other", "headers", nil),
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "users"}, Data: map[string][]byte{"auth": []byte("u:p")}},
		ingress("app", "stored", map[string]string{nginx + "custom-headers": "cached"}),
	)
	s, _ := startSource(t, api, Options{Namespaces: []string{"app"}})
	eventually(t, "the cached reference", func() bool { return findConfigMap(s.Snapshot(), "app", "cached") != nil })
	before := len(api.recorded())
	cms, secrets, err := s.Referenced(t.Context(), ingress("app", "new", map[string]string{
		nginx + "custom-headers":         "headers",
		nginx + "auth-proxy-set-headers": "cached",
		nginx + "auth-secret":            "users",
		nginx + "proxy-ssl-secret":       "other/secret",
		nginx + "auth-tls-secret":        "missing",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if len(cms) != 1 || cms[0].Name != "headers" || cms[0].Namespace != "app" || len(secrets) != 1 || secrets[0].Name != "users" {
		t.Errorf("Referenced = %v, %v; want ConfigMap app/headers and Secret app/users", cms, secrets)
	}
	lists := api.recorded()[before:]
	want := []string{"list configmaps app metadata.name=headers", "list secrets app metadata.name=missing", "list secrets app metadata.name=users"}
	slices.Sort(lists)
	if !slices.Equal(lists, want) {
		t.Errorf("requests %q, want %q", lists, want)
	}
}
