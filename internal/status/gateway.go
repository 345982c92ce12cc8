package status

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/causeway/causeway/internal/status/gatewayapi"
	"github.com/causeway/causeway/internal/writequeue"
)

// GatewayWriterOptions configure a GatewayWriter.
type GatewayWriterOptions struct {
	// Client is Gateway API's typed clientset.
	Client gatewayclient.Interface
	// IsLeader gates every write.
	IsLeader func() bool
	Log      *slog.Logger
	// Workers is how many writes may be in flight. Zero means 2.
	Workers int
	// OnWrite, when set, is told the outcome of every write (for
	// metrics), with the object's kind.
	OnWrite func(kind string, err error)
	// Now stamps new conditions; nil means time.Now.
	Now func() time.Time
}

// GatewayWriter keeps the status of Gateway API's objects of Causeway's
// classes as package gatewayapi computes it: GatewayClasses, their
// Gateways and those Gateways' ListenerSets, and the entries of ours in
// routes' status.parents (and BackendTLSPolicies' status.ancestors). It writes
// only what differs from the snapshot (or from its own last write, while
// snapshots lag behind it), with an update of the status subresource on
// the object's resourceVersion. A conflict (another controller wrote its
// entry of a route meanwhile) reads the object's status again, merges
// ours into it and updates again; an object gone meanwhile is dropped.
// After a failed apply, statuses are left as they are.
type GatewayWriter struct {
	*statusQueue[gatewayTarget] // keys are gatewayapi.Key's

	opts GatewayWriterOptions
	// get reads an object's status afresh after a conflict (getStatus;
	// tests replace it: the fake clientset has no REST client).
	get func(ctx context.Context, kind string, obj gatewayapi.Object) (gatewayapi.Object, error)

	// written holds our writes until snapshots catch up with them.
	written writequeue.Written[gatewayapi.Object]
}

type gatewayTarget struct {
	kind string
	want gatewayapi.Want
	// obj is the object to write: the stored one with want merged in.
	obj gatewayapi.Object
}

// NewGatewayWriter returns a GatewayWriter; Run starts its workers.
func NewGatewayWriter(opts GatewayWriterOptions) *GatewayWriter {
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	w := &GatewayWriter{opts: opts}
	w.get = w.getStatus
	w.statusQueue = newStatusQueue(opts.Workers, opts.IsLeader, opts.Log, "object", w.plan, w.write)
	return w
}

// conflictRetries is how many times one write reads the object again after
// a conflict before it leaves the key to the queue's backoff.
const conflictRetries = 3

// plan computes the writes o asks for.
func (w *GatewayWriter) plan(o Outcome) (map[string]gatewayTarget, bool) {
	if !o.Applied {
		// nginx still serves what it served; so does the status.
		return nil, false
	}
	targets := map[string]gatewayTarget{}
	present := map[types.UID]bool{}
	for _, t := range gatewayapi.Plan(o.GatewayAPI, metav1.NewTime(w.opts.Now())) {
		uid := t.Object.GetUID()
		present[uid] = true
		have, _ := w.written.Current(t.Key, uid, t.Object.GetResourceVersion(), t.Object)
		if obj := t.Want.Apply(have); obj != nil {
			targets[t.Key] = gatewayTarget{kind: t.Kind, want: t.Want, obj: obj}
		}
	}
	w.written.Keep(present)
	return targets, true
}

func (w *GatewayWriter) write(ctx context.Context, key string, t gatewayTarget) error {
	obj := t.obj
	for attempt := 1; ; attempt++ {
		updated, err := w.update(ctx, obj)
		if w.opts.OnWrite != nil {
			w.opts.OnWrite(t.kind, err)
		}
		switch {
		case err == nil:
			// Remembered against the version the plan saw: that is what a
			// snapshot predating the write shows.
			w.written.Record(key, obj.GetUID(), t.obj.GetResourceVersion(), updated.GetResourceVersion(), updated)
			w.opts.Log.Debug("status written", "object", key)
			return nil
		case apierrors.IsNotFound(err):
			return nil
		case !apierrors.IsConflict(err) || attempt == conflictRetries:
			return fmt.Errorf("update %s status: %w", key, err)
		}
		fresh, err := w.get(ctx, t.kind, obj)
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return fmt.Errorf("read %s status after a conflict: %w", key, err)
		case fresh.GetUID() != obj.GetUID():
			return nil // replaced by a namesake: the next sync decides
		}
		if obj = t.want.Apply(fresh); obj == nil {
			return nil // someone wrote what we want
		}
	}
}

