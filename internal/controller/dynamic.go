package controller

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"time"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/model"
)

// Pusher sends a full endpoint state over the dynamic channel;
// *balancer.Client implements it.
type Pusher interface {
	ReplaceEncoded(ctx context.Context, generation int64, body []byte) error
	// CertificatesChanged makes workers drop their parsed certificates
	// after certificate files were rewritten without a reload.
	CertificatesChanged(ctx context.Context) error
}

// generationReader is the optional part of a Pusher (*balancer.Client has
// it) through which the channel notices a state it did not push.
type generationReader interface {
	Generation(ctx context.Context) (int64, error)
}

// Reasons of the problems the dynamic channel raises, on the Service and
// on each Ingress routing to it. The backend is left out of the pushed
// state, so its paths answer 503 like a backend without endpoints.
const (
	// ReasonEndpointsOverLimit: the Service port has more endpoints than
	// the Lua balancer accepts for one backend (balancer.MaxEndpoints).
	ReasonEndpointsOverLimit = "EndpointsOverLimit"
	// ReasonInvalidBackend: the backend breaks another rule of the
	// payload (checked in Go, or refused by nginx).
	ReasonInvalidBackend = "InvalidBackend"
	// ReasonStateTooLarge: nginx could not store the whole state (shared
	// dict or request body too small), and this, the largest backend,
	// was left out so the others go live.
	ReasonStateTooLarge = "StateTooLarge"
)

// maxRefusals bounds how many backends one push may leave out after
// nginx refused it, each costing one more full push.
const maxRefusals = 8

// dynamicChannel keeps the Lua balancer's state equal to the Model's
// backends. Every push is the full state (cheap: ~0.1 s for 10,000
// backends, milliseconds for normal sizes) so nginx can never drift; it is
// skipped when nothing changed and nginx still serves what was pushed.
// The same bytes go to a state file first, which nginx loads whenever it
// (re)starts or reloads.
//
// The controller owns the state: nginx applies a full replace whatever its
// generation, so a stale or foreign state is simply overwritten. A backend
// that would make nginx refuse the push is left out (and reported) rather
// than holding back every other backend's changes.
type dynamicChannel struct {
	pusher    Pusher
	stateFile string
	lastHash  [32]byte
	// lastPrepared is the content hash of what the state file holds now
	// (written by prepare or push).
	lastPrepared [32]byte
	last         []balancer.Backend
	lastGen      int64
	// pushedGen is the generation of the last push nginx accepted.
	pushedGen int64
	// refused are backends nginx refused, by key: left out while their
	// content is unchanged, so each sync does not pay a refused push.
	refused map[string]refusal
	// failedHash is the content of the last push refused as a whole,
	// failedErr its error: it is not sent again until it changes or nginx
	// restarts.
	failedHash [32]byte
	failedErr  error
	// hashStale says that last changed by incremental pushes
	// (endpoints.go) since lastHash was computed; fileStale that the
	// state file does not hold last yet.
	hashStale, fileStale bool
	// fileGen and fileBackends are what the state file holds (its
	// content hash is lastPrepared); fileGen 0: not written in this run.
	fileGen      int64
	fileBackends []balancer.Backend
	// hosts is the table of hosts served without a reload that the
	// controller wants (render.Output.Hosts); every state the channel
	// writes or pushes whole carries it, and pushHosts sends it when it
	// differs from pushedHosts, the hash of the table nginx has.
	hosts       []balancer.Host
	pushedHosts [32]byte
	// fileHosts is the hash of the table the state file holds.
	fileHosts [32]byte
	// hostsRefused: nginx refused a state carrying the hosts table, which
	// went without it; the controller writes those hosts into the files.
	hostsRefused bool
}

// hostsReplacer is the part of a Pusher (*balancer.Client has it) that
// replaces nginx's table of hosts served without a reload.
type hostsReplacer interface {
	ReplaceHosts(ctx context.Context, hosts []balancer.Host) error
}

// hostsHash is the content hash of a hosts table; an empty one is nil's.
func hostsHash(hosts []balancer.Host) ([32]byte, error) {
	if len(hosts) == 0 {
		hosts = nil
	}
	body, err := json.Marshal(hosts)
	return sha256.Sum256(body), err
}

