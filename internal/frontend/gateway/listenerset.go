package gateway

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

// kindListenerSet is ListenerSet's kind (gateway.networking.k8s.io/v1).
const kindListenerSet = "ListenerSet"

// ListenerSet is a ListenerSet whose parent is a Gateway Causeway serves,
// checked: its listeners join the parent's when the parent admits it
// (spec.allowedListeners) and are served on the parent's addresses.
type ListenerSet struct {
	Ref        model.ObjectRef
	Generation int64
	// Parent is the Gateway of spec.parentRef.
	Parent *Gateway
	// Accepted is the Accepted condition's status: the parent admits
	// the ListenerSet and is accepted, and at least one of its
	// listeners is ready.
	Accepted bool
	// Listeners are spec.listeners in order, checked; Status.Listeners[i]
	// is Listeners[i]'s status.
	Listeners []*Listener
	// Status is what Causeway writes: the conditions and each
	// listener's.
	Status gwv1.ListenerSetStatus
}

// Listener returns the listener named name, or nil.
func (s *ListenerSet) Listener(name gwv1.SectionName) *Listener {
	for _, l := range s.Listeners {
		if l.Name == name {
			return l
		}
	}
	return nil
}

// parentOf names the object a listener is of, for messages.
func parentOf(l *Listener) string {
	if l.Set != nil {
		return "ListenerSet"
	}
	return "Gateway"
}

// checkListenerSets checks the ListenerSets whose spec.parentRef names a
// Gateway of gateways (others are not Causeway's: no status), attaches
// the accepted ones to their Gateway (Gateway.Sets) and sets each
// Gateway's status.attachedListenerSets.
//
// A Gateway's listeners take precedence over its ListenerSets', and
// ListenerSets over each other by age, then namespace/name (GEP-1713): a
// listener that is not distinct from one of higher precedence is
// conflicted (HostnameConflict, ProtocolConflict) and not served, while
// the other stays. Within one ListenerSet, listeners conflict as a
// Gateway's do: none of the indistinct ones wins.
func checkListenerSets(sets []*gwv1.ListenerSet, gateways map[string]*Gateway, in Inputs) (map[string]*ListenerSet, []model.Problem) {
	byParent := map[*Gateway][]*gwv1.ListenerSet{}
	for _, ls := range sets {
		if g := listenerSetParent(ls, gateways); g != nil {
			byParent[g] = append(byParent[g], ls)
		}
	}
	out := map[string]*ListenerSet{}
	var problems []model.Problem
	for _, g := range slices.SortedFunc(maps.Keys(byParent), func(a, b *Gateway) int { return cmp.Compare(a.Ref.Key(), b.Ref.Key()) }) {
		list := byParent[g]
		slices.SortFunc(list, func(a, b *gwv1.ListenerSet) int {
			if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
				return c
			}
			return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
		})
		// taken are the listeners of higher precedence: the Gateway's
		// own (unless refused outright), then those of the ListenerSets
		// accepted so far.
		taken := map[gwv1.PortNumber][]*Listener{}
		for _, l := range g.Listeners {
			if l.notAccepted.reason == "" {
				taken[l.Port] = append(taken[l.Port], l)
			}
		}
		for _, ls := range list {
			s, ps := checkListenerSet(ls, g, taken, in)
			problems = append(problems, ps...)
			out[ls.Namespace+"/"+ls.Name] = s
			if !s.Accepted {
				continue
			}
			g.Sets = append(g.Sets, s)
			for _, l := range s.Listeners {
				if l.Accepted {
					taken[l.Port] = append(taken[l.Port], l)
				}
			}
		}
	}
	for _, g := range gateways {
		if len(g.Sets) > 0 {
			g.all = slices.Clone(g.Listeners)
			for _, s := range g.Sets {
				g.all = append(g.all, s.Listeners...)
			}
		}
		if n := int32(len(g.Sets)); n > 0 || admitsListenerSets(g.spec) {
			g.Status.AttachedListenerSets = &n
		}
	}
	return out, problems
}

// listenerSetParent is the Gateway of Causeway's a ListenerSet's
// parentRef names, or nil.
func listenerSetParent(ls *gwv1.ListenerSet, gateways map[string]*Gateway) *Gateway {
	if key, ok := ListenerSetParentKey(ls); ok {
		return gateways[key]
	}
	return nil
}

