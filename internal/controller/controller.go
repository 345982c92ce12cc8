// Package controller joins the pipeline: it waits for changes from a
// source, coalesces them, builds the model, renders it and has the runtime
// apply it, isolating objects that nginx refuses.
package controller

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/metrics"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/render"
	"github.com/causeway/causeway/internal/runtime"
	"github.com/causeway/causeway/internal/source"
	"github.com/causeway/causeway/internal/spanlog"
)

// Applier makes rendered files live; *runtime.Manager implements it.
type Applier interface {
	Apply(ctx context.Context, files render.Files, version string) (runtime.ApplyResult, error)
}

// Spans exports the spans nginx logs: Configure gets each
// configuration's span keys (render.Output's Spans) and tracing settings.
type Spans interface {
	Configure(t model.Tracing, spans map[string]spanlog.Labels, oldWorkers time.Duration)
}

// Options configure a Controller.
type Options struct {
	Source  source.Source
	Applier Applier
	Model   build.Options
	Render  render.Params
	Log     *slog.Logger
	Metrics *metrics.Metrics
	// Requests, when set, receives each configuration's metrics series
	// before it goes live.
	Requests *metrics.Requests
	// Spans, when set, receives each configuration's span keys and
	// tracing settings before it goes live (package tracing).
	Spans Spans
	// Quiet is how long the controller waits for more events after one
	// arrives; MaxDelay caps the total wait under a steady stream.
	Quiet, MaxDelay time.Duration
	// OnSync, when set, is called after every sync with its outcome; the
	// kube integration hangs status and events on it.
	OnSync func(SyncResult)
	// Dynamic, when set, receives endpoint state over the dynamic channel
	// (the Lua data plane); nil means plain upstreams in the files.
	Dynamic Pusher
	// Restarted signals that nginx was restarted after a crash, so the
	// dynamic state is pushed again.
	Restarted <-chan struct{}
	// Resync asks for a sync even when nothing changed: OnSync's
	// receivers keep nothing between syncs that they need again (the
	// status writers, on becoming leader or when the published addresses
	// change). Any sync that starts after the request answers it: a
	// replica that leads before its first sync syncs once, not twice.
	Resync <-chan struct{}
	// Names, when set, resolves the names of ExternalName Services into
	// their backends' endpoints (externalname.go); without it their paths
	// answer 503.
	Names NameResolver
	// Staples, when set, fetches the OCSP responses stapled to the
	// hosts' certificates (stapling.go, enable-ocsp).
	Staples Stapler
	// Replicas, when set, counts the replicas serving traffic, which
	// divides the rate of a rateLimit Policy with scale (replicas.go).
	Replicas ReplicaCounter
	// Health, when set, says why the data plane cannot be kept up to date
	// (the state directory is damaged beyond repair, or nginx's workers
	// cannot reach their files); the controller is not ready meanwhile.
	Health func() error
}

// SyncResult is what one sync produced.
type SyncResult struct {
	Model    *model.Model
	Problems []model.Problem
	Snapshot *source.Snapshot
	// Gateway is the build's Gateway API resolution (build.Result).
	Gateway *gateway.Resolution
	// Err is the apply error, if the configuration could not go live.
	Err error
}

