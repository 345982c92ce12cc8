package events

import (
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/status"
)

type recorded struct {
	name string
	Event
}

type fakeRecorder struct{ got []recorded }

func (f *fakeRecorder) Event(obj runtime.Object, typ, reason, message string) {
	name := obj.(metav1.Object).GetName()
	if _, ok := obj.(*networkingv1.Ingress); !ok {
		name = obj.GetObjectKind().GroupVersionKind().Kind + "/" + name
	}
	f.got = append(f.got, recorded{name, Event{typ, reason, message}})
}

func ing(name string, uid types.UID, generation int64) *networkingv1.Ingress {
	return &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: uid, Generation: generation}}
}

func problem(name, reason, msg string, rejected bool) model.Problem {
	return model.Problem{Object: model.ObjectRef{Kind: "Ingress", Namespace: "ns", Name: name}, Reason: reason, Message: msg, Rejected: rejected}
}

func applied(vs ...status.Verdict) status.Outcome {
	return status.Outcome{Applied: true, Ingresses: vs}
}

func failed(err string, vs ...status.Verdict) status.Outcome {
	return status.Outcome{ApplyError: err, Ingresses: vs}
}

func ours(i *networkingv1.Ingress, problems ...model.Problem) status.Verdict {
	v := status.Verdict{Ingress: i, Ours: true, Problems: problems}
	for _, p := range problems {
		v.Rejected = v.Rejected || p.Rejected
	}
	return v
}

const added = "Configuration for ns/%s was added or updated"

func normal(name string) recorded {
	return recorded{name, Event{corev1.EventTypeNormal, ReasonAddedOrUpdated, strings.Replace(added, "%s", name, 1)}}
}

func warning(name, reason, msg string) recorded {
	return recorded{name, Event{corev1.EventTypeWarning, reason, msg}}
}