// ListenerSetParentKey is the "namespace/name" of the Gateway a
// ListenerSet's spec.parentRef names; ok is false when it names another
// kind.
func ListenerSetParentKey(ls *gwv1.ListenerSet) (key string, ok bool) {
	ref := ls.Spec.ParentRef
	if ref.Group != nil && *ref.Group != group || ref.Kind != nil && *ref.Kind != kindGateway {
		return "", false
	}
	ns := ls.Namespace
	if ref.Namespace != nil && *ref.Namespace != "" {
		ns = string(*ref.Namespace)
	}
	return ns + "/" + string(ref.Name), true
}

// admitsListenerSets reports whether a Gateway's allowedListeners admits
// ListenerSets from any namespace at all.
func admitsListenerSets(gw *gwv1.Gateway) bool {
	a := gw.Spec.AllowedListeners
	return a != nil && a.Namespaces != nil && a.Namespaces.From != nil && *a.Namespaces.From != gwv1.NamespacesFromNone
}

// ListenerSetAllowed says why a Gateway's spec.allowedListeners does not
// admit ListenerSets of namespace ns, "" when it does. nsLabels are the
// namespaces' labels by name (Inputs.Namespaces).
func ListenerSetAllowed(gw *gwv1.Gateway, ns string, nsLabels map[string]map[string]string) string {
	if !admitsListenerSets(gw) {
		return fmt.Sprintf("Gateway %s/%s admits no ListenerSet (spec.allowedListeners.namespaces.from is None or unset)", gw.Namespace, gw.Name)
	}
	n := gw.Spec.AllowedListeners.Namespaces
	switch *n.From {
	case gwv1.NamespacesFromAll:
		return ""
	case gwv1.NamespacesFromSame:
		if ns == gw.Namespace {
			return ""
		}
		return fmt.Sprintf("Gateway %s/%s admits ListenerSets of its own namespace only", gw.Namespace, gw.Name)
	case gwv1.NamespacesFromSelector:
		if n.Selector == nil {
			return fmt.Sprintf("Gateway %s/%s: spec.allowedListeners.namespaces.selector must be set when from is Selector", gw.Namespace, gw.Name)
		}
		sel, err := metav1.LabelSelectorAsSelector(n.Selector)
		if err != nil {
			return fmt.Sprintf("Gateway %s/%s: spec.allowedListeners.namespaces.selector: %s", gw.Namespace, gw.Name, model.Truncate(err.Error()))
		}
		if sel.Matches(namespaceLabels(ns, nsLabels[ns])) {
			return ""
		}
		return fmt.Sprintf("Gateway %s/%s admits ListenerSets of the namespaces its selector picks, and namespace %s is not one", gw.Namespace, gw.Name, ns)
	}
	return fmt.Sprintf("Gateway %s/%s: spec.allowedListeners.namespaces.from %q is not All, Selector, Same or None", gw.Namespace, gw.Name, model.Truncate(string(*n.From)))
}

