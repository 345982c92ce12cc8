// Package owned writes the objects that VirtualServers ask the controller
// to create and control, as NGINX Ingress Controller does: cert-manager
// Certificates (package certmanager) and external-dns DNSEndpoints
// (package externaldns). Only the leader writes.
package owned

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/record"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/writequeue"
)

// Kind is one kind of object VirtualServers ask for.
type Kind struct {
	// Name is the kind ("Certificate"); Events name it.
	Name     string
	Resource schema.GroupVersionResource
	// Want returns the object a VirtualServer asks for now: nil when it
	// asks for none or it cannot be known yet, an error when its request
	// is unusable (the VirtualServer's Problem reports that).
	Want func(vs *nicv1.VirtualServer) (*unstructured.Unstructured, error)
	// Differs reports whether have needs what want sets.
	Differs func(have, want *unstructured.Unstructured) bool
	// Update sets what want sets onto have, a copy of the object stored.
	Update func(have, want *unstructured.Unstructured)
}

// Options configure a Writer.
type Options struct {
	Kind     Kind
	Client   dynamic.Interface
	IsLeader func() bool
	// Recorder writes Events on the VirtualServers, as NIC does:
	// Create<Kind>, Update<Kind>, Delete<Kind>, and BadConfig (Warning)
	// when an object cannot be written.
	Recorder record.EventRecorder
	Log      *slog.Logger
}

// Writer keeps, on the leader, one object of its Kind per served
// VirtualServer that asks for one: created when missing, updated when it
// differs (only one the VirtualServer controls), and the VirtualServer's
// former ones (of another name before) deleted. An object of the same
// name that the VirtualServer does not control is left alone, with a
// Warning. Those of a deleted VirtualServer go with it, by Kubernetes'
// garbage collection of what it controls.
type Writer struct {
	opts  Options
	queue *writequeue.Queue[wanted] // by VirtualServer

	mu sync.Mutex
	// served are the VirtualServers of the last Observe.
	served []*nicv1.VirtualServer
	// want is what each VirtualServer ("namespace/name") asks for now;
	// done the want last written for it.
	want, done map[string]wanted
	// asked is Kind.Want's answer for each VirtualServer at the
	// resourceVersion it was asked at: a sync changes few of them, and
	// building an object costs a conversion through reflection.
	asked map[string]answer
}

type answer struct {
	uid types.UID
	rv  string
	obj *unstructured.Unstructured
	err error
}

type wanted struct {
	vs  *nicv1.VirtualServer
	obj *unstructured.Unstructured
}

// NewWriter returns a Writer; Run drains its queue.
func NewWriter(opts Options) *Writer {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	w := &Writer{opts: opts, want: map[string]wanted{}, done: map[string]wanted{}, asked: map[string]answer{}}
	w.queue = writequeue.New(writequeue.Options{
		BaseDelay: 500 * time.Millisecond, MaxDelay: time.Minute,
		IsLeader: opts.IsLeader, // Resync queues everything again on becoming leader
		OnRetry: func(key string, err error) {
			opts.Log.Warn(strings.ToLower(opts.Kind.Name)+" not written; retrying", "virtualserver", key, "err", err)
		},
	}, w.write)
	return w
}

// Observe takes the VirtualServers served by a sync (ours, not
// rejected) and queues those whose object may need writing.
func (w *Writer) Observe(served []*nicv1.VirtualServer) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.served = served
	w.planLocked()
}

// Resync asks every VirtualServer again and queues each: on becoming the
// leader, or when what Want reads besides them (the published addresses)
// changed.
func (w *Writer) Resync() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done = map[string]wanted{}
	w.asked = map[string]answer{}
	w.planLocked()
}

func (w *Writer) planLocked() {
	next := make(map[string]wanted, len(w.served))
	asked := make(map[string]answer, len(w.served))
	for _, vs := range w.served {
		key := vs.Namespace + "/" + vs.Name
		a, ok := w.asked[key]
		if !ok || a.uid != vs.UID || a.rv != vs.ResourceVersion || vs.ResourceVersion == "" {
			a = answer{uid: vs.UID, rv: vs.ResourceVersion}
			a.obj, a.err = w.opts.Kind.Want(vs)
		}
		asked[key] = a
		if a.err != nil || a.obj == nil {
			continue // reported as the VirtualServer's Problem (package nic)
		}
		next[key] = wanted{vs: vs, obj: a.obj}
	}
	w.want, w.asked = next, asked
	targets := make(map[string]wanted)
	for key, want := range w.want {
		if done, ok := w.done[key]; ok && done.vs.UID == want.vs.UID &&
			(done.obj == want.obj || !w.opts.Kind.Differs(done.obj, want.obj) && done.obj.GetName() == want.obj.GetName()) {
			continue
		}
		targets[key] = want
	}
	w.queue.Set(targets)
}

// Run writes the queued VirtualServers' objects until ctx is done.
func (w *Writer) Run(ctx context.Context) { w.queue.Run(ctx) }

