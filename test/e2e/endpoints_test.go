package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/causeway/causeway/internal/balancer"
)

// An EndpointSlice change reaches nginx without a build (issue 35 §1): a
// patch of its Service's backend alone, no sync and no reload. Whatever
// the patch cannot be sure of goes to a full sync: a state someone else
// pushed is still replaced by the controller's, and the state file that a
// restarted nginx loads follows the patches.
//
// It runs alone: it counts the controller's full syncs, and the
// cluster-scoped objects other tests create (IngressClasses) start one in
// every controller watching the cluster, its own namespace or not.
func TestEndpointChangesWithoutBuild(t *testing.T) {
	ns := newNamespace(t)
	a, b, c3 := startBackend(t, "a"), startBackend(t, "b"), startBackend(t, "c")
	createService(t, ns, "svc", a)
	createService(t, ns, "other", c3)
	ctl := startController(t, controllerConfig{Namespace: ns})
	const host = "endpoints.e2e.test"
	createIngress(t, newIngress(ns, "web", host, "svc"))
	createIngress(t, newIngress(ns, "other", "other."+host, "other"))
	ctl.waitServed(host, "a")
	ctl.waitServed("other."+host, "c")

	point := func(to *backend) {
		t.Helper()
		slices := e2e.admin.DiscoveryV1().EndpointSlices(ns)
		es, err := slices.Get(t.Context(), "svc-1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		es.Endpoints[0].Addresses = []string{to.IP}
		es.Ports[0].Port = ptr.To(int32(to.Port))
		if _, err := slices.Update(t.Context(), es, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	type counts struct{ syncs, patches, refused, reloads float64 }
	read := func() counts {
		return counts{ctl.Metric("causeway_config_apply_seconds_count"), ctl.Metric("causeway_endpoint_update_seconds_count"),
			ctl.Metric(`causeway_dynamic_updates_total{kind="endpoints",result="failure"}`), ctl.Metric("causeway_nginx_reloads_total")}
	}
	settled := func() counts { return settledRead(read) }
	// Settle: the status writes and the first syncs are behind us.
	time.Sleep(time.Second)

	before := settled()
	point(b)
	ctl.waitServed(host, "b")
	after := read()
	if after.patches <= before.patches || after.syncs != before.syncs || after.reloads != before.reloads {
		t.Fatalf("an endpoint change took %v syncs, %v patches and %v reloads; want a patch and neither a sync nor a reload",
			after.syncs-before.syncs, after.patches-before.patches, after.reloads-before.reloads)
	}
	ctl.waitServed("other."+host, "c") // the other backend is untouched

	// The state file follows within stateFileFlushDelay (a second).
	file := filepath.Join(ctl.StateDir, "run", "dynamic-state.json")
	eventually(t, 10*time.Second, func() error {
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		var st balancer.State
		if err := json.Unmarshal(data, &st); err != nil {
			return err
		}
		for _, be := range st.Backends {
			if be.Key == ns+"/svc/80" {
				if len(be.Endpoints) == 1 && be.Endpoints[0].Port == b.Port {
					return nil
				}
				return fmt.Errorf("state file has %s on %+v, want port %d", be.Key, be.Endpoints, b.Port)
			}
		}
		return fmt.Errorf("state file has no backend %s/svc/80", ns)
	})

	// A state pushed by someone else, with a generation below the
	// controller's (so that only the patch's base, not the order of
	// generations, tells it apart): the next patch is refused, and the
	// full sync that follows replaces that state.
	client := balancer.NewClient(filepath.Join(ctl.StateDir, "run", "dynamic.sock"))
	defer client.Close()
	foreign := balancer.State{Generation: 1, Backends: []balancer.Backend{{Key: ns + "/svc/80",
		Endpoints: []balancer.Endpoint{{Address: a.IP, Port: a.Port, Weight: 1, Ready: true}}}}}
	if err := client.Replace(t.Context(), foreign); err != nil {
		t.Fatal(err)
	}
	ctl.waitServed(host, "a")
	if err := ctl.served("other."+host, "c"); err == nil {
		t.Fatal("the foreign state (without the other backend) is not in force")
	}
	before = settled()
	point(c3)
	ctl.waitServed(host, "c")
	ctl.waitServed("other."+host, "c")
	after = read()
	if after.refused <= before.refused || after.syncs <= before.syncs || after.reloads != before.reloads {
		t.Fatalf("over a foreign state: %v refused patches, %v syncs, %v reloads; want a refused patch, a full sync and no reload",
			after.refused-before.refused, after.syncs-before.syncs, after.reloads-before.reloads)
	}
	if gen, err := client.Generation(t.Context()); err != nil || gen == 1 {
		t.Fatalf("generation %d, %v: the foreign state was not replaced", gen, err)
	}

	// Patches again once the state is the controller's.
	before = settled()
	point(b)
	ctl.waitServed(host, "b")
	if after = read(); after.patches <= before.patches || after.syncs != before.syncs {
		t.Fatalf("after the full sync: %v patches, %v syncs; want a patch again", after.patches-before.patches, after.syncs-before.syncs)
	}

	// nginx killed: the new one gets the full state (a patch's base would
	// be gone), serves the last patch's endpoint, and patches resume.
	pidFile := filepath.Join(ctl.StateDir, "run", "nginx.pid")
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	old, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || old <= 1 {
		t.Fatalf("nginx pid %q", data)
	}
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, waitFor, func() error {
		data, _ := os.ReadFile(pidFile)
		if pid, _ := strconv.Atoi(strings.TrimSpace(string(data))); pid == old || pid == 0 {
			return fmt.Errorf("no new nginx master yet")
		}
		if gen, err := client.Generation(t.Context()); err != nil || gen == 0 {
			return fmt.Errorf("the new nginx has generation %d (%v): no state pushed", gen, err)
		}
		if err := ctl.served(host, "b"); err != nil {
			return err
		}
		return ctl.served("other."+host, "c")
	})
	// The restart's full sync served before it was counted.
	before = settled()
	point(a)
	ctl.waitServed(host, "a")
	if after = read(); after.patches <= before.patches || after.syncs != before.syncs {
		t.Fatalf("after nginx restarted: %v patches, %v syncs; want a patch", after.patches-before.patches, after.syncs-before.syncs)
	}
}

// settledRead reads counts with read once a sync that already served its
// change has been counted too: two reads 300 ms apart agree (or 5 s have
// passed).
func settledRead[T comparable](read func() T) T {
	last := read()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		time.Sleep(300 * time.Millisecond)
		now := read()
		if now == last {
			break
		}
		last = now
	}
	return last
}
