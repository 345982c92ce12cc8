package leases

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestValid: a Lease counts while its last renewal (or, never renewed, its
// acquisition) is younger than its duration, as in apiserver-network-proxy;
// one that expired more than a duration ago is stale and collected.
func TestValid(t *testing.T) {
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.MicroTime { m := metav1.NewMicroTime(now.Add(d)); return &m }
	secs := func(n int32) *int32 { return &n }
	for _, tc := range []struct {
		name         string
		spec         coordinationv1.LeaseSpec
		valid, stale bool
	}{
		{"renewed just now", coordinationv1.LeaseSpec{RenewTime: at(0), LeaseDurationSeconds: secs(30)}, true, false},
		{"renewed 29 s ago", coordinationv1.LeaseSpec{RenewTime: at(-29 * time.Second), LeaseDurationSeconds: secs(30)}, true, false},
		{"renewed exactly a duration ago", coordinationv1.LeaseSpec{RenewTime: at(-30 * time.Second), LeaseDurationSeconds: secs(30)}, false, false},
		{"expired, not yet stale", coordinationv1.LeaseSpec{RenewTime: at(-59 * time.Second), LeaseDurationSeconds: secs(30)}, false, false},
		{"expired a duration ago: stale", coordinationv1.LeaseSpec{RenewTime: at(-61 * time.Second), LeaseDurationSeconds: secs(30)}, false, true},
		{"renew time wins over acquire time", coordinationv1.LeaseSpec{AcquireTime: at(0), RenewTime: at(-time.Minute), LeaseDurationSeconds: secs(30)}, false, false},
		{"never renewed, acquired just now", coordinationv1.LeaseSpec{AcquireTime: at(0), LeaseDurationSeconds: secs(30)}, true, false},
		{"renewed in the future (clock skew)", coordinationv1.LeaseSpec{RenewTime: at(5 * time.Second), LeaseDurationSeconds: secs(30)}, true, false},
		{"no duration", coordinationv1.LeaseSpec{RenewTime: at(0)}, false, true},
		{"no time", coordinationv1.LeaseSpec{LeaseDurationSeconds: secs(30)}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &coordinationv1.Lease{Spec: tc.spec}
			if got := Valid(l, now); got != tc.valid {
				t.Errorf("Valid = %v, want %v", got, tc.valid)
			}
			if got := stale(l, now); got != tc.stale {
				t.Errorf("stale = %v, want %v", got, tc.stale)
			}
		})
	}
}

func TestCount(t *testing.T) {
	now := time.Now()
	secs := int32(10)
	mk := func(age time.Duration) coordinationv1.Lease {
		m := metav1.NewMicroTime(now.Add(-age))
		return coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{RenewTime: &m, LeaseDurationSeconds: &secs}}
	}
	ls := []coordinationv1.Lease{mk(0), mk(time.Second), mk(11 * time.Second), mk(time.Hour)}
	if got := Count(ls, now); got != 2 {
		t.Fatalf("Count = %d, want 2", got)
	}
	if got := Count(nil, now); got != 0 {
		t.Fatalf("Count(nil) = %d, want 0", got)
	}
}
