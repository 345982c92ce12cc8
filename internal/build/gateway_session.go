package build

import (
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/model"
)

// sessionBackend registers the backend of a rule of route ref with
// sessionPersistence (be.Session): the Service port's endpoints under the
// rule's own key (be.Key), balanced with the rule's sticky cookie. Being
// the rule's, it takes no other object's balancing, and the rule's cookie
// wins over the Service's causeway.io/load-balance there; the Service's
// retries are kept. The Service's annotations are still checked
// (addBackend). Without the Lua balancer nothing keeps the session: the
// route is told, once.
func (b *gatewayProcessor) sessionBackend(ref model.ObjectRef, m *model.Backend, be gateway.Backend) {
	m.Key = be.Key()
	added := b.addBackend(m)
	cookie := *be.Session
	added.Balance = model.Balance{Method: model.Sticky, Sticky: &cookie, Retries: added.Balance.Retries}
	if key := "session persistence without Lua " + ref.String(); !b.opts.LuaAvailable && !b.reported[key] {
		b.reported[key] = true
		b.problems = append(b.problems, model.Problem{Object: ref, Reason: model.ReasonUnsupported,
			Condition: &model.StatusCondition{Type: string(gwv1.RouteConditionPartiallyInvalid), Status: "True", Reason: string(gwv1.RouteReasonUnsupportedValue)},
			Message:   "sessionPersistence needs the Lua balancer (dynamic mode), which this data plane lacks: requests are balanced without a session"})
	}
}
