package loopback

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/causeway/causeway/internal/tunnel/leases"
	"github.com/causeway/causeway/internal/tunnel/tunneltest"
	"github.com/causeway/causeway/test/testenv"
)

// TestServerCountFromLeases: a replica counts the unexpired Leases with its
// label, with only the documented RBAC, and tells its agents. A second
// replica raises the count (the agent then wants two links and is not
// ready with one); its exit releases its Lease and lowers the count at
// once; a replica that died without releasing drops out when its Lease
// expires; a long-dead replica's Lease is collected; another tunnel's
// Leases never count.
func TestServerCountFromLeases(t *testing.T) {
	env := testenv.StartForTest(t, testenv.Options{})
	ctx := t.Context()
	admin, err := kubernetes.NewForConfig(env.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	k := &kube{env: env, admin: admin}
	api := k.serviceAccountClient(t, serverSA).CoordinationV1()
	if err := tunneltest.GrantRole(ctx, admin, "causeway-tunnel-leases", tunneltest.LeaseRules, tunnelNS, serverSA); err != nil {
		t.Fatal(err)
	}
	label := map[string]string{"causeway.io/tunnel-server": "test"}
	lease := func(name string, labels map[string]string, renewed time.Time) {
		t.Helper()
		rt, secs, holder := metav1.NewMicroTime(renewed), int32(2), name
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, RenewTime: &rt, LeaseDurationSeconds: &secs}}
		if _, err := admin.CoordinationV1().Leases(tunnelNS).Create(ctx, l, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	lease("causeway-tunnel-long-dead", label, time.Now().Add(-time.Hour))
	lease("other-tunnel-1", map[string]string{"causeway.io/tunnel-server": "other"}, time.Now().Add(time.Hour))

	p := newPKI(t)
	s1 := startServer(t, p, serverOpts{id: "s1", count: 1})
	a := startAgent(t, p, agentOpts{node: "edge", server: s1.agentAddr, defaultRoute: true})
	var count atomic.Int64
	run := func(id string, onCount func(int)) (stop func()) {
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			err := leases.Run(rctx, leases.Config{Client: api, Namespace: tunnelNS, Name: "causeway-tunnel-" + id,
				Holder: id, Labels: label, Duration: 2 * time.Second, RenewInterval: 200 * time.Millisecond,
				OnCount: onCount, Logger: logger(t)})
			if err != nil {
				t.Error(err)
			}
		}()
		stop = func() { cancel(); <-done }
		t.Cleanup(stop)
		return stop
	}
	run("s1", func(n int) { s1.SetServerCount(n); count.Store(int64(n)) })
	hasCount := func(n int64) func() bool { return func() bool { return count.Load() == n } }

	eventually(t, 5*time.Second, "count 1: s1 alone", hasCount(1))
	eventually(t, 5*time.Second, "agent ready with its one link", a.Ready)
	stopS2 := run("s2", func(int) {})
	eventually(t, 5*time.Second, "count 2 with s2", hasCount(2))
	eventually(t, 5*time.Second, "agent not ready: it wants a second link", func() bool { return !a.Ready() })
	_, err = admin.CoordinationV1().Leases(tunnelNS).Get(ctx, "causeway-tunnel-long-dead", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("long-dead replica's Lease not collected: %v", err)
	}

	stopS2()
	took := eventually(t, 2*time.Second, "count 1 after s2 released its Lease", hasCount(1))
	t.Logf("count down %s after a replica's exit (its Lease lasts 2 s)", took)
	eventually(t, 5*time.Second, "agent ready again", a.Ready)

	lease("causeway-tunnel-crashed", label, time.Now())
	eventually(t, 2*time.Second, "count 2 with a replica that is about to die", hasCount(2))
	took = eventually(t, 5*time.Second, "count 1 once the dead replica's Lease expired", hasCount(1))
	t.Logf("count down %s after the last renewal of a replica that died", took)
	if _, err := admin.CoordinationV1().Leases(tunnelNS).Get(ctx, "other-tunnel-1", metav1.GetOptions{}); err != nil {
		t.Errorf("another tunnel's Lease was touched: %v", err)
	}
}
