package status

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/status/address"
	"github.com/causeway/causeway/internal/writequeue"
)

// Kind is one of NGINX Ingress Controller's kinds whose status the
// ResourceWriter keeps: they share state, reason and message, and differ
// in the fields below and in their messages.
type Kind struct {
	Name     string
	Resource schema.GroupVersionResource
	// Endpoints: the status shows externalEndpoints, so it waits for the
	// published addresses to be known.
	Endpoints bool
	// ReferencedBy: the status names the VirtualServer that uses it.
	ReferencedBy bool
	// valid and rejected are the messages of the Valid and Invalid
	// states, for "namespace/name".
	valid, rejected func(key string) string
}

var (
	configurationFor = func(key string) string { return "Configuration for " + key + " was added or updated" }
	rejectedWith     = func(kind string) func(string) string {
		return func(key string) string { return kind + " " + key + " was rejected with error: " }
	}

	// VirtualServers' status.
	VirtualServers = Kind{Name: "VirtualServer", Resource: nicv1.SchemeGroupVersion.WithResource("virtualservers"),
		Endpoints: true, valid: configurationFor, rejected: rejectedWith("VirtualServer")}
	// VirtualServerRoutes' status.
	VirtualServerRoutes = Kind{Name: "VirtualServerRoute", Resource: nicv1.SchemeGroupVersion.WithResource("virtualserverroutes"),
		Endpoints: true, ReferencedBy: true, valid: configurationFor, rejected: rejectedWith("VirtualServerRoute")}
	// TransportServers' status (no externalEndpoints, as in NIC).
	TransportServers = Kind{Name: "TransportServer", Resource: nicv1.SchemeGroupVersion.WithResource("transportservers"),
		valid: configurationFor, rejected: rejectedWith("TransportServer")}
	// Policies' status, with NIC's own wording.
	Policies = Kind{Name: "Policy", Resource: nicv1.SchemeGroupVersion.WithResource("policies"),
		valid:    func(key string) string { return "Policy " + key + " was added or updated" },
		rejected: func(key string) string { return "Policy " + key + " is invalid and was rejected: " }}

	// Kinds are the kinds the ResourceWriter writes.
	Kinds = []Kind{VirtualServers, VirtualServerRoutes, TransportServers, Policies}
)

// Reasons NIC writes into these statuses (and their Events).
const (
	ReasonAddedOrUpdated            = "AddedOrUpdated"
	ReasonAddedOrUpdatedWithWarning = "AddedOrUpdatedWithWarning"
	ReasonRejected                  = "Rejected"
)

// EndpointPorts is what externalEndpoints[].ports shows when
// ResourceWriterOptions.EndpointPorts is not set, in NIC's format.
const EndpointPorts = "[80,443]"

// maxStatusMessage bounds status.message; an object with many problems
// would otherwise carry all of them in every read of it.
const maxStatusMessage = 1024

// ResourceStatus is the status of any of the Kinds; a field the kind lacks
// stays empty.
type ResourceStatus struct {
	State, Reason, Message string
	ReferencedBy           string
	ExternalEndpoints      []nicv1.ExternalEndpoint
}

func (a ResourceStatus) equal(b ResourceStatus) bool {
	if a.State != b.State || a.Reason != b.Reason || a.Message != b.Message || a.ReferencedBy != b.ReferencedBy ||
		len(a.ExternalEndpoints) != len(b.ExternalEndpoints) {
		return false
	}
	for i := range a.ExternalEndpoints {
		if a.ExternalEndpoints[i] != b.ExternalEndpoints[i] {
			return false
		}
	}
	return true
}

// ResourceVerdict is what a sync made of one object of ours of a Kind.
type ResourceVerdict struct {
	Kind Kind
	// Object is the object as the snapshot holds it; Status its status.
	Object metav1.Object
	Status ResourceStatus
	// Rejected is true when the object was left out of the configuration.
	Rejected bool
	// Problems are the model's problems with the object, in model order.
	Problems []model.Problem
	// ReferencedBy is the VirtualServer ("namespace/name") that uses a
	// VirtualServerRoute.
	ReferencedBy string
}