// pushHosts sends the hosts table when nginx's differs from it, after the
// backends it names, and has the state file follow. It reports whether it
// pushed.
func (d *dynamicChannel) pushHosts(ctx context.Context) (bool, error) {
	hash, err := hostsHash(d.hosts)
	if err != nil || hash == d.pushedHosts {
		return false, err
	}
	r, ok := d.pusher.(hostsReplacer)
	if !ok {
		return false, nil
	}
	if err := r.ReplaceHosts(ctx, d.hosts); err != nil {
		return false, err
	}
	d.pushedHosts, d.fileStale = hash, true
	return true, nil
}

type refusal struct {
	hash            [32]byte
	reason, message string
}

// backendsOf converts the Model's backends into the balancer's payload.
// The Model lists each address and port once.
func backendsOf(m *model.Model) []balancer.Backend {
	out := make([]balancer.Backend, 0, len(m.Backends))
	for _, b := range m.Backends {
		be := balancer.Backend{Key: b.Key, Method: b.Balance.Method, HashKey: b.Balance.HashKey,
			Retries:  b.Balance.Retries,
			MaxFails: b.Limits.MaxFails, FailTimeoutMs: int(b.Limits.FailTimeout.Milliseconds()), MaxConns: b.Limits.MaxConns}
		if s := b.Balance.Sticky; s != nil {
			be.Sticky = &balancer.StickyOptions{Cookie: s.Name, Path: s.Path, MaxAge: s.MaxAge, SameSite: s.SameSite, Secure: s.Secure}
		}
		be.Endpoints = payloadEndpoints(b.Endpoints)
		out = append(out, be)
	}
	return out
}

// dynamicBackends returns the backends of res.Model that nginx will
// accept, for prepare and pushDynamic; each one left out is reported in
// res.Problems. Nil in plain mode, where endpoints are in the files.
func (c *Controller) dynamicBackends(res *SyncResult) []balancer.Backend {
	if c.dyn == nil {
		reportPlainCanaries(res)
		return nil
	}
	return c.dyn.admit(append(backendsOf(res.Model), splitsOf(res.Model)...), res)
}

// admit drops the backends that break a limit or rule of the payload
// (Backend.Validate mirrors the Lua side), and those nginx refused before
// with the same content.
func (d *dynamicChannel) admit(backends []balancer.Backend, res *SyncResult) []balancer.Backend {
	out := backends[:0] // in place: the caller's slice is its own (dynamicBackends)
	refused := map[string]refusal{}
	for _, b := range backends {
		if err := b.Validate(); err != nil {
			reason := ReasonInvalidBackend
			var le *balancer.LimitError
			if errors.As(err, &le) && le.What == "endpoints" {
				reason = ReasonEndpointsOverLimit
			}
			if inner := errors.Unwrap(err); inner != nil {
				err = inner // without the "backend <key>: " prefix report adds
			}
			report(res, b.Key, reason, err.Error())
			continue
		}
		if r, ok := d.refused[b.Key]; ok && r.hash == backendHash(b) {
			refused[b.Key] = r
			report(res, b.Key, r.reason, r.message)
			continue
		}
		out = append(out, b)
	}
	d.refused = refused
	if len(out) > balancer.MaxBackends {
		for _, b := range out[balancer.MaxBackends:] {
			report(res, b.Key, ReasonInvalidBackend, (&balancer.LimitError{What: "backends", Got: len(out), Limit: balancer.MaxBackends}).Error())
		}
		out = out[:balancer.MaxBackends]
	}
	return out
}

// prepare writes the state file that a reload (or start) of nginx loads:
// the new backends plus any previously pushed ones they lack, so that new
// workers find every backend their locations name, and old workers still
// finishing requests find theirs.
func (d *dynamicChannel) prepare(want []balancer.Backend) error {
	have := make(map[string]bool, len(want))
	for _, b := range want {
		have[b.Key] = true
	}
	all := append([]balancer.Backend(nil), want...)
	for _, b := range d.last {
		if !have[b.Key] {
			all = append(all, b)
		}
	}
	// Most syncs change nothing here; skip rewriting the file then (it is
	// megabytes at 10,000 backends).
	hash, err := contentHash(all)
	if err != nil {
		return err
	}
	hosts, err := hostsHash(d.hosts)
	if err != nil {
		return err
	}
	if hash == d.lastPrepared && hosts == d.fileHosts {
		return nil
	}
	gen := d.nextGeneration()
	body, err := balancer.EncodeState(balancer.State{Generation: gen, Backends: all, Hosts: d.hosts})
	if err != nil {
		return err
	}
	if err := writeStateFile(d.stateFile, body); err != nil {
		return err
	}
	d.wrote(hash, gen, all)
	return nil
}

