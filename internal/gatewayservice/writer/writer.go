// Package writer keeps, on the leader, the Service of each Gateway of
// Causeway's classes, with the ports of the ListenerSets it admits
// (package gatewayservice plans them): created when
// missing, updated when it differs, and deleted when its Gateway is gone
// or no longer of a class of ours. It writes through the one leader-side
// write queue (package writequeue), and touches only Services labelled
// as ours, in the controller's namespace.
package writer

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/gatewayservice"
	"github.com/causeway/causeway/internal/source"
	"github.com/causeway/causeway/internal/writequeue"
)

// Options configure a Writer.
type Options struct {
	Client  kubernetes.Interface
	Service gatewayservice.Options
	// ConfigMap is the controller's ("namespace/name"): found in a
	// snapshot, in the Services' namespace, it owns them (Service.Owner),
	// so that they go with the installation.
	ConfigMap string
	// IsLeader gates writes and reports; nil means always.
	IsLeader func() bool
	// Recorder writes Warning Events on a Gateway whose Service cannot be
	// planned or written; nil writes none (the log still says).
	Recorder record.EventRecorder
	Log      *slog.Logger
}

// Writer writes the planned Services.
type Writer struct {
	opts  Options
	queue *writequeue.Queue[target] // by Service name

	mu sync.Mutex
	// gateways, sets and have are the last Observe's input.
	gateways []*gwv1.Gateway
	sets     gatewayservice.ListenerSets
	have     []*corev1.Service
	owner    *metav1.OwnerReference
	// written remembers each write until snapshots catch up with it, so
	// that a plan never gives out a port a Service just created holds.
	written map[string]write
	// reported are the Problems reported, so that each is said once.
	reported map[string]bool
}

type write struct {
	// before is the resourceVersion the write was made on ("" for a
	// create); svc what it left (nil for a delete).
	before string
	svc    *corev1.Service
}

// target is one Service's write: want created or updated over have, or
// del deleted.
type target struct {
	gw         *gwv1.Gateway
	want, have *corev1.Service
	del        *corev1.Service
}

// New returns a Writer; Run drains its queue.
func New(opts Options) *Writer {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.IsLeader == nil {
		opts.IsLeader = func() bool { return true }
	}
	w := &Writer{opts: opts, written: map[string]write{}, reported: map[string]bool{}}
	w.queue = writequeue.New(writequeue.Options{
		// Several Gateways' Services are written at once: a listener is
		// served only once its Service exists.
		Workers:   4,
		BaseDelay: 500 * time.Millisecond, MaxDelay: time.Minute,
		IsLeader: opts.IsLeader, // Resync plans again on becoming leader
		OnRetry: func(key string, err error) {
			opts.Log.Warn("Gateway Service not written; retrying", "service", opts.Service.Namespace+"/"+key, "err", err)
		},
	}, w.write)
	return w
}

// Gateways are the Gateways of snap whose class is one of Causeway's
// (GatewayClass spec.controllerName).
func Gateways(snap *source.Snapshot) []*gwv1.Gateway {
	ours := map[string]bool{}
	for _, c := range snap.GatewayClasses {
		if gateway.OurClass(c) {
			ours[c.Name] = true
		}
	}
	var out []*gwv1.Gateway
	for _, g := range snap.Gateways {
		if ours[string(g.Spec.GatewayClassName)] {
			out = append(out, g)
		}
	}
	return out
}

// Observe takes a sync's snapshot and queues the Services that need
// writing. Every change of a Gateway, of a ListenerSet (its listener ports
// join its Gateway's Service) or of a Namespace's labels (a Gateway's
// allowedListeners selector reads them) makes a sync, so a snapshot.
func (w *Writer) Observe(snap *source.Snapshot) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.gateways, w.have = Gateways(snap), snap.GatewayServices
	w.sets = gatewayservice.ListenerSets{Sets: snap.ListenerSets, Namespaces: snap.Namespaces}
	w.owner = w.ownerOf(snap)
	w.planLocked()
}

// Resync plans again and reports every Problem anew: on becoming the
// leader.
func (w *Writer) Resync() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reported = map[string]bool{}
	w.planLocked()
}

// Run writes until ctx is done.
func (w *Writer) Run(ctx context.Context) { w.queue.Run(ctx) }

// Pending is the number of writes still to do (for tests).
func (w *Writer) Pending() int { return w.queue.Pending() }