// Controller is the control loop.
type Controller struct {
	opts Options
	// ready is true while the latest sync's configuration is live;
	// everLive once any was; draining once shutdown has begun.
	ready, everLive, draining atomic.Bool

	mu        sync.Mutex
	dyn       *dynamicChannel
	forcePush bool
	started   bool
	badObject map[string]exclusion
	badSecret map[string]exclusion
	// chains are the certificate chains fillOCSP parsed, by the SHA-256
	// of their Secret's PEM; only the last kept build's.
	chains map[[32]byte]parsedChain
	// lastLive marks the objects of the snapshot whose configuration
	// last went live: bisection suspects only those that changed since.
	lastLive    liveMarks
	lastProblem map[string]bool
	// memo hands out the last render again for a model that differs only
	// in endpoints (an EndpointSlice change, with the Lua balancer).
	memo render.Memo
	// hop is the HopState of the configuration nginx runs, and applied
	// its version: new hosts of its shapes are served from the table
	// without a reload (render/hop.go). folded are the table's entries
	// of hosts the last reload wrote into the files, kept for its old
	// workers (hostsTable).
	hop     *render.HopState
	applied string
	folded  []balancer.Host
	// hostSources are the objects each name of the hosts table comes
	// from (render.Output.HostSources, and hostsAhead's).
	hostSources map[string][]model.ObjectRef
	// lastSourceProblem are the source problems logged already.
	lastSourceProblem map[source.Problem]bool
	// epIndex is what the incremental endpoint path knows from the last
	// full sync that went live (endpoints.go); nil: take a full sync.
	epIndex *endpointIndex
	// services are the Services the last build of a sync looked for
	// (changes.go); nil until one finished.
	services map[string]bool
}

// New returns a Controller.
func New(opts Options) *Controller {
	if opts.Quiet == 0 {
		opts.Quiet = 100 * time.Millisecond
	}
	if opts.MaxDelay == 0 {
		opts.MaxDelay = time.Second
	}
	c := &Controller{opts: opts, badObject: map[string]exclusion{}, badSecret: map[string]exclusion{}}
	mode := "plain"
	if opts.Dynamic != nil {
		mode = "lua"
		c.dyn = &dynamicChannel{pusher: opts.Dynamic, stateFile: opts.Render.StateDir.DynamicState()}
	}
	opts.Metrics.DataplaneMode.WithLabelValues(mode).Set(1)
	return c
}

// Ready reports whether the source has synced, the configuration built
// from its latest snapshot is verifiably live, and the data plane is
// healthy.
func (c *Controller) Ready() bool { return c.notReady() == "" }

// Drain makes the controller report not ready from now on while it goes
// on serving and syncing: the first step of a graceful shutdown, so that
// Services stop sending new connections before nginx stops accepting
// them.
func (c *Controller) Drain() { c.draining.Store(true) }

// notReady says why the controller is not ready, or "" when it is.
func (c *Controller) notReady() string {
	if c.draining.Load() {
		return "shutting down"
	}
	if !c.ready.Load() {
		if c.everLive.Load() {
			return "the latest configuration could not be made live; nginx keeps serving an older one"
		}
		return "no configuration is live yet"
	}
	if c.opts.Health != nil {
		if err := c.opts.Health(); err != nil {
			return err.Error()
		}
	}
	return ""
}

// Run loops until ctx is done. A failed apply is retried with backoff even
// when no new event arrives.
func (c *Controller) Run(ctx context.Context) error {
	src := c.opts.Source
	for !src.HasSynced() {
		select {
		case <-ctx.Done():
			return nil
		case <-src.Changed():
		case <-time.After(50 * time.Millisecond):
		}
	}
	retry := time.Duration(0)
	eventAt := time.Now()
	var flush *time.Timer
	defer func() {
		if flush != nil {
			flush.Stop()
		}
	}()
	for {
		syncStart := time.Now()
		err := c.Sync(ctx, eventAt)
		if ctx.Err() != nil {
			return nil
		}
		if len(c.opts.Source.Changed()) > 0 {
			// Such a change waits for the sync, even one that could go
			// ahead of it (hostsahead.go): the time a whole-cluster sync
			// adds to it.
			c.opts.Log.Debug("a change arrived during the full sync and waited for it", "sync", time.Since(syncStart))
		}
		var retryC <-chan time.Time
		if err != nil {
			retry = min(max(retry*2, 500*time.Millisecond), 30*time.Second)
			retryC = time.After(retry)
		} else {
			retry = 0
		}
		full, coalesce := c.wait(ctx, retryC, &flush)
		if !full {
			return nil
		}
		eventAt = time.Now()
		if coalesce {
			c.coalesce(ctx, eventAt)
		}
	}
}