// wrote records what the state file holds now.
func (d *dynamicChannel) wrote(hash [32]byte, gen int64, backends []balancer.Backend) {
	d.lastPrepared, d.fileGen, d.fileBackends = hash, gen, backends
	d.fileHosts, _ = hostsHash(d.hosts)
}

// reloaded records that nginx reloaded, so its master loaded the state
// file: nginx's state is now the file's, and the next push is a patch
// from it rather than a full state (at 10,000 backends a full state
// takes about half a second in nginx, a patch milliseconds).
func (d *dynamicChannel) reloaded() {
	if d.fileGen == 0 {
		return // a file of an earlier run, or none: the push compares
	}
	d.last, d.pushedGen, d.lastHash = d.fileBackends, d.fileGen, d.lastPrepared
	d.pushedHosts = d.fileHosts
	d.hashStale, d.fileStale = false, false
}

// nextGeneration is microseconds since the epoch, increasing within a run.
// nginx records it but does not compare it for a full replace, so a
// controller restarted with a clock behind still converges at once.
func (d *dynamicChannel) nextGeneration() int64 {
	d.lastGen = max(time.Now().UnixMicro(), d.lastGen+1)
	return d.lastGen
}

// push sends backends unless they equal the last push and nginx still
// serves that push (checked by generation). It writes the state file
// first. If nginx refuses the state, push leaves out the backend to blame
// (the one a 400 names, or the largest on 507 or 413), reports it in res
// and pushes the rest, at most maxRefusals times. It reports whether it
// pushed; force pushes an unchanged state too (after nginx restarted).
func (d *dynamicChannel) push(ctx context.Context, backends []balancer.Backend, force bool, res *SyncResult) (pushed bool, err error) {
	if d.hashStale {
		if d.lastHash, err = contentHash(d.last); err != nil {
			return false, err
		}
		d.hashStale = false
	}
	// The hash covers the content only; the generation changes each push.
	hash, err := contentHash(backends)
	if err != nil {
		return false, err
	}
	if !force && hash != d.lastHash && d.reordered(backends) {
		// The same backends in another order: those hostsAhead
		// appended, in the build's order now.
		d.last, d.lastHash = backends, hash
	}
	if !force {
		if hash == d.lastHash && !d.diverged(ctx) {
			return false, nil
		}
		if hash == d.failedHash && d.failedErr != nil {
			return false, d.failedErr
		}
		if d.patch(ctx, backends, hash) {
			return true, nil
		}
	}
	d.failedErr = nil
	first := hash
	for dropped := 0; ; dropped++ {
		err := d.send(ctx, backends, hash)
		if err == nil {
			return true, nil
		}
		if !balancer.IsRejected(err) {
			return false, err
		}
		if len(d.hosts) > 0 {
			// The hosts table may be what nginx refuses: the state goes
			// without it, and its hosts into the files (hostsRefused).
			d.hosts, d.hostsRefused = nil, true
			dropped--
			continue
		}
		i, reason, msg := blame(err, backends)
		if i < 0 || dropped >= maxRefusals {
			d.failedHash, d.failedErr = first, err
			d.restoreStateFile()
			return false, err
		}
		b := backends[i]
		if d.refused == nil {
			d.refused = map[string]refusal{}
		}
		d.refused[b.Key] = refusal{hash: backendHash(b), reason: reason, message: msg}
		report(res, b.Key, reason, msg)
		backends = append(backends[:i:i], backends[i+1:]...)
		if hash, err = contentHash(backends); err != nil {
			return false, err
		}
	}
}

// reordered reports whether backends are the last push's, in any order.
func (d *dynamicChannel) reordered(backends []balancer.Backend) bool {
	if len(backends) != len(d.last) {
		return false
	}
	at := make(map[string]int, len(d.last))
	for i, b := range d.last {
		at[b.Key] = i
	}
	for _, b := range backends {
		i, ok := at[b.Key]
		if !ok || !reflect.DeepEqual(d.last[i], b) {
			return false
		}
	}
	return true
}