// ownerOf is the owner reference to the controller's ConfigMap in snap,
// nil when it is not there or not in the Services' namespace.
func (w *Writer) ownerOf(snap *source.Snapshot) *metav1.OwnerReference {
	ns, name, _ := strings.Cut(w.opts.ConfigMap, "/")
	if ns != w.opts.Service.Namespace {
		return nil
	}
	for _, cm := range snap.ConfigMaps {
		if cm.Namespace == ns && cm.Name == name && cm.UID != "" {
			return &metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: name, UID: cm.UID}
		}
	}
	return nil
}

func (w *Writer) planLocked() {
	have := w.currentLocked()
	opts := w.opts.Service
	opts.Owner = w.owner
	plan := gatewayservice.Desired(w.gateways, w.sets, have, opts)
	w.reportLocked(plan)
	byName := map[string]*corev1.Service{}
	for _, s := range have {
		byName[s.Name] = s
	}
	gws := map[string]*gwv1.Gateway{}
	for _, g := range w.gateways {
		gws[gatewayservice.ServiceName(g.Namespace, g.Name)] = g
	}
	targets := map[string]target{}
	for name, want := range plan.Want {
		if h := byName[name]; h == nil || Differs(h, want) {
			targets[name] = target{gw: gws[name], want: want, have: h}
		}
	}
	for _, s := range plan.Delete {
		targets[s.Name] = target{del: s}
	}
	w.queue.Set(targets)
}

// currentLocked are the Services of ours as the last snapshot shows them,
// with this Writer's writes that it does not show yet in their place.
func (w *Writer) currentLocked() []*corev1.Service {
	byName := map[string]*corev1.Service{}
	for _, s := range w.have {
		if s.Namespace == w.opts.Service.Namespace {
			byName[s.Name] = s
		}
	}
	for name, wr := range w.written {
		rv := ""
		if s := byName[name]; s != nil {
			rv = s.ResourceVersion
		}
		switch {
		case rv != wr.before:
			delete(w.written, name) // the snapshot caught up, or moved on
		case wr.svc == nil:
			delete(byName, name)
		default:
			byName[name] = wr.svc
		}
	}
	out := make([]*corev1.Service, 0, len(byName))
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, byName[name])
	}
	return out
}

// reportLocked logs, and records as a Warning Event on the Gateway, each
// Problem of plan not reported yet; only the leader, which acts on them.
func (w *Writer) reportLocked(plan gatewayservice.Plan) {
	if !w.opts.IsLeader() {
		return
	}
	now := map[string]bool{}
	for _, p := range plan.Problems {
		key := p.String()
		now[key] = true
		if w.reported[key] {
			continue
		}
		w.opts.Log.Warn("Gateway Service not planned", "gateway", p.Object.Namespace+"/"+p.Object.Name, "reason", p.Reason, "message", p.Message)
		if g := w.find(p.Object.Namespace, p.Object.Name); g != nil {
			w.event(g, p.Reason, p.Message)
		}
	}
	w.reported = now
}

func (w *Writer) find(ns, name string) *gwv1.Gateway {
	for _, g := range w.gateways {
		if g.Namespace == ns && g.Name == name {
			return g
		}
	}
	return nil
}

func (w *Writer) event(g *gwv1.Gateway, reason, msg string) {
	if w.opts.Recorder != nil && g != nil {
		w.opts.Recorder.Event(g, corev1.EventTypeWarning, reason, msg)
	}
}