// write makes the object of the VirtualServer key what it wants.
func (w *Writer) write(ctx context.Context, key string, want wanted) error {
	k, vs, obj := w.opts.Kind, want.vs, want.obj
	objs := w.opts.Client.Resource(k.Resource).Namespace(vs.Namespace)
	have, err := objs.Get(ctx, obj.GetName(), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		if _, err := objs.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			if apierrors.IsNotFound(err) {
				// The API server does not serve the resource at all.
				err = fmt.Errorf("%w (is the CustomResourceDefinition of %s installed?)", err, k.Resource.GroupResource())
			}
			w.event(vs, corev1.EventTypeWarning, "BadConfig", "Error creating %s for VirtualServer resource: %v", k.Name, err)
			return err
		}
		w.event(vs, corev1.EventTypeNormal, "Create"+k.Name, "Successfully created %s %q", k.Name, obj.GetName())
	case err != nil:
		return err
	case !ControlledBy(have, vs.UID):
		w.event(vs, corev1.EventTypeWarning, "BadConfig",
			"%s %q exists and is not controlled by this VirtualServer; it is left as it is", k.Name, obj.GetName())
	case k.Differs(have, obj):
		update := have.DeepCopy()
		k.Update(update, obj)
		if _, err := objs.Update(ctx, update, metav1.UpdateOptions{}); err != nil {
			if !apierrors.IsConflict(err) {
				w.event(vs, corev1.EventTypeWarning, "BadConfig", "Error updating %s for VirtualServer resource: %v", k.Name, err)
			}
			return err
		}
		w.event(vs, corev1.EventTypeNormal, "Update"+k.Name, "Successfully updated %s %q", k.Name, obj.GetName())
	}
	// Only a rename leaves a former object: a list of the namespace is
	// needed when the last name written differs, or is not known (after
	// a start or a change of leader).
	w.mu.Lock()
	prev, known := w.done[key]
	w.mu.Unlock()
	if !known || prev.obj.GetName() != obj.GetName() {
		if err := w.deleteFormer(ctx, objs, vs, obj.GetName()); err != nil {
			return err
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done[key] = want
	if cur, ok := w.want[key]; ok && cur.obj != obj {
		// The VirtualServer changed while this write ran, perhaps back to
		// what was written before it: plan again against this write.
		w.planLocked()
	}
	return nil
}

// deleteFormer deletes the objects vs controls other than name: those of
// a name it no longer asks for.
func (w *Writer) deleteFormer(ctx context.Context, objs dynamic.ResourceInterface, vs *nicv1.VirtualServer, name string) error {
	list, err := objs.List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range list.Items {
		c := &list.Items[i]
		if c.GetName() == name || !ControlledBy(c, vs.UID) {
			continue
		}
		err := objs.Delete(ctx, c.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptrUID(c.GetUID())}})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		w.event(vs, corev1.EventTypeNormal, "Delete"+w.opts.Kind.Name, "Successfully deleted unrequired %s %q", w.opts.Kind.Name, c.GetName())
	}
	return nil
}

// ControlledBy reports whether uid is obj's controller.
func ControlledBy(obj metav1.Object, uid types.UID) bool {
	for _, o := range obj.GetOwnerReferences() {
		if o.Controller != nil && *o.Controller {
			return o.UID == uid
		}
	}
	return false
}

// ControllerRef is the owner reference that makes vs the controller of
// an object. Not blockOwnerDeletion: that would need the finalizers of
// VirtualServers too, and the objects hold nothing to protect.
func ControllerRef(vs *nicv1.VirtualServer) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: nicv1.SchemeGroupVersion.String(), Kind: "VirtualServer",
		Name: vs.Name, UID: vs.UID, Controller: new(true)}
}

func ptrUID(u types.UID) *types.UID { return &u }

func (w *Writer) event(vs *nicv1.VirtualServer, typ, reason, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	level := slog.LevelInfo
	if typ == corev1.EventTypeWarning {
		level = slog.LevelWarn
	}
	w.opts.Log.Log(context.Background(), level, strings.ToLower(w.opts.Kind.Name), "virtualserver", vs.Namespace+"/"+vs.Name, "reason", reason, "message", msg)
	if w.opts.Recorder != nil {
		w.opts.Recorder.Event(runtime.Object(vs), typ, reason, strings.TrimSpace(msg))
	}
}

// EqualJSON compares decoded JSON values (maps, lists, strings,
// numbers), a missing value as an empty one: what Kinds' Differs use.
func EqualJSON(a, b any) bool {
	switch av := a.(type) {
	case map[string]any:
		bv, _ := b.(map[string]any)
		for k := range av {
			if !EqualJSON(av[k], bv[k]) {
				return false
			}
		}
		for k := range bv {
			if _, ok := av[k]; !ok && !EqualJSON(nil, bv[k]) {
				return false
			}
		}
		return true
	case []any:
		bv, _ := b.([]any)
		return slices.EqualFunc(av, bv, EqualJSON)
	case nil:
		switch bv := b.(type) {
		case nil:
			return true
		case map[string]any:
			return len(bv) == 0
		case []any:
			return len(bv) == 0
		case string:
			return bv == ""
		case int64:
			return bv == 0
		}
		return false
	default:
		if b == nil {
			return EqualJSON(nil, a)
		}
		return a == b
	}
}
