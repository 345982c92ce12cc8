package kube

import (
	"sync"

	"github.com/causeway/causeway/internal/source"
)

// Source is a source.ChangeSource: it tells a change of Ingresses alone
// from the others, which the controller may apply to the data plane
// before its build of everything (the hosts table).
var _ source.ChangeSource = (*Source)(nil)

// changeLog is what changed since the controller last took it: the
// Ingresses by key, and whether anything else did.
type changeLog struct {
	mu        sync.Mutex
	ingresses map[string]bool
	other     bool
}

// notify signals a change of anything but an Ingress.
func (s *Source) notify() {
	s.changes.mu.Lock()
	s.changes.other = true
	s.changes.mu.Unlock()
	s.notifier.Notify()
}

// notifyIngress signals a change of the Ingress key ("namespace/name").
func (s *Source) notifyIngress(key string) {
	s.changes.mu.Lock()
	if s.changes.ingresses == nil {
		s.changes.ingresses = map[string]bool{}
	}
	s.changes.ingresses[key] = true
	s.changes.mu.Unlock()
	s.notifier.Notify()
}

// TakeChanges returns the Ingresses changed since the last call and
// whether anything else changed, and forgets both.
func (s *Source) TakeChanges() (ingresses map[string]bool, other bool) {
	c := &s.changes
	c.mu.Lock()
	defer c.mu.Unlock()
	ingresses, other = c.ingresses, c.other
	c.ingresses, c.other = nil, false
	return ingresses, other
}
