package certmanager

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
)

// Options configure a Writer.
type Options struct {
	Client   dynamic.Interface
	IsLeader func() bool
	// Recorder writes Events on the VirtualServers, as NIC does:
	// CreateCertificate, UpdateCertificate, DeleteCertificate, and
	// BadConfig (Warning) when a Certificate cannot be written.
	Recorder record.EventRecorder
	Log      *slog.Logger
}

// Writer keeps, on the leader, one Certificate per served VirtualServer
// that asks for one: created when missing, updated when it differs
// (only one the VirtualServer controls), and the VirtualServer's former
// Certificates (another tls.secret before) deleted. A Certificate of the
// same name that the VirtualServer does not control is left alone, with
// a Warning. Certificates of a deleted VirtualServer go with it, by
// Kubernetes' garbage collection of what it controls.
type Writer struct {
	opts  Options
	queue workqueue.TypedRateLimitingInterface[string]

	mu sync.Mutex
	// want is what each VirtualServer ("namespace/name") asks for now;
	// done the want last written for it.
	want, done map[string]wanted
}

type wanted struct {
	vs  *nicv1.VirtualServer
	crt *unstructured.Unstructured
}

// NewWriter returns a Writer; Run drains its queue.
func NewWriter(opts Options) *Writer {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	return &Writer{opts: opts, want: map[string]wanted{}, done: map[string]wanted{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](500*time.Millisecond, time.Minute),
			workqueue.TypedRateLimitingQueueConfig[string]{})}
}

// Observe takes the VirtualServers served by a sync (live, ours, not
// rejected) and queues those whose Certificate may need writing.
func (w *Writer) Observe(served []*nicv1.VirtualServer) {
	w.mu.Lock()
	defer w.mu.Unlock()
	next := make(map[string]wanted, len(served))
	for _, vs := range served {
		crt, err := Want(vs)
		if err != nil || crt == nil {
			continue // reported as the VirtualServer's Problem (package nic)
		}
		next[vs.Namespace+"/"+vs.Name] = wanted{vs: vs, crt: crt}
	}
	w.want = next
	w.planLocked()
}

// Resync queues every VirtualServer again: on becoming the leader.
func (w *Writer) Resync() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done = map[string]wanted{}
	w.planLocked()
}

func (w *Writer) planLocked() {
	for key, want := range w.want {
		if done, ok := w.done[key]; ok && done.vs.UID == want.vs.UID && !Differs(done.crt, want.crt) &&
			done.crt.GetName() == want.crt.GetName() {
			continue
		}
		w.queue.Add(key)
	}
}

// Run writes queued Certificates until ctx is done.
func (w *Writer) Run(ctx context.Context) {
	go func() {
		<-ctx.Done()
		w.queue.ShutDown()
	}()
	for {
		key, shutdown := w.queue.Get()
		if shutdown {
			return
		}
		if err := w.write(ctx, key); err != nil && ctx.Err() == nil {
			w.opts.Log.Warn("certificate not written; retrying", "virtualserver", key, "err", err)
			w.queue.AddRateLimited(key)
		} else {
			w.queue.Forget(key)
		}
		w.queue.Done(key)
	}
}

func (w *Writer) write(ctx context.Context, key string) error {
	if !w.opts.IsLeader() {
		return nil // Resync queues everything again on becoming leader
	}
	w.mu.Lock()
	want, ok := w.want[key]
	w.mu.Unlock()
	if !ok {
		return nil
	}
	vs, crt := want.vs, want.crt
	certs := w.opts.Client.Resource(CertificateGVR).Namespace(vs.Namespace)
	have, err := certs.Get(ctx, crt.GetName(), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		if _, err := certs.Create(ctx, crt, metav1.CreateOptions{}); err != nil {
			w.event(vs, corev1.EventTypeWarning, "BadConfig", "Error issuing Certificate for VirtualServer resource: %v", err)
			return err
		}
		w.event(vs, corev1.EventTypeNormal, "CreateCertificate", "Successfully created Certificate %q", crt.GetName())
	case err != nil:
		return err
	case !ControlledBy(have, vs.UID):
		w.event(vs, corev1.EventTypeWarning, "BadConfig",
			"Certificate %q exists and is not controlled by this VirtualServer; it is left as it is", crt.GetName())
	case Differs(have, crt):
		update := have.DeepCopy()
		update.Object["spec"] = crt.Object["spec"]
		update.SetLabels(crt.GetLabels())
		a := update.GetAnnotations()
		if crt.GetAnnotations()[TempCertAnnotation] != "" {
			if a == nil {
				a = map[string]string{}
			}
			a[TempCertAnnotation] = "true"
		} else {
			delete(a, TempCertAnnotation)
		}
		update.SetAnnotations(a)
		if _, err := certs.Update(ctx, update, metav1.UpdateOptions{}); err != nil {
			if !apierrors.IsConflict(err) {
				w.event(vs, corev1.EventTypeWarning, "BadConfig", "Error updating Certificate for VirtualServer resource: %v", err)
			}
			return err
		}
		w.event(vs, corev1.EventTypeNormal, "UpdateCertificate", "Successfully updated Certificate %q", crt.GetName())
	}
	if err := w.deleteFormer(ctx, certs, vs, crt.GetName()); err != nil {
		return err
	}
	w.mu.Lock()
	if cur, ok := w.want[key]; ok && cur.crt == crt {
		w.done[key] = want
	}
	w.mu.Unlock()
	return nil
}

// deleteFormer deletes the Certificates vs controls other than name: those
// of a tls.secret it no longer names.
func (w *Writer) deleteFormer(ctx context.Context, certs dynamic.ResourceInterface, vs *nicv1.VirtualServer, name string) error {
	list, err := certs.List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range list.Items {
		c := &list.Items[i]
		if c.GetName() == name || !ControlledBy(c, vs.UID) {
			continue
		}
		err := certs.Delete(ctx, c.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptrUID(c.GetUID())}})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		w.event(vs, corev1.EventTypeNormal, "DeleteCertificate", "Successfully deleted unrequired Certificate %q", c.GetName())
	}
	return nil
}

func ptrUID(u types.UID) *types.UID { return &u }

func (w *Writer) event(vs *nicv1.VirtualServer, typ, reason, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	level := slog.LevelInfo
	if typ == corev1.EventTypeWarning {
		level = slog.LevelWarn
	}
	w.opts.Log.Log(context.Background(), level, "certificate", "virtualserver", vs.Namespace+"/"+vs.Name, "reason", reason, "message", msg)
	if w.opts.Recorder != nil {
		w.opts.Recorder.Event(runtime.Object(vs), typ, reason, strings.TrimSpace(msg))
	}
}
