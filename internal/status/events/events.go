// Package events reports what happens to each Ingress of ours as
// Kubernetes Events, on transitions only:
//
//   - Normal AddedOrUpdated when a version of the Ingress is live in nginx;
//   - Warning Rejected when a problem appears (a collision loser, a missing
//     Service or secret, an invalid path...), the model's reason first in
//     the message;
//   - Warning ReloadFailed when nginx refused the Ingress's configuration
//     (it is then excluded), or when its change could not go live because
//     the reload failed, with nginx's error.
//
// Problems of other objects (a Service's dropped endpoints or annotations,
// a Secret, the ConfigMap) are Warning Events on that object, reason the
// model's, when they first appear.
//
// Ingresses of other classes are ignored silently. Every replica follows
// the transitions; only the leader writes the Events. So a hand-over
// replays nothing, and the first sync after a start is a baseline: what is
// already live is not announced again, while current problems are.
package events

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"log/slog"
	"maps"
	"reflect"
	"sync"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/status"
)

// Event reasons.
const (
	ReasonAddedOrUpdated = "AddedOrUpdated"
	ReasonRejected       = "Rejected"
	ReasonReloadFailed   = "ReloadFailed"
)

// maxMessage bounds an Event message; the API limits notes to 1 kB, and
// nginx errors can be longer.
const maxMessage = 1024

// Recorder writes Events; client-go's record.EventRecorder implements it.
type Recorder interface {
	Event(object runtime.Object, eventtype, reason, message string)
}

// Options configure a Reporter.
type Options struct {
	Recorder Recorder
	// IsLeader gates writing; transitions are tracked either way.
	IsLeader func() bool
	Log      *slog.Logger
	// WarningsOnly writes no Normal Events (AddedOrUpdated), only the
	// Warnings: ingress-nginx's --disable-sync-events.
	WarningsOnly bool
}

// Reporter turns successive Outcomes into Events.
type Reporter struct {
	opts Options

	mu     sync.Mutex
	primed bool // the first Outcome, the baseline, has been seen
	seen   map[types.NamespacedName]*state
	// others are the problems already reported per other object.
	others map[model.ObjectRef]map[string]bool
}

// Event is one Event to write.
type Event struct {
	Type, Reason, Message string
}

// state is what the Reporter remembers of one Ingress. A sync that
// changes nothing of it keeps it as it is (at 10,000 Ingresses a state,
// its version and its map made anew per Ingress and sync were 3 MiB of
// each sync's garbage, and twice the states live while it ran).
type state struct {
	uid types.UID
	// gen and ann are the generation and annotations version was computed
	// from. Cached objects are replaced, never changed, and the informers
	// share an unchanged annotation map between versions, so the same map
	// at the same generation has the same version. Unlike the object, they
	// do not keep an Ingress alive that a status write has replaced.
	gen int64
	ann map[string]string
	// version fingerprints the Ingress's spec and annotations; live is the
	// version last known live in nginx, "" if none.
	version, live string
	// problems are those already reported, by reason and message.
	problems map[string]bool
	// failed is the version and apply error already reported.
	failed string
}

// New returns a Reporter.
func New(opts Options) *Reporter {
	return &Reporter{opts: opts, seen: map[types.NamespacedName]*state{}}
}

// Observe takes a sync's Outcome and writes the Events its transitions
// call for. It only queues them (the recorder writes asynchronously), so it
// may be called from the controller's sync.
func (r *Reporter) Observe(o status.Outcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	baseline := !r.primed
	r.primed = true
	leading := r.opts.IsLeader()
	next := make(map[types.NamespacedName]*state, len(r.seen))
	for _, v := range o.Ingresses {
		if !v.Ours {
			continue // another controller's: ignored silently
		}
		key := types.NamespacedName{Namespace: v.Ingress.Namespace, Name: v.Ingress.Name}
		st, evs := transition(r.seen[key], v, o, baseline)
		next[key] = st
		for _, ev := range evs {
			r.emit(v.Ingress, ev, leading)
		}
	}
	r.seen = next
	others := make(map[model.ObjectRef]map[string]bool, len(o.Others))
	for _, op := range o.Others {
		had := r.others[op.Ref]
		now := make(map[string]bool, len(op.Problems))
		for _, p := range op.Problems {
			k := p.Reason + "\x00" + p.Message
			now[k] = true
			if had[k] {
				continue
			}
			ev := Event{corev1.EventTypeWarning, p.Reason, truncate(p.Message)}
			key := op.Ref.Kind + " " + op.Ref.Namespace + "/" + op.Ref.Name
			if !leading {
				r.opts.Log.Debug("event not written: another replica leads", "object", key, "reason", ev.Reason)
				continue
			}
			r.opts.Log.Warn("object event", "object", key, "type", ev.Type, "reason", ev.Reason, "message", ev.Message)
			r.opts.Recorder.Event(op.Object, ev.Type, ev.Reason, ev.Message)
		}
		others[op.Ref] = now
	}
	r.others = others
}