// wait waits for what calls for the next full sync, and whether to
// coalesce the events that follow it first; full is false once ctx is
// done. Meanwhile it applies EndpointSlice changes through the
// incremental path as they come (endpoints.go): each at once, and those
// arriving during a push together in the next one, with no window of
// its own.
func (c *Controller) wait(ctx context.Context, retryC <-chan time.Time, flush **time.Timer) (full, coalesce bool) {
	var flushC <-chan time.Time
	if *flush == nil && c.stateFileStale() { // the sync patched
		*flush = time.NewTimer(stateFileFlushDelay)
	}
	for {
		if *flush != nil {
			flushC = (*flush).C
		}
		select {
		case <-ctx.Done():
			return false, false
		case <-retryC:
			return true, false
		case <-c.opts.Restarted:
			c.mu.Lock()
			c.forcePush = true
			c.mu.Unlock()
			return true, false
		case <-c.endpointsChanged():
			if !c.SyncEndpoints(ctx, time.Now()) {
				return true, true // as any change that takes a build
			}
			if *flush == nil {
				*flush = time.NewTimer(stateFileFlushDelay)
			}
		case <-flushC:
			*flush, flushC = nil, nil
			c.flushStateFile()
		case <-c.opts.Source.Changed():
			if c.sourceChanged(ctx) {
				return true, true
			}
		case <-c.namesChanged():
			return true, true
		case <-c.staplesChanged():
			return true, true
		case <-c.replicasChanged():
			return true, true
		case <-c.opts.Resync:
			return true, false // nothing to wait for
		}
	}
}

// endpointsChanged signals the source's EndpointSlice changes; nil (never)
// for a source that does not tell them apart.
func (c *Controller) endpointsChanged() <-chan struct{} {
	if es, ok := c.opts.Source.(source.EndpointSource); ok {
		return es.EndpointsChanged()
	}
	return nil
}

// coalesce waits until events have been quiet for Quiet, or MaxDelay has
// passed since the first one.
func (c *Controller) coalesce(ctx context.Context, first time.Time) {
	deadline := first.Add(c.opts.MaxDelay)
	for {
		wait := min(c.opts.Quiet, time.Until(deadline))
		if wait <= 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-c.opts.Source.Changed():
		case <-time.After(wait):
			return
		}
	}
}

// maxIsolationRounds bounds how many times one sync re-renders after
// excluding a culprit.
const maxIsolationRounds = 8

