package kube

import (
	"sync"

	"github.com/causeway/causeway/internal/source"
)

// Source is a source.ChangeSource: it tells changes of Ingresses and of
// Services from the others, by key.
var _ source.ChangeSource = (*Source)(nil)

// changeLog is what changed since the controller last took it.
type changeLog struct {
	mu sync.Mutex
	source.Changes
}

// notify signals a change of anything but an Ingress or a Service.
func (s *Source) notify() {
	s.changes.mu.Lock()
	s.changes.Other = true
	s.changes.mu.Unlock()
	s.notifier.Notify()
}

// notifyIngress signals a change of the Ingress key ("namespace/name").
func (s *Source) notifyIngress(key string) {
	s.changes.mu.Lock()
	s.changes.Ingresses = addKey(s.changes.Ingresses, key)
	s.changes.mu.Unlock()
	s.notifier.Notify()
}

// notifyService signals a change of the Service key ("namespace/name").
func (s *Source) notifyService(key string) {
	s.changes.mu.Lock()
	s.changes.Services = addKey(s.changes.Services, key)
	s.changes.mu.Unlock()
	s.notifier.Notify()
}

func addKey(m map[string]bool, key string) map[string]bool {
	if m == nil {
		m = map[string]bool{}
	}
	m[key] = true
	return m
}

// TakeChanges returns what changed since the last call and forgets it.
func (s *Source) TakeChanges() source.Changes {
	c := &s.changes
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.Changes
	c.Changes = source.Changes{}
	return out
}
