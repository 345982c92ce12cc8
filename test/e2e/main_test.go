// Package e2e runs the real `causeway controller` binary against a real
// kube-apiserver and etcd (test/testenv), real nginx, and echo backends in
// a network namespace (the API refuses loopback endpoints). The controller
// authenticates as the ServiceAccount of deploy/, bound to exactly the
// RBAC rules in deploy/, so a missing permission fails these tests.
//
// One control plane serves the whole package; every test gets namespaces
// of its own, and controllers that watch only those. Tests run in
// parallel, except the API outage, which runs alone.
package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/causeway/causeway/test/e2e/netns"
	"github.com/causeway/causeway/test/testenv"
)

// suite is what TestMain sets up once for every test.
type suite struct {
	env *testenv.Env
	// admin is a system:masters client for setting up and inspecting.
	admin kubernetes.Interface
	// binary is the causeway binary under test, built with -race.
	binary string
	// kubeconfig authenticates as deploy/'s ServiceAccount.
	kubeconfig string
	// backends is where echo backends listen.
	backends *netns.Netns
	// deploy holds the objects of deploy/, decoded.
	deploy []runtime.Object
	// repoRoot is the repository's top directory.
	repoRoot string
}

// The suite is package state because TestMain cannot pass it to tests.
var e2e suite

// Names from deploy/ the tests rely on.
const (
	systemNamespace = "causeway-system"
	serviceAccount  = "causeway"
	ingressClass    = "causeway"
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	required := os.Getenv(testenv.EnvRequire) == "1"
	// unavailable skips the tier, or fails it when the environment must be
	// there, so that a missing install step can never pass silently.
	unavailable := func(why error) int {
		if required {
			fmt.Fprintf(os.Stderr, "FAIL: end-to-end environment unavailable and %s=1: %v\n", testenv.EnvRequire, why)
			return 1
		}
		fmt.Fprintf(os.Stderr, "skipping end-to-end tests (set %s=1 to fail instead): %v\n", testenv.EnvRequire, why)
		return 0
	}
	if _, err := exec.LookPath("nginx"); err != nil {
		return unavailable(errors.New("nginx is not installed; run hack/install-deps.sh"))
	}
	if err := netns.Available(); err != nil {
		return unavailable(err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	e2e.repoRoot = root

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	env, err := testenv.Start(ctx, testenv.Options{})
	if errors.Is(err, testenv.ErrBinaryNotFound) {
		return unavailable(err)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "start test environment:", err)
		return 1
	}
	e2e.env = env
	defer env.Stop()

	if e2e.backends, err = netns.New(); err != nil {
		return unavailable(err)
	}
	defer e2e.backends.Close()

	dir, err := os.MkdirTemp("", "causeway-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	e2e.binary = filepath.Join(dir, "causeway")
	build := exec.Command("go", "build", "-race", "-o", e2e.binary, "github.com/causeway/causeway/cmd/causeway")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build causeway:", err)
		return 1
	}

	setUpCtx, cancelSetUp := context.WithTimeout(context.Background(), time.Minute)
	defer cancelSetUp()
	if err := setUp(setUpCtx); err != nil {
		fmt.Fprintln(os.Stderr, "set up:", err)
		fmt.Fprint(os.Stderr, env.LogTails(40))
		return 1
	}
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "test environment logs:\n%s", env.LogTails(40))
	}
	return code
}

// setUp applies deploy/'s namespace, RBAC, ConfigMap and IngressClass as
// they are, and mints a kubeconfig for its ServiceAccount.
func setUp(ctx context.Context) error {
	var err error
	if e2e.admin, err = kubernetes.NewForConfig(e2e.env.RESTConfig()); err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	if e2e.deploy, err = loadDeploy(filepath.Join(e2e.repoRoot, "deploy")); err != nil {
		return err
	}
	if err := applyDeploy(ctx, e2e.admin, e2e.deploy); err != nil {
		return err
	}
	if e2e.kubeconfig, err = e2e.env.ServiceAccountKubeconfig(ctx, systemNamespace, serviceAccount); err != nil {
		return err
	}
	return nil
}