// Sync builds, renders and applies the current snapshot once.
func (c *Controller) Sync(ctx context.Context, eventAt time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if es, ok := c.opts.Source.(source.EndpointSource); ok {
		es.TakeEndpointChanges() // the snapshot holds them
	}
	if cs, ok := c.opts.Source.(source.ChangeSource); ok {
		cs.TakeChanges() // so does it
	}
	select {
	case <-c.opts.Resync: // this sync answers it
	default:
	}
	c.epIndex, c.services = nil, nil
	snap := c.opts.Source.Snapshot()
	c.logSourceProblems(snap.Problems)
	var res SyncResult
	for round := 0; ; round++ {
		built, out, err := c.build(snap, nil)
		m, problems := built.Model, built.Problems
		c.services = built.Services
		res = SyncResult{Model: m, Problems: problems, Snapshot: snap, Gateway: built.Gateway}
		if err != nil {
			res.Err = err
			break
		}
		backends := c.dynamicBackends(&res)
		if c.dyn != nil {
			c.dyn.hosts = c.hostsTable(out)
			if err := c.dyn.prepare(backends); err != nil {
				res.Err = err
				break
			}
		}
		if c.opts.Requests != nil && !out.Memoized { // else the last render's, set then
			c.opts.Requests.SetSeries(out.Series, m.Config.WorkerShutdownTimeout)
		}
		if c.opts.Spans != nil {
			c.opts.Spans.Configure(m.Config.Tracing, out.Spans, m.Config.WorkerShutdownTimeout)
		}
		result, err := c.opts.Applier.Apply(ctx, out.Files, out.Version)
		if err == nil {
			if result.Reloaded && c.dyn != nil {
				c.dyn.reloaded()
			}
			c.hop, c.applied, c.hostSources = &out.Hop, out.Version, out.HostSources
			c.recordApply(result, out.Version, m)
			c.opts.Metrics.Compat.Certificates.Set(servedCertificates(m))
			if err := c.certificatesChanged(ctx, result); err != nil {
				res.Err = err
				c.opts.Log.Error("telling nginx about renewed certificates failed; will retry", "err", err)
				break
			}
			if err := c.pushDynamic(ctx, backends, &res); err != nil {
				res.Err = err
				c.opts.Log.Error("pushing endpoints to nginx failed; will retry", "err", err)
				break
			}
			c.recordEndpoints(m)
			c.indexEndpoints(m, res.Problems, built.StreamServices)
			c.opts.Metrics.ConfigApplySeconds.Observe(time.Since(eventAt).Seconds())
			c.ready.Store(true)
			c.everLive.Store(true)
			c.lastLive = markLive(snap)
			break
		}
		c.recordReload(reloadReason(c.started, nil), 0, err)
		c.opts.Metrics.Compat.Failed()
		res.Err = err
		var cfgErr *runtime.ConfigError
		if !errors.As(err, &cfgErr) || round >= maxIsolationRounds {
			c.opts.Log.Error("configuration not applied; nginx keeps serving the last good one", "err", err)
			break
		}
		secrets, objects := culprits(cfgErr.Output, c.opts.Render.StateDir, out, m, snap)
		switch {
		case len(secrets)+len(objects) > 0:
		case modSecurityMainRefused(cfgErr.Output, c.opts.Render.StateDir):
			// The http level's ModSecurity rules: of them only the
			// ConfigMap's snippet is anyone's text (the base
			// configuration is ours, the CRS the distribution's), and
			// leaving out an Ingress would only move the refusal on.
			c.opts.Log.Warn("nginx refused the http level's ModSecurity rules; trying without the ConfigMap", "err", err)
			if key := c.blameConfigMap(ctx, snap); key != "" {
				objects = []string{key}
			}
		default:
			c.opts.Log.Warn("nginx refused the configuration without naming an object's file; bisecting the changed objects", "err", err)
			if key := c.bisect(ctx, snap); key != "" {
				objects = []string{key}
			} else if key := c.blameConfigMap(ctx, snap); key != "" {
				objects = []string{key}
			}
		}
		if len(secrets)+len(objects) == 0 {
			c.opts.Log.Error("nginx refused the configuration and no object could be blamed; keeping the last good one", "err", err)
			break
		}
		for _, key := range secrets {
			c.badSecret[key] = exclusion{fingerprint: secretFingerprint(snap, key), reason: cfgErr.Output}
			c.opts.Log.Error("nginx refused a TLS secret; its hosts use the default certificate", "secret", key, "err", cfgErr.Output)
		}
		for _, key := range objects {
			c.badObject[key] = exclusion{fingerprint: objectFingerprint(snap, key), reason: "nginx refused its configuration: " + cfgErr.Output}
			c.opts.Log.Error("nginx refused the configuration of an object; excluding it", "object", key, "err", cfgErr.Output)
		}
	}
	if res.Err != nil {
		c.ready.Store(false)
	}
	c.logProblems(res.Problems)
	if c.opts.OnSync != nil {
		c.opts.OnSync(res)
	}
	return res.Err
}

