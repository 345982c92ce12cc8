// Package node is tier 5: Causeway inside a real single-node Kubernetes
// cluster built on this machine (test/cluster), installed with helm and
// used through kubectl as a user would. The tests run in order, sharing
// the cluster and, where they can, one installed release:
//
//	TestEdgeTunnel           a release of its own with tunnel.enabled: an
//	                         Ingress serves a Pod behind an edge node's NAT
//	                         through an agent; removes what it made
//	TestGatewayConformanceBackends
//	                         the Gateway API conformance suite's CRDs and
//	                         backends (its base manifests, our images of
//	                         echo-basic and CoreDNS) Ready and answering;
//	                         needs no Causeway, removes what it made
//	TestInstall              the chart as documented: probes, IngressClass,
//	                         webhook, metrics, status
//	TestBackends             real Pods behind a Service, through NodePort,
//	                         ClusterIP and the LoadBalancer address
//	TestChurnUnderLoad       scaling and rollouts of the backend under load:
//	                         no failed request, no reload
//	TestUpgradeUnderLoad     a rollout and a helm upgrade of Causeway itself
//	                         under load, and the leader Lease moving
//	TestSecurityContext      the shipped security context, nginx killed,
//	                         the Pod deleted
//	TestDaemonSetHostNetwork controller.kind DaemonSet on the host network,
//	                         ports 80 and 443
//	TestUninstall            nothing left but what the docs say
//
// Each can also run alone against make cluster-up's cluster:
//
//	go test ./test/node -run TestBackends -v
//
// The cluster needs root; without it or the binaries the tests skip, or
// fail under CAUSEWAY_REQUIRE_CLUSTER=1 (make test-cluster).
package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/causeway/causeway/test/cluster"
	"github.com/causeway/causeway/test/testenv"
)

var (
	setup struct {
		once    sync.Once
		cluster *cluster.Cluster
		owned   bool
		upTook  time.Duration
		err     error
	}
	// release is the installed Causeway, shared by the tests that do not
	// install their own; nil until ensureInstalled.
	release *cluster.Causeway
)

func TestMain(m *testing.M) {
	code := m.Run()
	if setup.owned {
		start := time.Now()
		if err := setup.cluster.Down(); err != nil {
			fmt.Fprintf(os.Stderr, "cluster down: %v\n", err)
			code = 1
		} else {
			reportLine("cluster", fmt.Sprintf("up in %s, down in %s with nothing left on the host",
				setup.upTook.Round(100*time.Millisecond), time.Since(start).Round(100*time.Millisecond)))
		}
	}
	os.Exit(code)
}

// node returns the cluster: make cluster-up's if one runs, else one
// started for this test binary (stopped in TestMain).
func node(t *testing.T) *cluster.Cluster {
	t.Helper()
	setup.once.Do(func() {
		if cluster.Running("") {
			setup.cluster, setup.err = cluster.Attach("")
			return
		}
		root, err := testenv.RepoRoot()
		if err != nil {
			setup.err = err
			return
		}
		start := time.Now()
		images := []string{filepath.Join(root, "bin", "echo-image.tar"), filepath.Join(root, "bin", "causeway-image.tar")}
		for _, img := range images {
			if _, err := os.Stat(img); err != nil {
				setup.err = fmt.Errorf("%w: %s: run make cluster-images image", cluster.ErrMissing, img)
				return
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		setup.cluster, setup.err = cluster.Up(ctx, cluster.Options{Images: images,
			Logf: func(f string, a ...any) { fmt.Printf("cluster: "+f+"\n", a...) }})
		setup.owned = setup.err == nil
		setup.upTook = time.Since(start)
	})
	if setup.err != nil {
		if errors.Is(setup.err, cluster.ErrMissing) && os.Getenv("CAUSEWAY_REQUIRE_CLUSTER") != "1" {
			t.Skipf("no test cluster (set CAUSEWAY_REQUIRE_CLUSTER=1 to fail instead): %v", setup.err)
		}
		t.Fatalf("test cluster: %v", setup.err)
	}
	return setup.cluster
}

// ensureInstalled returns the shared release, installing the chart with
// only the image values changed if it is not installed yet.
func ensureInstalled(t *testing.T) *cluster.Causeway {
	t.Helper()
	c := node(t)
	if release != nil {
		return release
	}
	ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute)
	defer cancel()
	start := time.Now()
	cw, err := c.InstallCauseway(ctx, cluster.InstallOptions{})
	if err != nil {
		t.Fatalf("helm install: %v\n%s", err, logsOnFailure(c))
	}
	t.Logf("helm install --wait took %s", time.Since(start).Round(100*time.Millisecond))
	release = cw
	return cw
}

// logsOnFailure is the end of the node components' logs, for a failed
// install.
func logsOnFailure(c *cluster.Cluster) string {
	var b strings.Builder
	for _, name := range []string{"kubelet", "containerd"} {
		data, err := os.ReadFile(filepath.Join(c.Dir, "logs", name+".log"))
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		if len(lines) > 25 {
			lines = lines[len(lines)-25:]
		}
		fmt.Fprintf(&b, "--- %s\n%s\n", name, strings.Join(lines, "\n"))
	}
	return b.String()
}

// imageArchive is make image's archive, which the cluster imported.
func imageArchive(t *testing.T) string {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "bin", "causeway-image.tar")
}

// removeNamespaces deletes the namespaces, all at once, and waits up to
// two minutes for them to be gone, as a user would with kubectl.
func removeNamespaces(c *cluster.Cluster, names ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, ns := range names {
		c.Kubectl(ctx, "delete", "namespace", ns, "--ignore-not-found", "--wait=false")
	}
	for _, ns := range names {
		c.Kubectl(ctx, "wait", "--for=delete", "namespace/"+ns, "--timeout=2m")
	}
}