// patch sends only what differs between the last push and backends, on
// the last push's generation, and reports whether nginx took it. It
// declines (false) when it cannot: nothing pushed yet, a Pusher without
// patches, or more than half the backends changed (then a full state
// costs nginx about as much). nginx refuses it when its state is not the
// base (someone else's push: 409) or the patch breaks a rule; the full
// push that follows then replaces the state or finds the backend to
// blame. The state file follows within a second (the controller's Run
// loop: flushStateFile), since nginx reads it only at a start or a reload,
// which a full sync prepares for itself.
func (d *dynamicChannel) patch(ctx context.Context, backends []balancer.Backend, hash [32]byte) bool {
	p, ok := d.pusher.(endpointPatcher)
	if !ok || d.pushedGen == 0 {
		return false
	}
	at := make(map[string]int, len(d.last))
	for i, b := range d.last {
		at[b.Key] = i
	}
	var up []balancer.Backend
	for _, b := range backends {
		if i, ok := at[b.Key]; ok && reflect.DeepEqual(d.last[i], b) {
			delete(at, b.Key)
			continue
		}
		delete(at, b.Key)
		up = append(up, b)
	}
	del := make([]string, 0, len(at))
	for _, b := range d.last {
		if _, gone := at[b.Key]; gone {
			del = append(del, b.Key)
		}
	}
	if len(up)+len(del) > max(1, len(backends)/2) {
		return false
	}
	gen := d.nextGeneration()
	if err := p.Patch(ctx, d.pushedGen, gen, up, del); err != nil {
		return false
	}
	d.lastHash, d.last, d.pushedGen = hash, backends, gen
	d.hashStale, d.fileStale = false, true
	return true
}

// send writes the state file and pushes the same bytes.
func (d *dynamicChannel) send(ctx context.Context, backends []balancer.Backend, hash [32]byte) error {
	gen := d.nextGeneration()
	body, err := balancer.EncodeState(balancer.State{Generation: gen, Backends: backends, Hosts: d.hosts})
	if err != nil {
		return err
	}
	if err := writeStateFile(d.stateFile, body); err != nil {
		return err
	}
	d.wrote(hash, gen, backends)
	if err := d.pusher.ReplaceEncoded(ctx, gen, body); err != nil {
		return err
	}
	d.lastHash, d.last, d.pushedGen = hash, backends, gen
	d.hashStale, d.fileStale = false, false
	d.pushedHosts, _ = hostsHash(d.hosts) // a whole state replaces the table
	return nil
}

// writePushed brings the state file up to date with the last push after
// incremental pushes, with the pushed generation: a reload that loads it
// leaves nginx on the state the controller knows it has.
func (d *dynamicChannel) writePushed() error {
	hash, err := contentHash(d.last)
	if err != nil {
		return err
	}
	body, err := balancer.EncodeState(balancer.State{Generation: d.pushedGen, Backends: d.last, Hosts: d.hosts})
	if err != nil {
		return err
	}
	if err := writeStateFile(d.stateFile, body); err != nil {
		return err
	}
	d.lastHash = hash
	d.wrote(d.lastHash, d.pushedGen, d.last)
	d.hashStale, d.fileStale = false, false
	return nil
}

// restoreStateFile puts the last accepted state back in the state file
// after a refused push, so a restarted nginx does not start from a state
// it refuses.
func (d *dynamicChannel) restoreStateFile() {
	if d.pushedGen == 0 {
		return
	}
	body, err := balancer.EncodeState(balancer.State{Generation: d.pushedGen, Backends: d.last, Hosts: d.hosts})
	if err == nil && writeStateFile(d.stateFile, body) == nil {
		d.wrote(d.lastHash, d.pushedGen, d.last)
	}
}

// diverged reports whether nginx serves a generation other than the one
// last pushed: the state was written by someone else (or loaded from an
// older file), and the controller's state must replace it. An unreachable
// nginx is not divergence: a push would fail too, and a restarted nginx
// gets a forced push.
func (d *dynamicChannel) diverged(ctx context.Context) bool {
	g, ok := d.pusher.(generationReader)
	if !ok || d.pushedGen == 0 {
		return false
	}
	gen, err := g.Generation(ctx)
	return err == nil && gen != d.pushedGen
}

// luaBackendRe finds the backend a 400 from the Lua side blames;
// luaEndpointsRe tells that it has too many endpoints.
var (
	luaBackendRe   = regexp.MustCompile(`^backends\[(\d+)\]`)
	luaEndpointsRe = regexp.MustCompile(`^backends\[\d+\]\.endpoints: must have at most`)
)