// build turns snap into a Model and its files, leaving out the objects
// excluded so far and those in extra (keys as model.ObjectRef.Key).
func (c *Controller) build(snap *source.Snapshot, extra map[string]bool) (*build.Result, *render.Output, error) {
	opts := c.opts.Model
	opts.Excluded = current(c.badObject, snap, objectFingerprint)
	for key := range extra {
		opts.Excluded[key] = "bisecting"
	}
	opts.BadSecrets = current(c.badSecret, snap, secretFingerprint)
	opts.Replicas = c.replicas()
	r := build.Run(snap, opts)
	m := r.Model
	r.Problems = append(r.Problems, c.fillExternalNames(m, snap, extra == nil)...)
	r.Problems = append(r.Problems, c.fillOCSP(m, snap, extra == nil)...)
	params := c.opts.Render
	if c.dyn != nil && extra == nil {
		params.Hop = c.hop
	}
	out, err := c.memo.Render(m, params)
	if err == nil && len(out.Hosts) > 0 && (out.Version != c.applied || balancer.ValidateHosts(out.Hosts) != nil) {
		// The files change anyway: the reload takes the new hosts into
		// them rather than leave them to the table. (A table nginx
		// would refuse goes into the files too.)
		params.Hop = nil
		out, err = c.memo.Render(m, params)
	}
	if err != nil {
		return r, nil, err
	}
	maps.Copy(out.Files, runtime.SecretFiles(m))
	return r, out, nil
}

// hostsTable is the hosts table for out: its hosts, and the entries of
// hosts that a reload writes into the files, until the next reload. The
// reload's old workers, which serve until the new ones take over (and
// their in-flight requests after), know such a host by the table only;
// the new ones never look it up, as it is theirs by name. A host removed
// leaves the table at once.
func (c *Controller) hostsTable(out *render.Output) []balancer.Host {
	if c.hop != nil && out.Version != c.applied { // this sync reloads
		var folded []balancer.Host
		for _, h := range c.dyn.hosts {
			if out.Hop.Names[h.Name] && !c.hop.Names[h.Name] {
				folded = append(folded, h)
			}
		}
		c.folded = folded
	}
	table := slices.Concat(out.Hosts, c.folded)
	sortHosts(table)
	return table
}

// recordApply logs and counts what an Apply did: a reload (by reason) or a
// certificate change applied without one.
func (c *Controller) recordApply(r runtime.ApplyResult, version string, m *model.Model) {
	if r.Reloaded {
		reason := reloadReason(c.started, r.Changed)
		c.started = true
		c.recordReload(reason, r.Duration, nil)
		c.opts.Metrics.Compat.Reloaded(version)
		c.opts.Log.Info("configuration live", "version", version, "reason", reason, "servers", len(m.Servers),
			"backends", len(m.Backends), "took", r.Duration.Round(time.Millisecond))
		return
	}
	c.opts.Metrics.Compat.Unchanged(version)
	if len(r.Changed)+len(r.Removed) > 0 {
		c.opts.Metrics.DynamicUpdates.WithLabelValues("certificates", "success").Inc()
		c.opts.Log.Info("certificates updated without a reload", "files", len(r.Changed)+len(r.Removed))
	}
}

// reloadReason names why files changed: the first start, endpoints only
// (plain mode keeps endpoints in upstreams.conf), or configuration.
func reloadReason(started bool, changed []string) string {
	if !started {
		return "start"
	}
	onlyUpstreams := len(changed) > 0
	for _, f := range changed {
		if f != layout.UpstreamsConf && f != layout.MainConf { // nginx.conf carries the version
			onlyUpstreams = false
		}
	}
	if onlyUpstreams {
		return "endpoints"
	}
	return "config"
}

// certificatesChanged tells the Lua data plane that certificate files were
// rewritten or removed without a reload, so workers re-read them.
func (c *Controller) certificatesChanged(ctx context.Context, r runtime.ApplyResult) error {
	if c.opts.Dynamic == nil || r.Reloaded {
		return nil
	}
	// A removed file counts too: an OCSP response withdrawn after a
	// revocation must stop being stapled.
	for _, f := range slices.Concat(r.Changed, r.Removed) {
		if strings.HasPrefix(f, layout.SecretsDir+"/") {
			return c.opts.Dynamic.CertificatesChanged(ctx)
		}
	}
	return nil
}