func (r *Reporter) emit(ing *networkingv1.Ingress, ev Event, leading bool) {
	key := ing.Namespace + "/" + ing.Name
	if r.opts.WarningsOnly && ev.Type == corev1.EventTypeNormal {
		r.opts.Log.Debug("event not written: --disable-sync-events", "ingress", key, "reason", ev.Reason)
		return
	}
	if !leading {
		r.opts.Log.Debug("event not written: another replica leads", "ingress", key, "type", ev.Type, "reason", ev.Reason, "message", ev.Message)
		return
	}
	level := slog.LevelInfo
	if ev.Type == corev1.EventTypeWarning {
		level = slog.LevelWarn
	}
	r.opts.Log.Log(context.Background(), level, "ingress event", "ingress", key, "type", ev.Type, "reason", ev.Reason, "message", ev.Message)
	r.opts.Recorder.Event(ing, ev.Type, ev.Reason, ev.Message)
}

// transition computes an Ingress's next state and the Events for the
// change from prev (nil if unknown). baseline marks the first Outcome
// after a start: what is live then is not announced again.
func transition(prev *state, v status.Verdict, o status.Outcome, baseline bool) (*state, []Event) {
	ing := v.Ingress
	if prev == nil || prev.uid != ing.UID {
		prev = &state{} // new, or deleted and created again
	}
	next := state{uid: ing.UID, gen: ing.Generation, ann: ing.Annotations,
		version: prev.version, live: prev.live, problems: prev.problems, failed: prev.failed}
	if prev.version == "" || prev.gen != ing.Generation || !sameMap(prev.ann, ing.Annotations) {
		next.version = version(ing)
	}
	var evs []Event
	if !o.Applied {
		// nginx still serves what it served: report only that this
		// version could not join it, once per version and error. At the
		// baseline nothing has changed yet, so nothing is blamed.
		failed := next.version + "\x00" + o.ApplyError
		if !v.Rejected && prev.live != next.version && prev.failed != failed {
			if !baseline {
				evs = append(evs, Event{corev1.EventTypeWarning, ReasonReloadFailed,
					truncate(fmt.Sprintf("Configuration for %s/%s was not applied: %s", ing.Namespace, ing.Name, o.ApplyError))})
			}
			next.failed = failed
		}
		return keep(prev, next), evs
	}
	next.failed = ""
	if v.Live(o) {
		if prev.live != next.version && !baseline {
			evs = append(evs, Event{corev1.EventTypeNormal, ReasonAddedOrUpdated,
				fmt.Sprintf("Configuration for %s/%s was added or updated", ing.Namespace, ing.Name)})
		}
		next.live = next.version
	} else {
		next.live = ""
	}
	next.problems = nil
	for _, p := range v.Problems {
		k := p.Reason + "\x00" + p.Message
		if next.problems == nil {
			next.problems = make(map[string]bool, len(v.Problems))
		}
		next.problems[k] = true
		if !prev.problems[k] {
			evs = append(evs, problemEvent(p))
		}
	}
	if maps.Equal(next.problems, prev.problems) {
		next.problems = prev.problems
	}
	return keep(prev, next), evs
}

// keep is prev when next says nothing else, else next as a new state.
func keep(prev *state, next state) *state {
	if prev.uid == next.uid && prev.gen == next.gen && sameMap(prev.ann, next.ann) && prev.version == next.version && prev.live == next.live &&
		prev.failed == next.failed && maps.Equal(prev.problems, next.problems) {
		return prev
	}
	return &next
}

// sameMap reports whether a and b are the same map (not merely equal).
func sameMap(a, b map[string]string) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// problemEvent maps a model problem to an Event: nginx's refusal is a
// ReloadFailed, everything else a Rejected naming the model's reason.
func problemEvent(p model.Problem) Event {
	if p.Reason == model.ReasonExcluded {
		return Event{corev1.EventTypeWarning, ReasonReloadFailed, truncate(p.Message)}
	}
	return Event{corev1.EventTypeWarning, ReasonRejected, truncate(p.Reason + ": " + p.Message)}
}

// version fingerprints what a user changes: the generation (bumped by
// every spec change) and the annotations, which carry settings too. Status
// writes change neither.
func version(ing *networkingv1.Ingress) string {
	h := fnv.New64a()
	_ = json.NewEncoder(h).Encode(ing.Annotations) // a string map always encodes
	return fmt.Sprintf("%d-%x", ing.Generation, h.Sum64())
}

func truncate(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	cut := maxMessage - 3
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