// Key is "namespace/name".
func (v ResourceVerdict) Key() string { return v.Object.GetNamespace() + "/" + v.Object.GetName() }

// WantStatus is the status NIC would write for verdict v while endpoints
// are published:
//
//   - Valid, AddedOrUpdated: no problems;
//   - Warning, with the reason of a problem that is itself a status
//     reason (a VirtualServerRoute no VirtualServer uses:
//     NoVirtualServerFound, Ignored), else AddedOrUpdatedWithWarning:
//     problems, but still served;
//   - Invalid, Rejected: left out of the configuration.
//
// NIC keeps externalEndpoints on an Invalid object too (it sets them on
// every status write), and so does this.
func WantStatus(v ResourceVerdict, endpoints []nicv1.ExternalEndpoint) ResourceStatus {
	key := v.Key()
	msgs := make([]string, 0, len(v.Problems))
	reason := ReasonAddedOrUpdatedWithWarning
	for _, p := range v.Problems {
		msgs = append(msgs, p.Message)
		if p.Reason == model.ReasonNoVirtualServerFound || p.Reason == model.ReasonIgnored {
			reason = p.Reason
		}
	}
	var s ResourceStatus
	switch {
	case v.Rejected:
		s.State, s.Reason = nicv1.StateInvalid, ReasonRejected
		s.Message = v.Kind.rejected(key) + strings.Join(msgs, "; ")
	case reason != ReasonAddedOrUpdatedWithWarning && len(msgs) == 1:
		s.State, s.Reason, s.Message = nicv1.StateWarning, reason, msgs[0]
	case len(msgs) > 0:
		s.State, s.Reason = nicv1.StateWarning, reason
		s.Message = "Configuration for " + key + " was added or updated with warning(s): " + strings.Join(msgs, "; ")
	default:
		s.State, s.Reason, s.Message = nicv1.StateValid, ReasonAddedOrUpdated, v.Kind.valid(key)
	}
	s.Message = truncateMessage(s.Message, maxStatusMessage)
	if v.Kind.Endpoints {
		s.ExternalEndpoints = endpoints
	}
	if v.Kind.ReferencedBy {
		s.ReferencedBy = v.ReferencedBy
	}
	return s
}

