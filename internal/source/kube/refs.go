package kube

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/causeway/causeway/internal/frontend/configmap"
	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/model"
)

// This file watches the ConfigMaps and Secrets that Ingress annotations
// name ("<namespace>/<name>", or "<name>" in the Ingress's namespace), and
// those the controller's ConfigMap names, and only those: each with an
// informer of its own that lists and watches with fieldSelector
// metadata.name=<name> in its namespace, started when the first Ingress
// (or the controller's ConfigMap) names the object and stopped when the
// last one stops naming it. Which annotations and keys name objects is the
// front-ends' to say (annotations.References, configmap.References); this
// file only watches. Other ConfigMaps and Secrets (service-account tokens,
// Helm releases) never reach memory.

// DefaultAnnotationsPrefix is the annotation prefix of ingress-nginx, which
// Options.AnnotationsPrefix defaults to.
const DefaultAnnotationsPrefix = annotations.DefaultPrefix

// maxReferenced bounds how many objects Ingresses can have watched at
// once: past it, further references are skipped with a warning. A variable
// so that tests can lower it.
var maxReferenced = 1000

// refSyncWait bounds how long the signal of an Ingress change is held
// back while the objects it newly references are listed.
var refSyncWait = 5 * time.Second

type refKind string

const (
	kindConfigMap refKind = "ConfigMap"
	kindSecret    refKind = "Secret"
)

// refKey identifies a referenced object.
type refKey struct {
	kind            refKind
	namespace, name string
}

func (k refKey) String() string { return string(k.kind) + " " + k.namespace + "/" + k.name }

// refState is what became of one reference of one Ingress.
type refState int

const (
	refWanted  refState = iota // valid and watchable; not yet decided
	refHeld                    // counted in an active informer
	refSkipped                 // over maxReferenced; retried when room frees up
	refOutside                 // in a namespace that is not watched
	refInvalid                 // not a valid name
)

// refInformer is the informer of one referenced object.
type refInformer struct {
	key    refKey
	inf    cache.SharedIndexInformer
	cancel context.CancelFunc
	users  int // references held by Ingresses
}

// refs tracks which objects the cached Ingresses reference and runs an
// informer for each. Ingress event handlers (one goroutine per namespace's
// informer) call update concurrently; mu serializes them.
type refs struct {
	client     kubernetes.Interface
	log        *slog.Logger
	notify     func()
	prefix     string          // of the annotations
	namespaces map[string]bool // nil: all are watched

	mu        sync.Mutex
	ctx       context.Context // Run's; nil before Run
	closed    bool
	wg        sync.WaitGroup // informer goroutines, and sync waiters
	active    map[refKey]*refInformer
	byIngress map[string]map[refKey]refState // by Ingress "namespace/name"
}

func newRefs(opts Options, notify func()) *refs {
	prefix := opts.AnnotationsPrefix
	if prefix == "" {
		prefix = DefaultAnnotationsPrefix
	}
	r := &refs{
		client:    opts.Client,
		log:       opts.Log,
		notify:    notify,
		prefix:    prefix,
		active:    map[refKey]*refInformer{},
		byIngress: map[string]map[refKey]refState{},
	}
	for _, ns := range opts.Namespaces {
		if ns == metav1.NamespaceAll {
			r.namespaces = nil
			break
		}
		if r.namespaces == nil {
			r.namespaces = map[string]bool{}
		}
		r.namespaces[ns] = true
	}
	return r
}

// start hands over Run's context: informers started from now on live at
// most as long as it.
func (r *refs) start(ctx context.Context) {
	r.mu.Lock()
	r.ctx = ctx
	r.mu.Unlock()
}

// close stops every informer and refuses to start more. wait then waits
// for their goroutines.
func (r *refs) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	for k, ri := range r.active {
		ri.cancel()
		delete(r.active, k)
	}
}

func (r *refs) wait() { r.wg.Wait() }

// watched maps the kinds of references this file watches by name. The
// Services an Ingress names are all cached anyway, and so are the
// kubernetes.io/tls Secrets of spec.tls.
var watched = map[string]refKind{model.KindConfigMap: kindConfigMap, model.KindSecret: kindSecret}

// check decides what becomes of a reference of an Ingress in
// ingressNamespace.
func (r *refs) check(kind refKind, ingressNamespace string, n model.ObjectName) (refKey, refState) {
	k := refKey{kind, n.Namespace, n.Name}
	if len(validation.IsDNS1123Label(n.Namespace)) > 0 || len(validation.IsDNS1123Subdomain(n.Name)) > 0 {
		// The whole value, so that the key can never equal a valid one.
		return refKey{kind, ingressNamespace, n.String()}, refInvalid
	}
	if n.Namespace != ingressNamespace {
		// The annotations refuse objects of other namespaces: an Ingress
		// author must not be able to have the controller read another
		// namespace's Secrets. Never cached.
		return k, refOutside
	}
	if r.namespaces != nil && !r.namespaces[n.Namespace] {
		return k, refOutside
	}
	return k, refWanted
}