// blame picks the backend to leave out after nginx refused a push: the
// one an invalid-payload message names, or the largest when the state did
// not fit. It returns -1 when no single backend is to blame.
func blame(err error, backends []balancer.Backend) (int, string, string) {
	var ae *balancer.APIError
	if !errors.As(err, &ae) || len(backends) == 0 {
		return -1, "", ""
	}
	switch ae.StatusCode {
	case http.StatusBadRequest:
		m := luaBackendRe.FindStringSubmatch(ae.Message)
		if m == nil {
			return -1, "", ""
		}
		i, err := strconv.Atoi(m[1])
		if err != nil || i >= len(backends) {
			return -1, "", ""
		}
		reason := ReasonInvalidBackend
		if luaEndpointsRe.MatchString(ae.Message) {
			reason = ReasonEndpointsOverLimit
		}
		// Without the index, which shifts as other backends come and go.
		return i, reason, "nginx refused it: " + luaBackendRe.ReplaceAllString(ae.Message, "backend")
	case http.StatusInsufficientStorage, http.StatusRequestEntityTooLarge:
		i, size := 0, -1
		for j, b := range backends {
			data, _ := json.Marshal(b)
			if len(data) > size {
				i, size = j, len(data)
			}
		}
		return i, ReasonStateTooLarge, fmt.Sprintf("nginx could not take the endpoint state (%v); this backend, the largest (%d endpoints), was left out so the others go live",
			ae, len(backends[i].Endpoints))
	}
	return -1, "", ""
}

// report adds a problem for a backend left out of the pushed state: on
// its Service, and on every Ingress routing to it (so that Events carry
// it). Its paths answer 503, as for a Service without endpoints.
func report(res *SyncResult, key, reason, msg string) {
	reportBackend(res, key, reason, fmt.Sprintf("backend %s is left out of the endpoint state, so its paths answer 503: %s", key, msg), msg)
}

// reportBackend adds a Problem with svcMsg on the Service behind backend
// key and, when locMsg is set, one on each object whose locations route
// to it, saying that it answers 503 for locMsg. A key that names no
// Service's backend is a split's (reportSplit).
func reportBackend(res *SyncResult, key, reason, svcMsg, locMsg string) {
	if res == nil || res.Model == nil {
		return
	}
	var svc model.ObjectRef
	for _, b := range res.Model.Backends {
		if b.Key == key {
			svc = model.ObjectRef{Kind: "Service", Namespace: b.Namespace, Name: b.Service}
			break
		}
	}
	if svc.Name == "" {
		reportSplit(res, key, reason, locMsg)
		return
	}
	if res.Snapshot != nil {
		for _, s := range res.Snapshot.Services {
			if s.Namespace == svc.Namespace && s.Name == svc.Name {
				svc.UID = string(s.UID)
			}
		}
	}
	res.Problems = append(res.Problems, model.Problem{Object: svc, Reason: reason, Message: svcMsg})
	if locMsg == "" {
		return
	}
	seen := map[model.ObjectRef]bool{}
	for _, srv := range res.Model.Servers {
		locs := srv.Locations
		if srv.Default != nil {
			locs = append(locs[:len(locs):len(locs)], srv.Default)
		}
		for _, l := range locs {
			if l.Backend() != key || l.Source.Name == "" || seen[l.Source] {
				continue
			}
			seen[l.Source] = true
			res.Problems = append(res.Problems, model.Problem{Object: l.Source, Reason: reason,
				Message: fmt.Sprintf("Service %s/%s (backend %s) answers 503: %s", svc.Namespace, svc.Name, key, locMsg)})
		}
	}
}

func contentHash(backends []balancer.Backend) ([32]byte, error) {
	return balancer.HashBackends(backends)
}

func backendHash(b balancer.Backend) [32]byte {
	data, _ := json.Marshal(b) // plain data: cannot fail
	return sha256.Sum256(data)
}

func writeStateFile(path string, body []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".dynamic-state-*")
	if err != nil {
		return fmt.Errorf("state file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(body); err != nil {
		tmp.Close()
		return fmt.Errorf("state file: %w", err)
	}
	if err := tmp.Chmod(0o600); err != nil { // read by nginx's master only
		tmp.Close()
		return fmt.Errorf("state file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("state file: %w", err)
	}
	return os.Rename(tmp.Name(), path)
}