// truncateMessage cuts s to at most limit bytes, on a rune boundary, and
// marks the cut with "...".
func truncateMessage(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit - 3
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// ResourceWriterOptions configure a ResourceWriter.
type ResourceWriterOptions struct {
	Client dynamic.Interface
	// Addresses are the published addresses, shown as externalEndpoints;
	// nil publishes none (the state is written all the same).
	Addresses address.Source
	// EndpointPorts, when set, says what externalEndpoints[].ports show
	// (the published Service's ports to nginx, as NIC has them); nil
	// shows EndpointPorts.
	EndpointPorts func() string
	// IsLeader gates every write.
	IsLeader func() bool
	Log      *slog.Logger
	// Workers is how many writes may be in flight. Zero means 2.
	Workers int
	// OnWrite, when set, is told the outcome of every write (for metrics).
	OnWrite func(kind string, err error)
}

// ResourceWriter keeps the status of every object of ours of the Kinds as
// NGINX Ingress Controller writes it: state, reason, message, and where
// the kind has them externalEndpoints and referencedBy. After a failed
// apply, statuses are left as they are. Objects of other classes are
// never touched.
//
// Like the Ingress Writer it writes only what differs from the snapshot,
// through a rate-limited work queue, with a JSON merge patch of the status
// subresource conditional on the snapshot's resourceVersion: a conflict is
// retried once a newer snapshot decides, and an object gone meanwhile is
// dropped.
type ResourceWriter struct {
	*statusQueue[resourceTarget] // keys are "Kind/namespace/name"

	opts ResourceWriterOptions

	// written holds our writes until snapshots catch up with them.
	written writequeue.Written[ResourceStatus]
}

type resourceTarget struct {
	kind Kind
	obj  metav1.Object
	rv   string
	want ResourceStatus
}

// NewResourceWriter returns a ResourceWriter; Run starts its workers.
func NewResourceWriter(opts ResourceWriterOptions) *ResourceWriter {
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	w := &ResourceWriter{opts: opts}
	w.statusQueue = newStatusQueue(opts.Workers, opts.IsLeader, opts.Log, "object", w.plan, w.write)
	return w
}

// plan computes the writes o asks for.
func (w *ResourceWriter) plan(o Outcome) (map[string]resourceTarget, bool) {
	if !o.Applied {
		// nginx still serves what it served; so does the status. Targets
		// planned from an earlier, applied Outcome stay: they describe it.
		return nil, false
	}
	var endpoints []nicv1.ExternalEndpoint
	known := true
	if w.opts.Addresses != nil {
		addrs, ok := w.opts.Addresses.Addresses()
		known = ok
		ports := EndpointPorts
		if w.opts.EndpointPorts != nil {
			ports = w.opts.EndpointPorts()
		}
		for _, a := range addrs {
			endpoints = append(endpoints, nicv1.ExternalEndpoint{IP: a.IP, Hostname: a.Hostname, Ports: ports})
		}
	}
	targets := make(map[string]resourceTarget)
	present := make(map[types.UID]bool, len(o.Resources))
	for _, v := range o.Resources {
		if v.Kind.Endpoints && !known {
			continue // do not write endpoints we cannot yet know
		}
		key := v.Kind.Name + "/" + v.Key()
		present[v.Object.GetUID()] = true
		have, rv := w.written.Current(key, v.Object.GetUID(), v.Object.GetResourceVersion(), v.Status)
		want := WantStatus(v, endpoints)
		if have.equal(want) {
			continue
		}
		targets[key] = resourceTarget{kind: v.Kind, obj: v.Object, rv: rv, want: want}
	}
	w.written.Keep(present)
	return targets, true
}

func (w *ResourceWriter) write(ctx context.Context, key string, t resourceTarget) error {
	patch, err := resourcePatch(t.kind, t.rv, t.want)
	if err != nil {
		return err
	}
	// A merge patch of the status subresource: nothing but status changes,
	// and the resourceVersion makes it conditional on the snapshot.
	updated, err := w.opts.Client.Resource(t.kind.Resource).Namespace(t.obj.GetNamespace()).Patch(ctx, t.obj.GetName(),
		types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager}, "status")
	if w.opts.OnWrite != nil {
		w.opts.OnWrite(t.kind.Name, err)
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("patch %s status: %w", t.kind.Name, err)
	}
	if updated != nil {
		w.written.Record(key, t.obj.GetUID(), t.rv, updated.GetResourceVersion(), t.want)
	}
	w.opts.Log.Debug("status written", "object", key, "state", t.want.State)
	return nil
}

// resourcePatch is the merge patch that makes an object's status want. Every
// field of the kind is spelled out, an empty one as null, so that the
// patch removes what the wanted status lacks.
func resourcePatch(kind Kind, resourceVersion string, want ResourceStatus) ([]byte, error) {
	field := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	status := map[string]any{
		"state":   field(want.State),
		"reason":  field(want.Reason),
		"message": field(want.Message),
	}
	if kind.Endpoints {
		var endpoints any
		if len(want.ExternalEndpoints) > 0 {
			endpoints = want.ExternalEndpoints
		}
		status["externalEndpoints"] = endpoints
	}
	if kind.ReferencedBy {
		status["referencedBy"] = field(want.ReferencedBy)
	}
	data, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": resourceVersion},
		"status":   status,
	})
	if err != nil {
		return nil, fmt.Errorf("encode %s status patch: %w", kind.Name, err)
	}
	return data, nil
}