// TestTransitions is the event specification: each row is a sequence of
// sync outcomes after a baseline, and the events it must produce.
func TestTransitions(t *testing.T) {
	a1 := ing("a", "uid-a", 1)
	a2 := ing("a", "uid-a", 2)
	aNew := ing("a", "uid-a2", 1)
	b := ing("b", "uid-b", 1)
	collision := problem("a", model.ReasonCollision, "host taken", false)
	refused := problem("a", model.ReasonExcluded, "excluded: nginx refused its configuration: boom", true)
	for _, tc := range []struct {
		name     string
		baseline status.Outcome
		steps    []status.Outcome
		want     []recorded
	}{
		{
			name:  "a new Ingress going live is announced once",
			steps: []status.Outcome{applied(ours(a1)), applied(ours(a1)), applied(ours(a1))},
			want:  []recorded{normal("a")},
		},
		{
			name:     "what is live at the baseline is not announced again",
			baseline: applied(ours(a1)),
			steps:    []status.Outcome{applied(ours(a1))},
		},
		{
			name:     "problems present at the baseline are reported",
			baseline: applied(ours(a1, collision)),
			want:     []recorded{warning("a", ReasonRejected, "Collision: host taken")},
		},
		{
			name:     "a new generation is announced",
			baseline: applied(ours(a1)),
			steps:    []status.Outcome{applied(ours(a2)), applied(ours(a2))},
			want:     []recorded{normal("a")},
		},
		{
			name:     "an annotation change is announced",
			baseline: applied(ours(a1)),
			steps: []status.Outcome{applied(ours(func() *networkingv1.Ingress {
				i := a1.DeepCopy()
				i.Annotations = map[string]string{"x": "y"}
				return i
			}()))},
			want: []recorded{normal("a")},
		},
		{
			name:     "a status-only change is not",
			baseline: applied(ours(a1)),
			steps: []status.Outcome{applied(ours(func() *networkingv1.Ingress {
				i := a1.DeepCopy()
				i.ResourceVersion = "99"
				i.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.1"}}
				return i
			}()))},
		},
		{
			name:  "a degraded Ingress is live and warned about, once",
			steps: []status.Outcome{applied(ours(a1, collision)), applied(ours(a1, collision))},
			want:  []recorded{normal("a"), warning("a", ReasonRejected, "Collision: host taken")},
		},
		{
			name:  "a problem that goes and comes back is reported again",
			steps: []status.Outcome{applied(ours(a1, collision)), applied(ours(a1)), applied(ours(a1, collision))},
			want: []recorded{normal("a"), warning("a", ReasonRejected, "Collision: host taken"),
				warning("a", ReasonRejected, "Collision: host taken")},
		},
		{
			name:  "nginx refusing an Ingress is a ReloadFailed, not live",
			steps: []status.Outcome{applied(ours(a1, refused))},
			want:  []recorded{warning("a", ReasonReloadFailed, refused.Message)},
		},
		{
			name:     "a fixed Ingress is announced",
			baseline: applied(ours(a1, refused)),
			steps:    []status.Outcome{applied(ours(a2))},
			want:     []recorded{warning("a", ReasonReloadFailed, refused.Message), normal("a")},
		},
		{
			name:     "a change that cannot go live is a ReloadFailed, once",
			baseline: applied(ours(a1)),
			steps:    []status.Outcome{failed("nginx -t failed: x", ours(a2)), failed("nginx -t failed: x", ours(a2)), applied(ours(a2))},
			want: []recorded{warning("a", ReasonReloadFailed, "Configuration for ns/a was not applied: nginx -t failed: x"),
				normal("a")},
		},
		{
			name:     "a failed apply blames only what changed",
			baseline: applied(ours(a1)),
			steps:    []status.Outcome{failed("boom", ours(a1), ours(b))},
			want:     []recorded{warning("b", ReasonReloadFailed, "Configuration for ns/b was not applied: boom")},
		},
		{
			name:     "a failed apply at the baseline blames nobody",
			baseline: failed("boom", ours(a1)),
			steps:    []status.Outcome{failed("boom", ours(a1))},
		},
		{
			name:  "another class is ignored silently",
			steps: []status.Outcome{applied(status.Verdict{Ingress: a1}), applied(status.Verdict{Ingress: a2})},
		},
		{
			name:     "leaving our class and coming back is announced",
			baseline: applied(ours(a1)),
			steps:    []status.Outcome{applied(status.Verdict{Ingress: a2}), applied(ours(a2))},
			want:     []recorded{normal("a")},
		},
		{
			name:     "deleted and created again under the same name is new",
			baseline: applied(ours(a1)),
			steps:    []status.Outcome{applied(ours(aNew))},
			want:     []recorded{normal("a")},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &fakeRecorder{}
			r := New(Options{Recorder: rec, IsLeader: func() bool { return true }, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
			r.Observe(tc.baseline)
			for _, o := range tc.steps {
				r.Observe(o)
			}
			if !reflect.DeepEqual(rec.got, tc.want) && !(len(rec.got) == 0 && len(tc.want) == 0) {
				t.Errorf("events:\n got %v\nwant %v", rec.got, tc.want)
			}
		})
	}
}

// TestFollowerTracksSilently checks that a replica that does not lead
// writes nothing but keeps up, so that on taking over it does not replay
// what the old leader already reported.
func TestFollowerTracksSilently(t *testing.T) {
	rec := &fakeRecorder{}
	leading := false
	r := New(Options{Recorder: rec, IsLeader: func() bool { return leading }, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	r.Observe(applied())
	r.Observe(applied(ours(ing("a", "uid-a", 1), problem("a", model.ReasonMissingSecret, "gone", false))))
	if len(rec.got) != 0 {
		t.Fatalf("a follower wrote %v", rec.got)
	}
	leading = true
	r.Observe(applied(ours(ing("a", "uid-a", 1), problem("a", model.ReasonMissingSecret, "gone", false))))
	r.Observe(applied(ours(ing("a", "uid-a", 2))))
	want := []recorded{normal("a")}
	if !reflect.DeepEqual(rec.got, want) {
		t.Errorf("after taking over: %v, want %v", rec.got, want)
	}
}

func TestTruncate(t *testing.T) {
	long := strings.Repeat("é", maxMessage)
	got := truncate(long)
	if len(got) > maxMessage || !strings.HasSuffix(got, "...") {
		t.Errorf("truncate gave %d bytes", len(got))
	}
	if !strings.HasPrefix(long, strings.TrimSuffix(got, "...")) {
		t.Error("truncate split a character")
	}
	if truncate("short") != "short" {
		t.Error("short message changed")
	}
}

// Problems of other objects (a Service's dropped endpoints, say) are
// Warning Events on that object with the model's reason, once per problem
// while it lasts, and again if it returns.
func TestOtherObjectProblems(t *testing.T) {
	svc := &corev1.Service{TypeMeta: metav1.TypeMeta{Kind: "Service"}, ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}}
	ref := model.ObjectRef{Kind: "Service", Namespace: "ns", Name: "web"}
	dropped := model.Problem{Object: ref, Reason: "DroppedEndpoints", Message: "2 addresses dropped"}
	with := func(ps ...model.Problem) status.Outcome {
		o := applied()
		if len(ps) > 0 {
			o.Others = []status.ObjectProblems{{Ref: ref, Object: svc, Problems: ps}}
		}
		return o
	}
	rec := &fakeRecorder{}
	r := New(Options{Recorder: rec, IsLeader: func() bool { return true }, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	for _, o := range []status.Outcome{with(dropped), with(dropped), with(), with(dropped)} {
		r.Observe(o)
	}
	want := []recorded{warning("Service/web", "DroppedEndpoints", "2 addresses dropped"), warning("Service/web", "DroppedEndpoints", "2 addresses dropped")}
	if !reflect.DeepEqual(rec.got, want) {
		t.Errorf("events:\n got %v\nwant %v", rec.got, want)
	}
}

// TestWarningsOnly: with --disable-sync-events no Normal AddedOrUpdated
// Event is written; a Warning still is.
func TestWarningsOnly(t *testing.T) {
	rec := &fakeRecorder{}
	r := New(Options{Recorder: rec, IsLeader: func() bool { return true }, WarningsOnly: true, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	r.Observe(applied())
	r.Observe(applied(ours(ing("a", "uid-a", 1))))
	r.Observe(applied(ours(ing("a", "uid-a", 2), problem("a", model.ReasonMissingSecret, "gone", false))))
	want := []recorded{warning("a", ReasonRejected, model.ReasonMissingSecret+": gone")}
	if !reflect.DeepEqual(rec.got, want) {
		t.Errorf("events %v, want %v", rec.got, want)
	}
}

// TestStateKept: a sync that changes nothing of an Ingress keeps its
// state as it was, problems included, rather than making it again; a
// new version of the object, or a change of what is live, makes a new one.
func TestStateKept(t *testing.T) {
	rec := &fakeRecorder{}
	r := New(Options{Recorder: rec, IsLeader: func() bool { return true }, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	a, b := ing("a", "uid-a", 1), ing("b", "uid-b", 1)
	gone := problem("b", model.ReasonMissingSecret, "gone", false)
	sync := func() status.Outcome { return applied(ours(a), ours(b, gone)) }
	r.Observe(applied())
	r.Observe(sync())
	keyA, keyB := types.NamespacedName{Namespace: "ns", Name: "a"}, types.NamespacedName{Namespace: "ns", Name: "b"}
	sa, sb := r.seen[keyA], r.seen[keyB]
	r.Observe(sync())
	if r.seen[keyA] != sa || r.seen[keyB] != sb {
		t.Error("an unchanged sync made the states again")
	}
	r.Observe(failed("nginx refused it", ours(a), ours(b, gone)))
	if r.seen[keyA] != sa {
		t.Error("a failed apply of nothing new changed a's state")
	}
	a2 := ing("a", "uid-a", 2)
	r.Observe(applied(ours(a2), ours(b, gone)))
	sa2 := r.seen[keyA]
	if sa2 == sa || sa2.gen != 2 || sa2.live != sa2.version || sa2.version == sa.version {
		t.Errorf("a's new generation: state %+v, want a new one live at the new version", sa2)
	}
	// A status write comes back as a new object of the same generation,
	// its annotation map shared by the informer: the state stays.
	annotated := a2.DeepCopy()
	annotated.Annotations = map[string]string{"k": "v"}
	r.Observe(applied(ours(annotated), ours(b, gone)))
	sa2 = r.seen[keyA]
	written := annotated.DeepCopy()
	written.ResourceVersion, written.Annotations = "2", annotated.Annotations
	r.Observe(applied(ours(written), ours(b, gone)))
	if r.seen[keyA] != sa2 {
		t.Error("a status write (same generation, same annotations) made a's state again")
	}
	// Equal annotations in a map of their own: the same version, no Event.
	copied := written.DeepCopy()
	r.Observe(applied(ours(copied), ours(b, gone)))
	if st := r.seen[keyA]; st.version != sa2.version {
		t.Errorf("equal annotations in another map: version %q, want %q", st.version, sa2.version)
	}
	// Changed annotations at the same generation: a new version, live.
	changed := copied.DeepCopy()
	changed.Annotations["k"] = "w"
	r.Observe(applied(ours(changed), ours(b, gone)))
	if st := r.seen[keyA]; st.version == sa2.version || st.live != st.version {
		t.Errorf("changed annotations: state %+v, want a new version live", st)
	}
	want := []recorded{normal("a"), normal("b"), warning("b", ReasonRejected, model.ReasonMissingSecret+": gone"), normal("a"), normal("a"), normal("a")}
	if !reflect.DeepEqual(rec.got, want) {
		t.Errorf("events %v, want %v", rec.got, want)
	}
}
