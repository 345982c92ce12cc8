package gatewayapi

import (
	"strings"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/model"
)

// MaxMessage bounds a condition's message (the API allows 32768 bytes): a
// route with many problems would otherwise carry all of them in every
// read of it.
const MaxMessage = 1024

// The route conditions Causeway writes.
var (
	condAccepted         = string(gwv1.RouteConditionAccepted)
	condResolvedRefs     = string(gwv1.RouteConditionResolvedRefs)
	condPartiallyInvalid = string(gwv1.RouteConditionPartiallyInvalid)
)

// resolvedMessage is ResolvedRefs=True's message.
const resolvedMessage = "every reference of the route is resolved"

// routeEntries are a route's status entries of Causeway's, one per
// attachment, in parentRef order. Each has, at the route's generation:
//
//   - Accepted, the attachment's; a Problem saying Accepted=False (the
//     route translation rejecting every rule) makes an accepted one False
//     with the Problem's reason;
//   - ResolvedRefs: True, ResolvedRefs unless a Problem says False, with
//     the first such Problem's reason;
//   - PartiallyInvalid: only when a Problem says True, with the first such
//     Problem's reason.
//
// A Problem is on the entry its Condition.Parent names (1-based), or on
// every entry when Parent is 0. The messages are the Problems', joined,
// at most MaxMessage bytes.
func routeEntries(a gateway.Attached, problems []model.Problem, o Object, now metav1.Time) []gwv1.RouteParentStatus {
	gen := o.GetGeneration()
	out := make([]gwv1.RouteParentStatus, 0, len(a.Attachments))
	for _, at := range a.Attachments {
		e := gwv1.RouteParentStatus{ParentRef: at.Status.ParentRef, ControllerName: gateway.ControllerName}
		accepted := metav1.Condition{Type: condAccepted, Status: metav1.ConditionTrue, Reason: string(gwv1.RouteReasonAccepted)}
		for _, c := range at.Status.Conditions {
			if c.Type == condAccepted {
				accepted = c
			}
		}
		attachedFalse := accepted.Status != metav1.ConditionTrue
		resolved := metav1.Condition{Type: condResolvedRefs, Status: metav1.ConditionTrue,
			Reason: string(gwv1.RouteReasonResolvedRefs), Message: resolvedMessage}
		var partial *metav1.Condition
		var acceptedMsgs, resolvedMsgs, partialMsgs []string
		for _, p := range problems {
			c := p.Condition
			if (c.Parent != 0 && c.Parent != at.Index+1) || (p.Object.UID != "" && p.Object.UID != string(o.GetUID())) {
				continue
			}
			switch {
			case c.Type == condAccepted && c.Status == string(metav1.ConditionFalse) && !attachedFalse:
				if len(acceptedMsgs) == 0 {
					accepted.Status, accepted.Reason, accepted.LastTransitionTime = metav1.ConditionFalse, c.Reason, metav1.Time{}
				}
				acceptedMsgs = append(acceptedMsgs, p.Message)
			case c.Type == condResolvedRefs && c.Status == string(metav1.ConditionFalse):
				if len(resolvedMsgs) == 0 {
					resolved.Status, resolved.Reason = metav1.ConditionFalse, c.Reason
				}
				resolvedMsgs = append(resolvedMsgs, p.Message)
			case c.Type == condPartiallyInvalid && c.Status == string(metav1.ConditionTrue):
				if partial == nil {
					partial = &metav1.Condition{Type: condPartiallyInvalid, Status: metav1.ConditionTrue, Reason: c.Reason}
				}
				partialMsgs = append(partialMsgs, p.Message)
			}
		}
		if len(acceptedMsgs) > 0 {
			accepted.Message = joinMessages(acceptedMsgs)
		}
		if len(resolvedMsgs) > 0 {
			resolved.Message = joinMessages(resolvedMsgs)
		}
		accepted.Message = bound(accepted.Message)
		e.Conditions = []metav1.Condition{accepted, resolved}
		if partial != nil {
			partial.Message = joinMessages(partialMsgs)
			e.Conditions = append(e.Conditions, *partial)
		}
		for i := range e.Conditions {
			e.Conditions[i].ObservedGeneration = gen
			if e.Conditions[i].LastTransitionTime.IsZero() {
				e.Conditions[i].LastTransitionTime = now
			}
		}
		out = append(out, e)
	}
	return out
}

// joinMessages joins Problems' messages into one condition message.
func joinMessages(msgs []string) string { return bound(strings.Join(msgs, "; ")) }

// bound cuts s to at most MaxMessage bytes, on a rune boundary, and marks
// the cut with "...".
func bound(s string) string {
	if len(s) <= MaxMessage {
		return s
	}
	cut := MaxMessage - 3
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
