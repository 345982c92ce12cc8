// Package leases counts tunnel server replicas the way
// apiserver-network-proxy does: every replica holds a coordination.k8s.io
// Lease carrying a shared label and renews it, and the server count is the
// number of Leases with that label that have not expired. Replicas thus
// learn the count from the API instead of a flag that must track the
// Deployment's scale, and a crashed replica drops out once its Lease
// expires.
package leases

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	coordclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
)

// Config configures Run.
type Config struct {
	// Client reads and writes Leases (RBAC in Namespace: get, list,
	// create, update, delete on leases).
	Client    coordclient.LeasesGetter
	Namespace string
	// Name is this replica's Lease; Holder (the server ID) goes into
	// spec.holderIdentity.
	Name, Holder string
	// Labels are put on this replica's Lease, and select the Leases that
	// count. They must not be empty.
	Labels map[string]string
	// Duration is how long a Lease is valid after its last renewal;
	// RenewInterval is how often this replica renews and recounts. The
	// defaults are 30 s and a third of Duration.
	Duration, RenewInterval time.Duration
	// OnCount is called with the first count and with every change. The
	// count is at least 1: this replica runs even when its own renewal
	// failed.
	OnCount func(n int)
	Logger  *slog.Logger
}

// Run renews this replica's Lease and reports the count until ctx ends,
// then deletes the Lease so that the other replicas count down at once
// instead of after Duration.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Client == nil || cfg.Namespace == "" || cfg.Name == "" || len(cfg.Labels) == 0 || cfg.OnCount == nil {
		return errors.New("leases: client, namespace, name, labels and OnCount are required")
	}
	if cfg.Duration <= 0 {
		cfg.Duration = 30 * time.Second
	}
	if cfg.RenewInterval <= 0 || cfg.RenewInterval >= cfg.Duration {
		cfg.RenewInterval = cfg.Duration / 3
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	r := &renewer{cfg: cfg, api: cfg.Client.Leases(cfg.Namespace),
		log: cfg.Logger.With("lease", cfg.Namespace+"/"+cfg.Name)}
	defer r.release()
	tick := time.NewTicker(cfg.RenewInterval)
	defer tick.Stop()
	last := 0
	for {
		if err := r.renew(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("renew server lease", "err", err)
		}
		n, err := r.count(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			r.log.Warn("count server leases; keeping the last count", "count", last, "err", err)
		case err == nil && n != last:
			r.log.Info("server count from leases", "from", last, "to", n)
			last = n
			cfg.OnCount(n)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

type renewer struct {
	cfg Config
	api coordclient.LeaseInterface
	log *slog.Logger
}

// renew creates this replica's Lease or moves its renewTime forward.
func (r *renewer) renew(ctx context.Context) error {
	now := metav1.NewMicroTime(time.Now())
	secs := int32(r.cfg.Duration / time.Second)
	if secs < 1 {
		secs = 1
	}
	l, err := r.api.Get(ctx, r.cfg.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		l = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: r.cfg.Name, Namespace: r.cfg.Namespace, Labels: r.cfg.Labels},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &r.cfg.Holder, LeaseDurationSeconds: &secs,
				AcquireTime: &now, RenewTime: &now},
		}
		if _, err := r.api.Create(ctx, l, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create lease: %w", err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("get lease: %w", err)
	}
	if l.Labels == nil {
		l.Labels = map[string]string{}
	}
	for k, v := range r.cfg.Labels {
		l.Labels[k] = v
	}
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != r.cfg.Holder {
		l.Spec.AcquireTime = &now
	}
	l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.RenewTime = &r.cfg.Holder, &secs, &now
	if _, err := r.api.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update lease: %w", err)
	}
	return nil
}

// count lists the labelled Leases and counts the valid ones.
func (r *renewer) count(ctx context.Context) (int, error) {
	sel := labels.SelectorFromSet(r.cfg.Labels).String()
	list, err := r.api.List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return 0, fmt.Errorf("list leases %q: %w", sel, err)
	}
	now := time.Now()
	for i := range list.Items {
		if l := &list.Items[i]; stale(l, now) {
			r.collect(ctx, l)
		}
	}
	return max(1, Count(list.Items, now)), nil
}

// collect deletes a Lease left behind by a replica that crashed, so they
// do not pile up across rollouts. The preconditions make it a no-op if the
// Lease was renewed since it was listed.
func (r *renewer) collect(ctx context.Context, l *coordinationv1.Lease) {
	pre := metav1.Preconditions{UID: &l.UID, ResourceVersion: &l.ResourceVersion}
	err := r.api.Delete(ctx, l.Name, metav1.DeleteOptions{Preconditions: &pre})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		r.log.Warn("delete stale server lease", "stale", l.Name, "err", err)
		return
	}
	r.log.Info("deleted stale server lease", "stale", l.Name)
}

// release deletes this replica's Lease, if it still holds it, when Run
// ends.
func (r *renewer) release() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	l, err := r.api.Get(ctx, r.cfg.Name, metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != r.cfg.Holder {
		return
	}
	pre := metav1.Preconditions{UID: &l.UID, ResourceVersion: &l.ResourceVersion}
	if err := r.api.Delete(ctx, r.cfg.Name, metav1.DeleteOptions{Preconditions: &pre}); err != nil && !apierrors.IsNotFound(err) {
		r.log.Warn("delete server lease", "err", err)
	}
}

// Count is the number of leases valid at now: renewed (or, never renewed,
// acquired) less than leaseDurationSeconds ago. A Lease without a duration
// or a time never counts.
func Count(leases []coordinationv1.Lease, now time.Time) int {
	n := 0
	for _, l := range leases {
		if Valid(&l, now) {
			n++
		}
	}
	return n
}

// Valid reports whether l is unexpired at now.
func Valid(l *coordinationv1.Lease, now time.Time) bool {
	exp, ok := expiry(l)
	return ok && now.Before(exp)
}

// stale reports whether l expired more than one lease duration before now
// (or can never be valid): long enough that no live replica owns it, even
// with some clock skew.
func stale(l *coordinationv1.Lease, now time.Time) bool {
	exp, ok := expiry(l)
	if !ok {
		return true
	}
	return now.After(exp.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second))
}

// expiry is when l stops being valid; ok is false for a Lease without a
// duration or a time.
func expiry(l *coordinationv1.Lease) (time.Time, bool) {
	t := l.Spec.RenewTime
	if t == nil {
		t = l.Spec.AcquireTime
	}
	if t == nil || l.Spec.LeaseDurationSeconds == nil {
		return time.Time{}, false
	}
	return t.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second), true
}