// checkListenerSet checks one ListenerSet of Gateway g, given the
// listeners of higher precedence (taken).
func checkListenerSet(ls *gwv1.ListenerSet, g *Gateway, taken map[gwv1.PortNumber][]*Listener, in Inputs) (*ListenerSet, []model.Problem) {
	r := &reporter{obj: refOf(kindListenerSet, ls), gen: ls.Generation, now: in.Now}
	s := &ListenerSet{Ref: r.obj, Generation: ls.Generation, Parent: g}
	for _, e := range ls.Spec.Listeners {
		l := checkListener(grantee{kindListenerSet, ls.Namespace}, gwv1.Listener{Name: e.Name, Hostname: e.Hostname, Port: e.Port,
			Protocol: e.Protocol, TLS: e.TLS, AllowedRoutes: e.AllowedRoutes}, in)
		l.Set = s
		setClientValidation(g.spec, l, in)
		s.Listeners = append(s.Listeners, l)
	}
	notAllowed := ListenerSetAllowed(g.spec, ls.Namespace, in.Namespaces)
	if notAllowed == "" && g.Accepted {
		// First against the listeners of higher precedence, then among
		// those left: a listener beaten by the Gateway's takes no part
		// in the ListenerSet's own conflicts.
		conflictsWith(s.Listeners, taken)
		var rest []*Listener
		for _, l := range s.Listeners {
			if !l.Conflicted {
				rest = append(rest, l)
			}
		}
		checkConflicts(rest)
	}
	for _, l := range s.Listeners {
		l.Accepted = l.notAccepted.reason == "" && l.conflict.reason == ""
		l.ResolvedRefs = l.notResolved.reason == ""
	}
	var valid, invalid []string
	for _, l := range s.Listeners {
		if l.Ready() {
			valid = append(valid, string(l.Name))
		} else {
			invalid = append(invalid, model.Truncate(string(l.Name)))
		}
	}
	typ, progTyp := string(gwv1.ListenerSetConditionAccepted), string(gwv1.ListenerSetConditionProgrammed)
	var accepted, programmed metav1.Condition
	bad := func(reason gwv1.ListenerSetConditionReason, msg string) {
		accepted = r.bad(where{}, typ, metav1.ConditionFalse, string(reason), msg)
		programmed = r.ok(progTyp, metav1.ConditionFalse, string(reason), msg)
	}
	switch {
	case notAllowed != "":
		bad(gwv1.ListenerSetReasonNotAllowed, notAllowed)
	case !g.Accepted:
		bad(gwv1.ListenerSetReasonParentNotAccepted, fmt.Sprintf("Gateway %s is not accepted", g.Ref.Namespace+"/"+g.Ref.Name))
	case len(valid) == 0:
		bad(gwv1.ListenerSetReasonListenersNotValid, "no listener is ready: "+listNames(invalid))
	default:
		s.Accepted = true
		if len(invalid) == 0 {
			accepted = r.ok(typ, metav1.ConditionTrue, string(gwv1.ListenerSetReasonAccepted), "the ListenerSet is attached to Gateway "+g.Ref.Namespace+"/"+g.Ref.Name)
		} else {
			// True, but saying some listeners are left out: a Problem
			// too, so that it is not silent.
			msg := "listeners not served: " + listNames(invalid)
			r.problems = append(r.problems, model.Problem{Object: r.obj, Reason: string(gwv1.ListenerSetReasonListenersNotValid), Message: msg})
			accepted = r.ok(typ, metav1.ConditionTrue, string(gwv1.ListenerSetReasonListenersNotValid), msg)
		}
		if g.addressed {
			programmed = r.ok(progTyp, metav1.ConditionTrue, string(gwv1.ListenerSetReasonProgrammed), "the data plane serves the ListenerSet's ready listeners")
		} else {
			programmed = r.bad(where{}, progTyp, metav1.ConditionFalse, string(gwv1.ListenerSetReasonPending), "Gateway "+g.Ref.Namespace+"/"+g.Ref.Name+" has no address yet")
		}
	}
	s.Status.Conditions = []metav1.Condition{accepted, programmed}
	for _, l := range s.Listeners {
		st := listenerStatus(r, l, s.Accepted, g.addressed)
		s.Status.Listeners = append(s.Status.Listeners, gwv1.ListenerEntryStatus(st))
	}
	return s, r.problems
}

// conflictsWith marks the listeners of list that are not distinct from a
// listener of higher precedence (taken, by port: a Gateway with thousands
// of ListenerSets compares each listener with its port's only) as conflicted, by the rules of
// checkConflicts; the listeners of taken are not changed.
func conflictsWith(list []*Listener, taken map[gwv1.PortNumber][]*Listener) {
	for _, l := range list {
		if l.notAccepted.reason != "" || l.Conflicted {
			continue
		}
		for _, t := range taken[l.Port] {
			if (t.Protocol == gwv1.UDPProtocolType) != (l.Protocol == gwv1.UDPProtocolType) {
				continue
			}
			if protocolOf(t) != protocolOf(l) {
				l.conflictWith(gwv1.ListenerReasonProtocolConflict,
					fmt.Sprintf("port %d is %s listener %q's, of protocol %s: one port serves one protocol", l.Port, ownerOf(t), model.Truncate(string(t.Name)), t.Protocol))
				break
			}
			if t.Hostname == l.Hostname {
				what := fmt.Sprintf("hostname %q", l.Hostname)
				if l.Hostname == "" {
					what = "no hostname"
				}
				l.conflictWith(gwv1.ListenerReasonHostnameConflict,
					fmt.Sprintf("%s listener %q also has port %d, protocol %s and %s, and takes precedence", ownerOf(t), model.Truncate(string(t.Name)), l.Port, l.Protocol, what))
				break
			}
		}
	}
}

// ownerOf names the object a listener is of, for messages: "Gateway's"
// or "ListenerSet ns/name's".
func ownerOf(l *Listener) string {
	if l.Set == nil {
		return "the Gateway's"
	}
	return "ListenerSet " + l.Set.Ref.Namespace + "/" + l.Set.Ref.Name + "'s"
}
