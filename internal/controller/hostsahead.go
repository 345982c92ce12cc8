package controller

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"time"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/render"
	"github.com/causeway/causeway/internal/source"
)

// Hosts ahead of the full sync. A new host of a shape with a hop server
// goes live by a push of the hosts table (render/hop.go), but the sync
// that finds it builds and renders the whole cluster first: about a
// second at 10,000 Ingresses. When the source says that only Ingresses
// changed (and Services that the last build did not look for:
// changes.go), hostsAhead builds those Ingresses alone (with the Ingresses
// that share a host with them, the Services they name, and the other
// objects but none that makes a server: source.Ahead, which the kube
// source answers from indexes), asks render.HopHosts for their entries,
// and pushes the table and their new backends before the full sync
// starts. The full sync then runs as always: it is authoritative, finds
// the same table (and pushes nothing), or corrects it.
//
// hostsAhead declines, leaving everything to the full sync, unless every
// server of the changed Ingresses is a new exact host of a shape the
// running configuration has a hop server for, and everything else it
// sees is as the full sync would see it: no Problem of those Ingresses,
// no excluded one among them, no catch-all path (a default backend),
// every backend new or equal to the running one, and each table entry it
// replaces or removes coming from the changed Ingresses alone.

// errAhead is why hostsAhead declined.
type errAhead string

func (e errAhead) Error() string { return string(e) }

// hostsAhead tries the changed Ingresses ("namespace/name") on the hosts
// table, when nothing else changed (sourceChanged); the caller runs the
// full sync after it in any case.
func (c *Controller) hostsAhead(ctx context.Context, changed map[string]bool) {
	start := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	var took aheadTimes
	n, err := c.tryHostsAhead(ctx, changed, &took)
	var declined errAhead
	switch {
	case errors.As(err, &declined) || errors.Is(err, render.ErrNotHop):
		c.opts.Log.Debug("Ingress change left to the full sync", "ingresses", len(changed), "why", err)
	case err != nil:
		c.opts.Metrics.DynamicUpdates.WithLabelValues("hosts_ahead", "failure").Inc()
		c.opts.Log.Info("pushing hosts ahead of the full sync failed; the full sync applies them", "err", err)
	case n > 0:
		c.opts.Metrics.DynamicUpdates.WithLabelValues("hosts_ahead", "success").Inc()
		c.opts.Log.Debug("hosts pushed ahead of the full sync", "entries", n, "took", time.Since(start),
			"snapshot", took.snapshot, "build", took.build, "render", took.render, "push", took.push)
	}
}

// aheadTimes are the times of hostsAhead's steps, for its debug log.
type aheadTimes struct{ snapshot, build, render, push time.Duration }

// tryHostsAhead is hostsAhead's work, under c.mu: it returns how many
// table entries it added, changed or removed.
func (c *Controller) tryHostsAhead(ctx context.Context, changed map[string]bool, took *aheadTimes) (int, error) {
	t0 := time.Now()
	d := c.dyn
	if d == nil || c.hop == nil || !c.ready.Load() || c.forcePush || d.pushedGen == 0 {
		return 0, errAhead("no running configuration with hop servers")
	}
	patcher, canPatch := d.pusher.(endpointPatcher)
	replacer, canReplace := d.pusher.(hostsReplacer)
	if !canPatch || !canReplace {
		return 0, errAhead("the data plane takes no patches")
	}
	mini, err := aheadSnapshot(c.opts.Source, changed, c.opts.Model)
	if err != nil {
		return 0, err
	}
	t1 := time.Now()
	took.snapshot = t1.Sub(t0)
	for h := range mini.hosts {
		if c.hop.Names[h] {
			return 0, errAhead("host " + h + " is in the running files")
		}
	}
	// The table entries of the changed Ingresses go; those shared with
	// an unchanged one leave everything to the full sync.
	owned := map[string]bool{}
	for _, h := range d.hosts {
		srcs := c.hostSources[h.Name]
		mine := 0
		for _, r := range srcs {
			if r.Kind == "Ingress" && changed[r.Namespace+"/"+r.Name] {
				mine++
			}
		}
		switch {
		case mine == 0:
		case mine < len(srcs):
			return 0, errAhead("host " + h.Name + " comes from an unchanged object too")
		default:
			owned[h.Name] = true
		}
	}

	opts := c.opts.Model
	opts.Excluded = map[string]string{}
	for key, e := range c.badObject {
		kind, nsName, _ := strings.Cut(key, "/")
		if kind == "Ingress" && changed[nsName] {
			return 0, errAhead("an excluded Ingress changed")
		}
		opts.Excluded[key] = e.reason
	}
	opts.BadSecrets = map[string]string{}
	for key, e := range c.badSecret {
		if secretFingerprint(mini.Snapshot, key) == e.fingerprint {
			opts.BadSecrets[key] = e.reason
		}
	}
	opts.Replicas = c.replicas()
	built := build.Run(mini.Snapshot, opts)
	m := built.Model
	for _, p := range built.Problems {
		if p.Object.Kind == "Ingress" && mini.has(p.Object.Namespace+"/"+p.Object.Name) {
			return 0, errAhead("a changed Ingress has a Problem to report")
		}
	}
	for _, b := range m.Backends {
		if b.External != nil {
			return 0, errAhead("an ExternalName backend")
		}
	}
	params := c.opts.Render
	params.Hop = c.hop
	t2 := time.Now()
	took.build = t2.Sub(t1)
	added, err := render.HopHosts(m, params)
	if err != nil {
		return 0, err
	}
	t3 := time.Now()
	took.render = t3.Sub(t2)
	defer func() { took.push = time.Since(t3) }()

	// Their backends: new ones are patched in; one the running state
	// has must be equal to it.
	mine := append(backendsOf(m), splitsOf(m)...)
	at := make(map[string]int, len(mine)) // of the running state's, by key
	for _, b := range mine {
		at[b.Key] = -1
	}
	for i, b := range d.last {
		if _, ok := at[b.Key]; ok {
			at[b.Key] = i
		}
	}
	var up []balancer.Backend
	for _, b := range mine {
		if i := at[b.Key]; i >= 0 {
			if !reflect.DeepEqual(d.last[i], b) {
				return 0, errAhead("backend " + b.Key + " differs from the running one")
			}
			continue
		}
		if _, refused := d.refused[b.Key]; refused || b.Validate() != nil {
			return 0, errAhead("backend " + b.Key + " cannot be pushed")
		}
		up = append(up, b)
	}

	var table []balancer.Host // nil when empty, as the full sync's
	for _, h := range d.hosts {
		if !owned[h.Name] {
			table = append(table, h)
		}
	}
	table = append(table, added.Hosts...)
	sortHosts(table)
	if err := balancer.ValidateHosts(table); err != nil {
		// A limit, or a host twice: another Ingress of a table host
		// whose entry is an unchanged Ingress's too.
		return 0, errAhead("the table would not be valid: " + err.Error())
	}
	n := len(owned) + len(added.Hosts)
	if n == 0 {
		return 0, nil
	}
	if len(up) > 0 {
		gen := d.nextGeneration()
		if err := patcher.Patch(ctx, d.pushedGen, gen, up, nil); err != nil {
			d.lastHash = [32]byte{} // unknown now: the full sync pushes the whole
			return 0, err
		}
		d.last = append(slices.Clip(d.last), up...)
		d.pushedGen, d.hashStale, d.fileStale = gen, true, true
		c.epIndex = nil // the full sync indexes the new backends
	}
	if c.opts.Requests != nil {
		c.opts.Requests.AddSeries(added.Series)
	}
	hash, err := hostsHash(table)
	if err != nil {
		return 0, err
	}
	if err := replacer.ReplaceHosts(ctx, table); err != nil {
		d.pushedHosts = [32]byte{} // unknown now
		return 0, err
	}
	d.hosts, d.pushedHosts, d.fileStale = table, hash, true
	for name := range owned {
		delete(c.hostSources, name)
	}
	if c.hostSources == nil {
		c.hostSources = map[string][]model.ObjectRef{}
	}
	for name, srcs := range added.Sources {
		c.hostSources[name] = srcs
	}
	return n, nil
}