// write makes one Service what its target says.
func (w *Writer) write(ctx context.Context, name string, t target) error {
	services := w.opts.Client.CoreV1().Services(w.opts.Service.Namespace)
	var (
		rec write
		err error
	)
	switch {
	case t.del != nil:
		opts := metav1.DeleteOptions{}
		if t.del.UID != "" {
			// Never a Service of that name made since the plan.
			opts.Preconditions = &metav1.Preconditions{UID: &t.del.UID}
		}
		err = services.Delete(ctx, name, opts)
		if apierrors.IsNotFound(err) {
			err = nil
		}
		if err != nil {
			return err
		}
		o, _ := gatewayservice.Parse(t.del)
		w.opts.Log.Info("Gateway Service deleted: its Gateway is gone or not of a class of ours", "service", t.del.Namespace+"/"+name, "gateway", o.Key())
		rec = write{before: t.del.ResourceVersion}
	case t.have == nil:
		var made *corev1.Service
		made, err = services.Create(ctx, t.want, metav1.CreateOptions{})
		if err != nil {
			if apierrors.IsAlreadyExists(err) {
				err = fmt.Errorf("%w (a Service of that name that is not labelled %s=%s is left alone)", err,
					gatewayservice.LabelManagedBy, gatewayservice.ManagedBy)
			}
			w.failed(t, "create", err)
			return err
		}
		w.opts.Log.Info("Gateway Service created", "service", made.Namespace+"/"+name, "gateway", t.gw.Namespace+"/"+t.gw.Name, "ports", portList(made))
		rec = write{before: "", svc: made}
	default:
		update := t.have.DeepCopy()
		Apply(update, t.want)
		var made *corev1.Service
		made, err = services.Update(ctx, update, metav1.UpdateOptions{})
		if err != nil {
			if !apierrors.IsConflict(err) {
				w.failed(t, "update", err)
			}
			return err
		}
		w.opts.Log.Info("Gateway Service updated", "service", made.Namespace+"/"+name, "gateway", t.gw.Namespace+"/"+t.gw.Name, "ports", portList(made))
		rec = write{before: t.have.ResourceVersion, svc: made}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.written[name] = rec
	// Plan again against this write: a plan made while it ran took the
	// Service as it was before.
	w.planLocked()
	return nil
}

// failed reports a write that failed (it is retried).
func (w *Writer) failed(t target, verb string, err error) {
	msg := fmt.Sprintf("cannot %s Service %s/%s for this Gateway: %v", verb, t.want.Namespace, t.want.Name, err)
	w.opts.Log.Warn("Gateway Service not written", "gateway", t.gw.Namespace+"/"+t.gw.Name, "message", msg)
	w.event(t.gw, "ServiceNotWritten", msg)
}

// Differs reports whether have, a Service of ours, lacks something want
// sets: its labels, annotations (or has a spec.infrastructure key want
// dropped), owners, selector, type, or ports (by name, port,
// protocol and targetPort; node ports are the API server's).
func Differs(have, want *corev1.Service) bool {
	for k, v := range want.Labels {
		if have.Labels[k] != v {
			return true
		}
	}
	for k, v := range want.Annotations {
		if have.Annotations[k] != v {
			return true
		}
	}
	if len(gatewayservice.StaleInfrastructure(have, want)) > 0 {
		return true
	}
	for _, o := range want.OwnerReferences {
		if !hasOwner(have, o.UID) {
			return true
		}
	}
	return !maps.Equal(have.Spec.Selector, want.Spec.Selector) || have.Spec.Type != want.Spec.Type ||
		!slices.EqualFunc(have.Spec.Ports, want.Spec.Ports, func(a, b corev1.ServicePort) bool {
			return a.Name == b.Name && a.Port == b.Port && a.Protocol == b.Protocol && a.TargetPort == b.TargetPort
		})
}

// Apply sets onto have, a copy of the Service stored, what want sets and
// removes the spec.infrastructure keys want dropped; the rest (cluster
// IPs, other labels and annotations) stays, and so does the
// node port of a port kept (the API server drops it for a ClusterIP
// Service).
func Apply(have, want *corev1.Service) {
	if have.Labels == nil {
		have.Labels = map[string]string{}
	}
	gatewayservice.RemoveInfrastructure(have, gatewayservice.StaleInfrastructure(have, want))
	maps.Copy(have.Labels, want.Labels)
	if len(want.Annotations) > 0 {
		if have.Annotations == nil {
			have.Annotations = map[string]string{}
		}
		maps.Copy(have.Annotations, want.Annotations)
	}
	for _, o := range want.OwnerReferences {
		if !hasOwner(have, o.UID) {
			have.OwnerReferences = append(have.OwnerReferences, o)
		}
	}
	have.Spec.Selector = maps.Clone(want.Spec.Selector)
	have.Spec.Type = want.Spec.Type
	ports := slices.Clone(want.Spec.Ports)
	for i := range ports {
		for _, old := range have.Spec.Ports {
			if old.Port == ports[i].Port && old.Protocol == ports[i].Protocol {
				ports[i].NodePort = old.NodePort
			}
		}
	}
	have.Spec.Ports = ports
}

func hasOwner(s *corev1.Service, uid types.UID) bool {
	return slices.ContainsFunc(s.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == uid })
}

func portList(s *corev1.Service) string {
	out := ""
	for i, p := range s.Spec.Ports {
		if i > 0 {
			out += ","
		}
		out += fmt.Sprintf("%d/%s->%s", p.Port, p.Protocol, p.TargetPort.String())
	}
	return out
}
