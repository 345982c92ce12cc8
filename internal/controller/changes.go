package controller

import (
	"context"

	"github.com/causeway/causeway/internal/source"
)

// What a change of the source calls for. A full sync builds, renders and
// applies the whole cluster: about a second of CPU and a few hundred MB
// allocated at 10,000 Ingresses. A change of a Service that the last
// build did not look for (build.Result.Services: every Service it read,
// and every name it found no Service under) cannot change what a build
// makes, so it takes none: the build is deterministic and reads Services
// only through that record, so a build of the new snapshot would read
// the same objects and make the same model, Problems and status. This is
// what a workload's own Services cost otherwise (those no Ingress routes
// to yet, a Job's, a headless Service's), and each host added with its
// Service (the Service first, then the Ingress: one sync, not two).
//
// Until a build has run (at start, or after a sync that failed before
// its build finished) every change takes a full sync. A source that does
// not tell its changes apart (source.ChangeSource) always takes one.

// sourceChanged takes the changes behind a signal of the source's
// Changed, and reports whether they call for a full sync. A change of
// Ingresses alone is tried on the hosts table first (hostsAhead), a
// Service change of no looked-for Service not counting against it.
func (c *Controller) sourceChanged(ctx context.Context) bool {
	cs, ok := c.opts.Source.(source.ChangeSource)
	if !ok {
		return true
	}
	ch := cs.TakeChanges()
	other := ch.Other || c.lookedFor(ch.Services)
	switch {
	case !other && len(ch.Ingresses) > 0:
		c.hostsAhead(ctx, ch.Ingresses)
	case !other && len(ch.Services) > 0:
		c.opts.Log.Debug("Services changed that no object uses; no sync", "services", len(ch.Services))
		c.opts.Metrics.ChangesWithoutSync.Inc()
		return false
	}
	return true
}

// lookedFor reports whether the last build looked for one of the
// Services ("namespace/name"), or none has run.
func (c *Controller) lookedFor(services map[string]bool) bool {
	if len(services) == 0 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.services == nil {
		return true
	}
	for key := range services {
		if c.services[key] {
			return true
		}
	}
	return false
}