// sortHosts orders a hosts table by name: the table the full sync makes
// and the one hostsAhead makes compare equal when they hold the same.
func sortHosts(hosts []balancer.Host) {
	slices.SortFunc(hosts, func(a, b balancer.Host) int { return strings.Compare(a.Name, b.Name) })
}

// aheadIngresses is the snapshot hostsAhead builds.
type aheadIngresses struct {
	*source.Snapshot
	// keys are its Ingresses, hosts the rule hosts of the changed ones.
	keys, hosts map[string]bool
}

func (a aheadIngresses) has(key string) bool { return a.keys[key] }

// aheadSnapshot is the snapshot of src for a build of the changed
// Ingresses alone (source.Ahead): with them, the Ingresses that share a
// host with them, and the Services they name (their paths', the
// default-backend annotation's, --default-backend-service) with their
// EndpointSlices. A Service they name otherwise is left out: the build
// reports a Problem, and hostsAhead declines.
func aheadSnapshot(src source.Source, changed map[string]bool, opts build.Options) (aheadIngresses, error) {
	prefix := opts.AnnotationsPrefix
	if prefix == "" {
		prefix = annotations.DefaultPrefix
	}
	services := func(ings []*networkingv1.Ingress) map[string]bool {
		out := map[string]bool{}
		if ns, rest, ok := strings.Cut(opts.DefaultBackendService, "/"); ok {
			name, _, _ := strings.Cut(rest, ":")
			out[ns+"/"+name] = true
		}
		for _, ing := range ings {
			for _, r := range ing.Spec.Rules {
				if r.HTTP == nil {
					continue
				}
				for _, p := range r.HTTP.Paths {
					if p.Backend.Service != nil {
						out[ing.Namespace+"/"+p.Backend.Service.Name] = true
					}
				}
			}
			if d := ing.Annotations[prefix+"/default-backend"]; d != "" {
				name, _, _ := strings.Cut(d, ":")
				out[ing.Namespace+"/"+name] = true
			}
		}
		return out
	}
	var snap *source.Snapshot
	if as, ok := src.(source.AheadSource); ok {
		snap = as.SnapshotAhead(changed, services)
	} else {
		snap = source.Ahead(src.Snapshot(), changed, services)
	}
	keys, hosts := map[string]bool{}, map[string]bool{}
	for _, ing := range snap.Ingresses {
		key := ing.Namespace + "/" + ing.Name
		keys[key] = true
		if !changed[key] {
			continue
		}
		if ing.Spec.DefaultBackend != nil {
			return aheadIngresses{}, errAhead("a changed Ingress has a default backend")
		}
		for _, r := range ing.Spec.Rules {
			if r.Host == "" {
				return aheadIngresses{}, errAhead("a changed Ingress has a rule without a host")
			}
			hosts[r.Host] = true
		}
	}
	return aheadIngresses{Snapshot: snap, keys: keys, hosts: hosts}, nil
}
