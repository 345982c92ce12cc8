package build

import (
	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/model"
)

// sessionBackend registers the backend of a rule with sessionPersistence
// (be.Session): the Service port's endpoints under the rule's own key
// (be.Key), balanced with the rule's sticky cookie. Being the rule's, it
// takes no other object's balancing, and the rule's cookie wins over the
// Service's causeway.io/load-balance there; the Service's retries are
// kept. The Service's annotations are still checked (addBackend).
func (b *gatewayProcessor) sessionBackend(m *model.Backend, be gateway.Backend) {
	m.Key = be.Key()
	added := b.addBackend(m)
	cookie := *be.Session
	added.Balance = model.Balance{Method: model.Sticky, Sticky: &cookie, Retries: added.Balance.Retries}
}