// pushDynamic sends the endpoint state over the dynamic channel.
func (c *Controller) pushDynamic(ctx context.Context, backends []balancer.Backend, res *SyncResult) error {
	if c.dyn == nil {
		return nil
	}
	pushed, err := c.dyn.push(ctx, backends, c.forcePush, res)
	if err != nil {
		c.opts.Metrics.DynamicUpdates.WithLabelValues("endpoints", "failure").Inc()
	}
	if c.dyn.hostsRefused {
		// The retry writes the table's hosts into the files.
		c.dyn.hostsRefused, c.hop = false, nil
		c.opts.Metrics.DynamicUpdates.WithLabelValues("hosts", "failure").Inc()
		if err == nil {
			err = errors.New("nginx refused the state with the hosts table; its hosts go into the files")
		}
	}
	if err != nil {
		return err
	}
	c.forcePush = false
	if pushed {
		c.opts.Metrics.DynamicUpdates.WithLabelValues("endpoints", "success").Inc()
	}
	pushed, err = c.dyn.pushHosts(ctx)
	if err != nil {
		c.opts.Metrics.DynamicUpdates.WithLabelValues("hosts", "failure").Inc()
		if balancer.IsRejected(err) {
			// nginx refuses the table (it does not fit its shared
			// dict, say): the retry writes its hosts into the files.
			c.hop = nil
		}
		return err
	}
	if pushed {
		c.opts.Metrics.DynamicUpdates.WithLabelValues("hosts", "success").Inc()
	}
	return nil
}

// recordEndpoints sets the per-backend endpoint gauge.
func (c *Controller) recordEndpoints(m *model.Model) {
	c.opts.Metrics.BackendEndpoints.Replace(func(yield func(string, int) bool) {
		for _, b := range m.Backends {
			if !yield(b.Key, len(b.Endpoints)) {
				return
			}
		}
	})
}

func (c *Controller) recordReload(reason string, d time.Duration, err error) {
	m := c.opts.Metrics
	if err != nil {
		m.Reloads.WithLabelValues(reason, "failure").Inc()
		m.LastReloadSuccess.Set(0)
		return
	}
	m.Reloads.WithLabelValues(reason, "success").Inc()
	m.LastReloadSeconds.Set(d.Seconds())
	m.LastReloadSuccess.Set(1)
}

// logSourceProblems logs each source problem once, when it first appears.
func (c *Controller) logSourceProblems(problems []source.Problem) {
	seen := make(map[source.Problem]bool, len(problems))
	for _, p := range problems {
		seen[p] = true
		if !c.lastSourceProblem[p] {
			c.opts.Log.Warn("source problem", "where", p.Where, "err", p.Message)
		}
	}
	c.lastSourceProblem = seen
}

// logProblems logs each problem once, when it first appears, and keeps the
// per-reason gauge current.
func (c *Controller) logProblems(problems []model.Problem) {
	seen := map[string]bool{}
	counts := map[string]int{}
	for _, p := range problems {
		counts[p.Reason]++
		k := p.String()
		seen[k] = true
		if c.lastProblem[k] {
			continue
		}
		c.opts.Log.Warn("object problem", "kind", p.Object.Kind, "object", p.Object.Namespace+"/"+p.Object.Name,
			"reason", p.Reason, "rejected", p.Rejected, "message", p.Message)
	}
	c.lastProblem = seen
	c.opts.Metrics.Problems.Reset()
	reasons := make([]string, 0, len(counts))
	for r := range counts {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	for _, r := range reasons {
		c.opts.Metrics.Problems.WithLabelValues(r).Set(float64(counts[r]))
	}
}

// HealthHandler serves /healthz (the process is alive) and /readyz (the
// first configuration is live).
func (c *Controller) HealthHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if why := c.notReady(); why != "" {
			http.Error(w, "not ready: "+why, http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok\n"))
	})
	return mux
}