// wanted lists the ConfigMaps and Secrets an Ingress's annotations name.
func (r *refs) wanted(namespace string, values map[string]string) map[refKey]refState {
	var out map[refKey]refState
	for _, ref := range annotations.References(namespace, values, r.prefix) {
		kind, ok := watched[ref.Kind]
		if !ok {
			continue
		}
		k, st := r.check(kind, namespace, ref.ObjectName)
		if out == nil {
			out = map[refKey]refState{}
		}
		out[k] = st
	}
	return out
}

// update records the references of the Ingress key (none when deleted),
// starting informers for objects newly referenced and stopping those no
// longer referenced by any Ingress. It returns true when it started an
// informer: the change is then signalled once the new informers have
// listed (or after refSyncWait), so that no snapshot is built between the
// Ingress and the objects it names.
func (r *refs) update(key string, annotations map[string]string) (deferred bool) {
	namespace, _, _ := strings.Cut(key, "/")
	return r.apply(key, r.wanted(namespace, annotations))
}

// configKey is the refs key of the controller's ConfigMap; Ingress keys
// never hold ":".
func configKey(namespaceName string) string { return "configmap:" + namespaceName }

// updateConfig records the references of the controller's ConfigMap
// (add-headers, proxy-set-headers, ssl-dh-param; none when deleted), as
// update does for an Ingress. The cluster's operator writes that
// ConfigMap, so its references may be in any namespace, watched or not.
func (r *refs) updateConfig(namespaceName string, data map[string]string) (deferred bool) {
	var wanted map[refKey]refState
	for _, ref := range configmap.References(data) {
		kind, ok := watched[ref.Kind]
		if !ok {
			continue
		}
		if wanted == nil {
			wanted = map[refKey]refState{}
		}
		wanted[refKey{kind, ref.Namespace, ref.Name}] = refWanted
	}
	return r.apply(configKey(namespaceName), wanted)
}

// apply records wanted as the references of key, starting and stopping
// informers (see update).
func (r *refs) apply(key string, wanted map[refKey]refState) (deferred bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.ctx == nil {
		return false
	}
	old := r.byIngress[key]
	if len(old) == 0 && len(wanted) == 0 {
		return false
	}
	released := false
	for k, st := range old {
		if _, ok := wanted[k]; !ok && st == refHeld {
			r.release(k)
			released = true
		}
	}
	var started []*refInformer
	next := make(map[refKey]refState, len(wanted))
	for k, st := range wanted {
		prev, had := old[k]
		switch {
		case st != refWanted:
			if !had {
				r.logIgnored(key, k, st)
			}
		case had && prev == refHeld:
			st = refHeld
		default:
			ri, ok := r.acquire(k)
			switch {
			case ok:
				st = refHeld
				if ri != nil {
					started = append(started, ri)
				}
			default:
				st = refSkipped
				if !had || prev != refSkipped {
					r.log.Warn("too many objects referenced by Ingress annotations; not watching this one",
						"ingress", key, "kind", k.kind, "object", k.namespace+"/"+k.name, "limit", maxReferenced)
				}
			}
		}
		next[k] = st
	}
	if len(next) == 0 {
		delete(r.byIngress, key)
	} else {
		r.byIngress[key] = next
	}
	if released {
		r.retrySkipped()
		r.notify() // the released objects left the snapshot
	}
	if len(started) > 0 {
		r.signalWhenSynced(started)
		return true
	}
	return false
}

func (r *refs) logIgnored(ingress string, k refKey, st refState) {
	switch st {
	case refOutside:
		r.log.Info("Ingress annotation references an object in another namespace, or in a namespace that is not watched; ignored",
			"ingress", ingress, "kind", k.kind, "object", k.namespace+"/"+k.name)
	case refInvalid:
		r.log.Debug("Ingress annotation references an invalid object name; not watched",
			"ingress", ingress, "kind", k.kind, "value", k.name)
	}
}

// acquire counts a reference to k, starting its informer if it is the
// first. It returns the informer only when it started it, and false when
// the limit is reached. mu is held.
func (r *refs) acquire(k refKey) (*refInformer, bool) {
	if ri := r.active[k]; ri != nil {
		ri.users++
		return nil, true
	}
	if len(r.active) >= maxReferenced {
		return nil, false
	}
	ri := r.startInformer(k)
	r.active[k] = ri
	return ri, true
}

// release drops a reference to k, stopping its informer with the last.
// mu is held.
func (r *refs) release(k refKey) {
	ri := r.active[k]
	if ri == nil {
		return
	}
	ri.users--
	if ri.users <= 0 {
		ri.cancel()
		delete(r.active, k)
	}
}

// retrySkipped gives references skipped for the limit the room that has
// freed up. mu is held.
func (r *refs) retrySkipped() {
	for ingress, states := range r.byIngress {
		for k, st := range states {
			if st != refSkipped {
				continue
			}
			ri, ok := r.acquire(k)
			if !ok {
				return
			}
			states[k] = refHeld
			r.log.Info("watching an object referenced by Ingress annotations now that others are no longer referenced",
				"ingress", ingress, "kind", k.kind, "object", k.namespace+"/"+k.name)
			if ri != nil {
				r.signalWhenSynced([]*refInformer{ri})
			}
		}
	}
}

