package controller

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
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

// dynamicChannel keeps the Lua balancer's state equal to the Model's
// backends. Every push is the full state (cheap: ~0.1 s for 10,000
// backends, milliseconds for normal sizes) so nginx can never drift; it is
// skipped when nothing changed. The same bytes go to a state file first,
// which nginx loads whenever it (re)starts.
type dynamicChannel struct {
	pusher    Pusher
	stateFile string
	lastHash  [32]byte
	// lastPrepared is the content hash of what the state file holds now
	// (written by prepare or push).
	lastPrepared [32]byte
	last         []balancer.Backend
	lastGen      int64
}

// backendsOf converts the Model's backends into the balancer's payload.
func backendsOf(m *model.Model) []balancer.Backend {
	out := make([]balancer.Backend, 0, len(m.Backends))
	for _, b := range m.Backends {
		be := balancer.Backend{Key: b.Key, Method: b.Balance.Method, HashKey: b.Balance.HashKey,
			Sticky: b.Balance.Sticky, Retries: b.Balance.Retries, Endpoints: make([]balancer.Endpoint, 0, len(b.Endpoints))}
		for _, e := range b.Endpoints {
			be.Endpoints = append(be.Endpoints, balancer.Endpoint{Address: e.Address, Port: int(e.Port), Weight: 1, Ready: true, Zone: e.Zone})
		}
		out = append(out, be)
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
	content, err := balancer.EncodeState(balancer.State{Backends: all})
	if err != nil {
		return err
	}
	hash := sha256.Sum256(content)
	if hash == d.lastPrepared {
		return nil
	}
	d.lastPrepared = hash
	body, err := balancer.EncodeState(balancer.State{Generation: d.nextGeneration(), Backends: all})
	if err != nil {
		return err
	}
	return writeStateFile(d.stateFile, body)
}

// nextGeneration is microseconds since the epoch: increasing across
// controller restarts, so a state file from an earlier run never outranks
// a new push.
func (d *dynamicChannel) nextGeneration() int64 {
	d.lastGen = max(time.Now().UnixMicro(), d.lastGen+1)
	return d.lastGen
}

// push sends backends unless they equal the last push, writing the state
// file first. It reports whether it pushed; force pushes an unchanged
// state too (after nginx restarted).
func (d *dynamicChannel) push(ctx context.Context, backends []balancer.Backend, force bool) (bool, error) {
	// The hash covers the content only; the generation changes each push.
	content, err := balancer.EncodeState(balancer.State{Backends: backends})
	if err != nil {
		return false, err
	}
	hash := sha256.Sum256(content)
	if hash == d.lastHash && !force {
		return false, nil
	}
	gen := d.nextGeneration()
	body, err := balancer.EncodeState(balancer.State{Generation: gen, Backends: backends})
	if err != nil {
		return false, err
	}
	if err := writeStateFile(d.stateFile, body); err != nil {
		return false, err
	}
	if err := d.pusher.ReplaceEncoded(ctx, gen, body); err != nil {
		return false, err
	}
	d.lastHash, d.lastPrepared, d.last = hash, hash, backends
	return true, nil
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
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("state file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("state file: %w", err)
	}
	return os.Rename(tmp.Name(), path)
}