// update writes obj's status subresource.
func (w *GatewayWriter) update(ctx context.Context, obj gatewayapi.Object) (gatewayapi.Object, error) {
	c := w.opts.Client.GatewayV1()
	opts := metav1.UpdateOptions{FieldManager: FieldManager}
	var out gatewayapi.Object
	var err error
	switch o := obj.(type) {
	case *gwv1.GatewayClass:
		out, err = nonNil(c.GatewayClasses().UpdateStatus(ctx, o, opts))
	case *gwv1.Gateway:
		out, err = nonNil(c.Gateways(o.Namespace).UpdateStatus(ctx, o, opts))
	case *gwv1.ListenerSet:
		out, err = nonNil(c.ListenerSets(o.Namespace).UpdateStatus(ctx, o, opts))
	case *gwv1.HTTPRoute:
		out, err = nonNil(c.HTTPRoutes(o.Namespace).UpdateStatus(ctx, o, opts))
	case *gwv1.GRPCRoute:
		out, err = nonNil(c.GRPCRoutes(o.Namespace).UpdateStatus(ctx, o, opts))
	case *gwv1.TLSRoute:
		out, err = nonNil(c.TLSRoutes(o.Namespace).UpdateStatus(ctx, o, opts))
	case *gwv1.TCPRoute:
		out, err = nonNil(c.TCPRoutes(o.Namespace).UpdateStatus(ctx, o, opts))
	case *gwv1.UDPRoute:
		out, err = nonNil(c.UDPRoutes(o.Namespace).UpdateStatus(ctx, o, opts))
	case *gwv1.BackendTLSPolicy:
		out, err = nonNil(c.BackendTLSPolicies(o.Namespace).UpdateStatus(ctx, o, opts))
	default:
		return nil, fmt.Errorf("no status writer for %T", obj)
	}
	return out, err
}

// nonNil turns a typed client's answer into an Object, keeping a nil
// pointer from becoming a non-nil interface.
func nonNil[T interface {
	gatewayapi.Object
	comparable
}](obj T, err error) (gatewayapi.Object, error) {
	var zero T
	if err != nil || obj == zero {
		return nil, err
	}
	return obj, nil
}

// resources are the kinds' resource names.
var resources = map[string]string{
	gatewayapi.KindGatewayClass: "gatewayclasses", gatewayapi.KindGateway: "gateways", gatewayapi.KindListenerSet: "listenersets",
	gatewayapi.KindHTTPRoute: "httproutes", gatewayapi.KindGRPCRoute: "grpcroutes",
	gatewayapi.KindTLSRoute: "tlsroutes", gatewayapi.KindTCPRoute: "tcproutes", gatewayapi.KindUDPRoute: "udproutes",
	gatewayapi.KindBackendTLSPolicy: "backendtlspolicies",
}

// getStatus reads obj's status subresource (a get of status alone is all
// the RBAC grants).
func (w *GatewayWriter) getStatus(ctx context.Context, kind string, obj gatewayapi.Object) (gatewayapi.Object, error) {
	fresh, ok := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(gatewayapi.Object)
	if !ok {
		return nil, fmt.Errorf("no status reader for %T", obj)
	}
	req := w.opts.Client.GatewayV1().RESTClient().Get().Resource(resources[kind]).Name(obj.GetName()).SubResource("status")
	if ns := obj.GetNamespace(); ns != "" {
		req = req.Namespace(ns)
	}
	if err := req.Do(ctx).Into(fresh); err != nil {
		return nil, err
	}
	return fresh, nil
}