// startInformer creates and runs the informer of one object. mu is held.
func (r *refs) startInformer(k refKey) *refInformer {
	tweak := func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", k.name).String()
	}
	var inf cache.SharedIndexInformer
	switch k.kind {
	case kindConfigMap:
		inf = coreinformers.NewFilteredConfigMapInformer(r.client, k.namespace, 0, cache.Indexers{}, tweak)
	case kindSecret:
		inf = coreinformers.NewFilteredSecretInformer(r.client, k.namespace, 0, cache.Indexers{}, tweak)
	default:
		panic(fmt.Sprintf("unknown kind %q", k.kind))
	}
	if err := inf.SetTransform(trimReferenced); err != nil {
		panic(fmt.Sprintf("set transform: %v", err)) // not started yet
	}
	notify := func(any) { r.notify() }
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    notify,
		UpdateFunc: func(_, obj any) { r.notify() },
		DeleteFunc: notify,
	})
	ctx, cancel := context.WithCancel(r.ctx)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		inf.RunWithContext(ctx)
	}()
	return &refInformer{key: k, inf: inf, cancel: cancel, users: 1}
}

// signalWhenSynced signals a change once every informer of started has
// listed, or after refSyncWait. An object that does not exist produces no
// event of its own, yet the Ingress naming it changed. mu is held.
func (r *refs) signalWhenSynced(started []*refInformer) {
	ctx := r.ctx
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		_ = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, refSyncWait, true, func(context.Context) (bool, error) {
			for _, ri := range started {
				if !ri.inf.HasSynced() && !ri.inf.IsStopped() {
					return false, nil
				}
			}
			return true, nil
		})
		if ctx.Err() == nil {
			r.notify()
		}
	}()
}

// synced reports whether every active informer has listed.
func (r *refs) synced() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ri := range r.active {
		if !ri.inf.HasSynced() {
			return false
		}
	}
	return true
}

// lists returns the cached referenced objects. Each informer selects its
// object by name; the check here only guards against a server that would
// ignore the selector.
func (r *refs) lists() (configMaps []*corev1.ConfigMap, secrets []*corev1.Secret) {
	r.mu.Lock()
	infs := make([]*refInformer, 0, len(r.active))
	for _, ri := range r.active {
		infs = append(infs, ri)
	}
	r.mu.Unlock()
	for _, ri := range infs {
		for _, o := range ri.inf.GetStore().List() {
			switch o := o.(type) {
			case *corev1.ConfigMap:
				if ri.key.kind == kindConfigMap && o.Namespace == ri.key.namespace && o.Name == ri.key.name {
					configMaps = append(configMaps, o)
				}
			case *corev1.Secret:
				if ri.key.kind == kindSecret && o.Namespace == ri.key.namespace && o.Name == ri.key.name {
					secrets = append(secrets, o)
				}
			}
		}
	}
	return configMaps, secrets
}

// trimReferenced is the transform of the referenced objects' informers:
// the metadata trim of every informer, but Secret data is kept whole,
// since what is read depends on the annotation (ca.crt for
// proxy-ssl-secret and auth-tls-secret, any key of an auth-map
// auth-secret) and the Secret was named for this purpose.
func trimReferenced(obj any) (any, error) {
	trimMeta(obj)
	return obj, nil
}

// Referenced lists, straight from the API, the ConfigMaps and Secrets the
// annotations of ing name that no cached Ingress references yet, so that
// the admission webhook sees what the controller will see once ing is
// stored. Like the informers, it lists by name (RBAC needs no get), in the
// Ingress's namespace only, and only in watched namespaces.
func (s *Source) Referenced(ctx context.Context, ing *networkingv1.Ingress) ([]*corev1.ConfigMap, []*corev1.Secret, error) {
	var cms []*corev1.ConfigMap
	var secrets []*corev1.Secret
	r := s.refs
	for k, st := range r.wanted(ing.Namespace, ing.Annotations) {
		if st != refWanted {
			continue
		}
		r.mu.Lock()
		ri := r.active[k]
		r.mu.Unlock()
		if ri != nil && ri.inf.HasSynced() {
			continue // in the snapshot already
		}
		opts := metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", k.name).String()}
		switch k.kind {
		case kindConfigMap:
			l, err := r.client.CoreV1().ConfigMaps(k.namespace).List(ctx, opts)
			if err != nil {
				return nil, nil, fmt.Errorf("list %s: %w", k, err)
			}
			for i := range l.Items {
				if l.Items[i].Name == k.name {
					cms = append(cms, &l.Items[i])
				}
			}
		case kindSecret:
			l, err := r.client.CoreV1().Secrets(k.namespace).List(ctx, opts)
			if err != nil {
				return nil, nil, fmt.Errorf("list %s: %w", k, err)
			}
			for i := range l.Items {
				if l.Items[i].Name == k.name {
					secrets = append(secrets, &l.Items[i])
				}
			}
		}
	}
	return cms, secrets, nil
}
