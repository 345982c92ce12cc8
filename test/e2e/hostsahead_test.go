package e2e

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A new Ingress of an existing shape goes live from a build of that
// Ingress alone, before the full sync, with no reload; the full sync
// after it finds the same hosts table and pushes nothing; deleted, its
// host answers 404 the same way (issue 35 §3).
//
// It runs alone: the fast path leaves a change to the full sync when
// anything but Ingresses changed with it, and the cluster-scoped objects
// other tests create (IngressClasses) reach every controller.
func TestHostsAheadOfTheFullSync(t *testing.T) {
	ns := newNamespace(t)
	a, b := startBackend(t, "a"), startBackend(t, "b")
	createService(t, ns, "a", a)
	createService(t, ns, "b", b)
	ctl := startController(t, controllerConfig{Namespace: ns})
	// Two hosts of one shape: a shared server with a hop server.
	createIngress(t, newIngress(ns, "one", "one.ahead.e2e.test", "a"))
	createIngress(t, newIngress(ns, "two", "two.ahead.e2e.test", "b"))
	ctl.waitServed("one.ahead.e2e.test", "a")
	ctl.waitServed("two.ahead.e2e.test", "b")

	type counts struct{ ahead, tables, reloads float64 }
	read := func() counts {
		return counts{ctl.Metric(`causeway_dynamic_updates_total{kind="hosts_ahead",result="success"}`),
			ctl.Metric(`causeway_dynamic_updates_total{kind="hosts",result="success"}`), ctl.Metric("causeway_nginx_reloads_total")}
	}
	settled := func() counts { return settledRead(read) }
	time.Sleep(time.Second) // the status writes and the first syncs
	before := settled()
	const host = "three.ahead.e2e.test"
	createIngress(t, newIngress(ns, "three", host, "b"))
	ctl.waitServed(host, "b")
	after := settled()
	if after.ahead != before.ahead+1 || after.tables != before.tables || after.reloads != before.reloads {
		t.Fatalf("a host added: %v pushed ahead, %v tables pushed by the full sync, %v reloads; want 1, 0, 0",
			after.ahead-before.ahead, after.tables-before.tables, after.reloads-before.reloads)
	}
	ctl.waitServed("two.ahead.e2e.test", "b")

	before = after
	if err := e2e.admin.NetworkingV1().Ingresses(ns).Delete(t.Context(), "three", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ctl.waitServed(host, "")
	after = settled()
	if after.ahead != before.ahead+1 || after.tables != before.tables || after.reloads != before.reloads {
		t.Fatalf("the host removed: %v pushed ahead, %v tables pushed by the full sync, %v reloads; want 1, 0, 0",
			after.ahead-before.ahead, after.tables-before.tables, after.reloads-before.reloads)
	}
	ctl.waitServed("one.ahead.e2e.test", "a")
}
