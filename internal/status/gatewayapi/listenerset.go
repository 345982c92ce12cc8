package gatewayapi

import (
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/source"
)

// KindListenerSet is the kind of a ListenerSet (gateway.networking.k8s.io/v1),
// whose status Causeway writes whole while its parent is a Gateway of
// Causeway's: the build's Resolution then has it (gateway.ListenerSet) and
// says exactly what to write. A ListenerSet whose parent is another
// controller's Gateway, or no longer names one of Causeway's, is not
// Causeway's: its status is left as it is, as a Gateway of another class
// is.
const KindListenerSet = "ListenerSet"

// planListenerSets adds a Target for every ListenerSet of snap the
// Resolution has (the same UID: not an older namesake's entry), its
// conditions and its listeners' at the object's generation.
func planListenerSets(snap *source.Snapshot, res *gateway.Resolution, add func(kind string, o Object, w Want)) {
	for _, o := range snap.ListenerSets {
		ls := res.ListenerSets[o.Namespace+"/"+o.Name]
		if ls == nil || !sameUID(ls.Ref.UID, o) {
			continue
		}
		st := *ls.Status.DeepCopy()
		setGeneration(st.Conditions, o.Generation)
		for i := range st.Listeners {
			setGeneration(st.Listeners[i].Conditions, o.Generation)
		}
		add(KindListenerSet, o, Want{ListenerSet: &st})
	}
}

// applyListenerSet is Apply for a ListenerSet: its whole status is w's,
// with the lastTransitionTimes of the stored conditions (its own, and each
// listener's by name) whose status did not change.
func (w Want) applyListenerSet(o *gwv1.ListenerSet) Object {
	if w.ListenerSet == nil {
		return nil
	}
	st := gwv1.ListenerSetStatus{
		Conditions: keepTimes(o.Status.Conditions, w.ListenerSet.Conditions, w.Now),
		Listeners: listenerTimes(o.Status.Listeners, w.ListenerSet.Listeners, w.Now,
			func(l *gwv1.ListenerEntryStatus) (gwv1.SectionName, *[]metav1.Condition) {
				return l.Name, &l.Conditions
			}),
	}
	if equality.Semantic.DeepEqual(st, o.Status) {
		return nil
	}
	c := o.DeepCopy()
	c.Status = st
	return c
}
