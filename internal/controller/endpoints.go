package controller

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

// The incremental path. An EndpointSlice change, the most frequent change
// in a cluster, reaches nginx without a build: the source reports which
// Services' slices changed (source.EndpointSource), the controller
// recomputes their backends' endpoints as the build would
// (build.ServiceEndpoints) and patches only those backends in nginx's
// state, on the generation it pushed last (balancer.Client.Patch). It
// costs what changed, not the cluster.
//
// It applies only where the result is provably what a full sync would
// produce, and hands the change to a full sync otherwise:
//   - no full sync has gone live yet, the last one failed, or nginx is to
//     get a full state (it restarted);
//   - the Service is a stream Service (its endpoints are in the files:
//     build.Result.StreamServices);
//   - the last build reported its endpoints (DroppedEndpoints), or left
//     one of its backends out of the state (a limit, nginx refused it), so
//     that a build raises or clears the Problem;
//   - ServiceEndpoints refuses a backend of it (a subselector's, an
//     ExternalName Service's, an address it would report), or the new
//     backend breaks a rule of the payload;
//   - nginx refuses the patch: its state is not the base the patch was
//     computed on (someone else pushed, a reload loaded an older file; 409)
//     or it cannot take it. The full sync then pushes the whole state.
//
// Nothing of the files, the Problems or the status depends on endpoints
// otherwise (render.Memo relies on the same), so the full sync that
// follows any other change finds the state pushed already.

// endpointPatcher is the optional part of a Pusher (*balancer.Client has
// it) that sends only the difference from the last push.
type endpointPatcher interface {
	Patch(ctx context.Context, base, generation int64, backends []balancer.Backend, del []string) error
}

// endpointIndex is what the incremental path knows from the last full
// sync that went live: where each Service's backends are in the pushed
// state, and which Services it must leave to a full sync.
type endpointIndex struct {
	// backends are the positions in dynamicChannel.last of each
	// Service's ("namespace/name") backends.
	backends map[string][]int
	// full are the Services whose changes take a full sync.
	full map[string]bool
}

// indexEndpoints records, after a full sync went live, what the
// incremental path needs.
func (c *Controller) indexEndpoints(m *model.Model, problems []model.Problem, streams map[string]bool) {
	c.epIndex = nil
	if c.dyn == nil || m == nil {
		return
	}
	pos := make(map[string]int, len(c.dyn.last))
	for i, b := range c.dyn.last {
		pos[b.Key] = i
	}
	x := &endpointIndex{backends: map[string][]int{}, full: map[string]bool{}}
	for k := range streams {
		x.full[k] = true
	}
	for _, p := range problems {
		if p.Reason == model.ReasonDroppedEndpoints && p.Object.Kind == "Service" {
			x.full[p.Object.Namespace+"/"+p.Object.Name] = true
		}
	}
	for _, b := range m.Backends {
		svc := b.Namespace + "/" + b.Service
		i, ok := pos[b.Key]
		if !ok {
			x.full[svc] = true // left out of the state, with a Problem
			continue
		}
		x.backends[svc] = append(x.backends[svc], i)
	}
	c.epIndex = x
}

// SyncEndpoints applies the EndpointSlice changes the source collected
// since the last call (or the last full sync) through the incremental
// path. It returns false when they need a full sync instead, which then
// covers them: the caller runs Sync.
func (c *Controller) SyncEndpoints(ctx context.Context, eventAt time.Time) bool {
	es, ok := c.opts.Source.(source.EndpointSource)
	if !ok {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	changed := es.TakeEndpointChanges()
	if len(changed) == 0 {
		return true
	}
	x, d := c.epIndex, c.dyn
	patcher, canPatch := c.opts.Dynamic.(endpointPatcher)
	if x == nil || d == nil || !canPatch || c.forcePush || !c.ready.Load() || d.pushedGen == 0 {
		return false
	}
	type update struct {
		at int
		b  balancer.Backend
	}
	var updates []update
	for svc := range changed {
		if x.full[svc] {
			c.opts.Log.Debug("endpoints changed; the Service needs a full sync", "service", svc)
			return false
		}
		at := x.backends[svc]
		if len(at) == 0 {
			continue // no backend of the model uses it
		}
		ns, name, _ := strings.Cut(svc, "/")
		obj, esl := es.ServiceEndpoints(ns, name)
		for _, i := range at {
			cur := d.last[i]
			eps, ok := build.ServiceEndpoints(obj, esl, cur.Key)
			if !ok {
				c.opts.Log.Debug("endpoints changed; the backend needs a full sync", "backend", cur.Key)
				return false
			}
			next := cur
			next.Endpoints = payloadEndpoints(eps)
			if slices.Equal(next.Endpoints, cur.Endpoints) {
				continue
			}
			if next.Validate() != nil {
				return false // the build reports it
			}
			updates = append(updates, update{i, next})
		}
	}
	if len(updates) == 0 {
		return true
	}
	send := make([]balancer.Backend, len(updates))
	for i, u := range updates {
		send[i] = u.b
	}
	gen := d.nextGeneration()
	if err := patcher.Patch(ctx, d.pushedGen, gen, send, nil); err != nil {
		// nginx's state is now unknown: the full sync compares it by
		// content and generation, and pushes the whole of it.
		c.opts.Metrics.DynamicUpdates.WithLabelValues("endpoints", "failure").Inc()
		c.opts.Log.Info("incremental endpoint push refused; pushing the full state", "backends", len(send), "err", err)
		d.lastHash = [32]byte{}
		return false
	}
	for _, u := range updates {
		d.last[u.at] = u.b
		c.opts.Metrics.BackendEndpoints.Set(u.b.Key, len(u.b.Endpoints))
	}
	d.pushedGen, d.hashStale, d.fileStale = gen, true, true
	c.opts.Metrics.DynamicUpdates.WithLabelValues("endpoints", "success").Inc()
	c.opts.Metrics.EndpointUpdateSeconds.Observe(time.Since(eventAt).Seconds())
	c.opts.Log.Debug("endpoints pushed", "backends", len(send), "generation", gen)
	return true
}

// payloadEndpoints converts a backend's endpoints into the payload's, as
// backendsOf does.
func payloadEndpoints(eps []model.Endpoint) []balancer.Endpoint {
	out := make([]balancer.Endpoint, 0, len(eps))
	for _, e := range eps {
		out = append(out, balancer.Endpoint{Address: e.Address, Port: int(e.Port), Weight: 1, Ready: true, Zone: e.Zone})
	}
	return out
}

// stateFileFlushDelay is how long after an incremental push the state
// file is brought up to date: nginx reads it only when it starts or
// reloads (a full sync writes it before a reload, and a restart gets a
// full push), so under churn it is written about once a second, not
// once per change.
const stateFileFlushDelay = time.Second

// stateFileStale reports whether a patch left the state file behind.
func (c *Controller) stateFileStale() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dyn != nil && c.dyn.fileStale
}

// flushStateFile writes the state file after incremental pushes.
func (c *Controller) flushStateFile() {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.dyn
	if d == nil || !d.fileStale {
		return
	}
	if err := d.writePushed(); err != nil {
		c.opts.Log.Error("writing the endpoint state file failed; will retry at the next push", "err", err)
	}
}
