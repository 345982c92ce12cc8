// Package cluster runs a real single-node Kubernetes cluster on this
// machine for the tests of tier 5: the pinned kube-apiserver,
// kube-controller-manager, kube-scheduler, kubelet and kube-proxy
// (iptables mode), Debian's etcd, containerd, runc and CNI plugins, and
// only images built here (no registry is reachable, none is ever pulled).
//
// The node has an address of its own on a dummy interface (NodeIP), a
// bridge for its Pods (PodCIDR) and Services in ServiceCIDR; a small
// LoadBalancer implementation (lb.go) gives LoadBalancer Services an
// address on the node, as cloud-provider-kind or MetalLB do elsewhere.
// Nothing the cluster does sends traffic off the machine.
//
// Up starts a cluster in the calling process (a test binary, or
// hack/cluster's supervisor for make cluster-up); its components die with
// that process. Down stops it and removes everything it made on the
// host; Leftovers says what remains. Attach finds a cluster another
// process runs, for running one test by hand against make cluster-up's.
// See docs/testenv.md.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/causeway/causeway/test/testenv"
)

// Options configure Up.
type Options struct {
	// Dir holds the cluster's files; empty means $CAUSEWAY_CLUSTER_DIR,
	// else DefaultDir. Up removes whatever a previous cluster left there.
	Dir string
	// Images are OCI or docker archives imported before Up returns, in
	// addition to the pause image (PauseArchive).
	Images []string
	// PauseArchive is the sandbox image's archive (make cluster-images);
	// empty means bin/pause-image.tar in the repository.
	PauseArchive string
	// Logf, if set, reports progress.
	Logf func(format string, args ...any)
}

// Cluster is a running cluster.
type Cluster struct {
	// Dir holds its files, logs in Dir/logs.
	Dir string
	// AdminKubeconfig authenticates as a cluster admin (system:masters).
	AdminKubeconfig string
	// NodeIP is the node's address.
	NodeIP string

	paths   paths
	bins    binaries
	env     *testenv.Env
	procs   []*testenv.Process
	lock    *os.File
	state   state
	stopLB  context.CancelFunc
	owned   bool // started by this process: Down stops it
	started time.Time
}

// Dir returns the directory a cluster uses: opts, else
// $CAUSEWAY_CLUSTER_DIR, else DefaultDir.
func dirOf(d string) string {
	if d != "" {
		return d
	}
	if d := os.Getenv("CAUSEWAY_CLUSTER_DIR"); d != "" {
		return d
	}
	return DefaultDir
}

// lockPath is the file a running cluster holds locked: there is one node
// per machine (its addresses and names are fixed).
const lockPath = "/run/causeway-cluster.lock"

// Up starts a cluster and returns once its node is Ready and the images
// are imported. On error everything started is stopped and removed again.
func Up(ctx context.Context, opts Options) (*Cluster, error) {
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: the cluster needs root", ErrMissing)
	}
	bins, err := findBinaries()
	if err != nil {
		return nil, err
	}
	dir := dirOf(opts.Dir)
	c := &Cluster{Dir: dir, NodeIP: NodeIP, paths: paths{dir}, bins: bins, owned: true, started: time.Now()}
	if c.lock, err = lockCluster(); err != nil {
		return nil, err
	}
	// Whatever a crashed run left behind goes first.
	if err := sweep(dir, bins.kubeProxy); err != nil {
		logf("cleaning up a previous cluster: %v", err)
	}
	if err := os.RemoveAll(dir); err != nil {
		c.unlock()
		return nil, err
	}
	if left := Leftovers(dir); len(left) > 0 {
		c.unlock()
		return nil, fmt.Errorf("a previous cluster left these behind and they could not be removed: %v", left)
	}
	if err := c.up(ctx, opts, logf); err != nil {
		return nil, errors.Join(err, c.Down())
	}
	return c, nil
}

func (c *Cluster) up(ctx context.Context, opts Options, logf func(string, ...any)) error {
	for _, d := range []string{c.paths.logs(), filepath.Dir(c.paths.kubeconfig("x")), c.paths.podLogs(), c.paths.kubelet()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	c.state = state{PID: os.Getpid(), StartedAt: c.started, NetnsBefore: listDir(netnsDir), ShimSocketsBefore: listDir(shimSocketDir)}
	if err := writeState(c.paths, c.state); err != nil {
		return err
	}
	old, err := setUpHost()
	c.state.Sysctls = old
	if werr := writeState(c.paths, c.state); err == nil {
		err = werr
	}
	if err != nil {
		return fmt.Errorf("set up the host: %w", err)
	}
	k, err := writePKI(c.paths.pki())
	if err != nil {
		return fmt.Errorf("certificates: %w", err)
	}

	logf("starting etcd and kube-apiserver on %s:%d", NodeIP, APIServerPort)
	users := []testenv.User{kubeletUser, kubeProxyUser, controllerManagerUser, schedulerUser}
	c.env, err = testenv.Start(ctx, testenv.Options{
		Dir:     filepath.Join(c.Dir, "control-plane"),
		Address: NodeIP,
		Port:    APIServerPort,
		Users:   users,
		ExtraAPIServerArgs: []string{
			"--service-cluster-ip-range=" + ServiceCIDR,
			"--allow-privileged=true",
			"--kubelet-client-certificate=" + k.clientCert,
			"--kubelet-client-key=" + k.clientKey,
			"--kubelet-certificate-authority=" + k.caCert,
			"--kubelet-preferred-address-types=InternalIP",
		},
	})
	if err != nil {
		return fmt.Errorf("control plane: %w", err)
	}
	c.AdminKubeconfig = c.paths.kubeconfig("admin")
	if err := copyFile(c.env.AdminKubeconfig, c.AdminKubeconfig); err != nil {
		return err
	}
	kubeconfigs := map[string]string{}
	for _, u := range users {
		if kubeconfigs[u.Name], err = c.env.UserKubeconfig(c.paths.kubeconfig(filepath.Base(u.Name)), u.Name); err != nil {
			return err
		}
	}
	rootCA := filepath.Join(c.paths.pki(), "apiserver-ca.crt")
	if err := os.WriteFile(rootCA, c.env.CAData(), 0o644); err != nil {
		return err
	}

	cfg := config{
		Dir: c.Dir, Socket: c.paths.containerdSocket(), RuncRoot: c.paths.runcRoot(),
		CNIConf: c.paths.cniConf(), CNIIPAM: c.paths.cniIPAM(), PodLogs: c.paths.podLogs(),
		KubeletRoot: c.paths.kubelet(), NodeIP: NodeIP, NodeName: NodeName, PodCIDR: PodCIDR,
		PodGateway: PodGateway, PodBridge: PodBridge, NetworkName: NetworkName,
		PauseImage: PauseImage, CgroupRoot: CgroupRoot, ClientCA: k.caCert,
		ServingCert: k.servingCert, ServingKey: k.servingKey,
	}
	logf("starting containerd")
	if err := c.startContainerd(ctx, cfg); err != nil {
		return fmt.Errorf("containerd: %w", err)
	}
	pause := opts.PauseArchive
	if pause == "" {
		root, _ := testenv.RepoRoot()
		pause = filepath.Join(root, "bin", "pause-image.tar")
	}
	for _, img := range append([]string{pause}, opts.Images...) {
		logf("importing %s", img)
		if err := c.ImportImage(ctx, img); err != nil {
			return err
		}
	}
	logf("starting the controllers, the scheduler, kube-proxy and the kubelet")
	if err := c.startNode(cfg, kubeconfigs, rootCA); err != nil {
		return err
	}
	client, err := c.Client()
	if err != nil {
		return err
	}
	lbCtx, stop := context.WithCancel(context.Background())
	c.stopLB = stop
	go runLoadBalancer(lbCtx, client, logf)
	if err := c.waitReady(ctx, client); err != nil {
		return err
	}
	c.state.Ready = true
	c.state.AdminKubeconfig = c.AdminKubeconfig
	logf("node %s Ready at %s after %s", NodeName, NodeIP, time.Since(c.started).Round(100*time.Millisecond))
	return writeState(c.paths, c.state)
}

// waitReady waits for the node to be Ready, and for what every Pod
// mounts: the default ServiceAccount and the kube-root-ca.crt ConfigMap.
func (c *Cluster) waitReady(ctx context.Context, client kubernetes.Interface) error {
	kubelet := c.procs[len(c.procs)-1]
	check := func() error {
		node, err := client.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		ready := false
		for _, cond := range node.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				ready = true
			}
		}
		if !ready {
			return fmt.Errorf("node %s is not Ready", NodeName)
		}
		if _, err := client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{}); err != nil {
			return err
		}
		_, err = client.CoreV1().ConfigMaps("default").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err
	}
	if err := pollUntil(ctx, kubelet, 3*time.Minute, check); err != nil {
		return fmt.Errorf("wait for the node: %w", err)
	}
	return nil
}

// Attach returns the cluster another process runs in dir (make
// cluster-up's), or an error if none is running and Ready. Down on an
// attached cluster does nothing: its owner stops it.
func Attach(dir string) (*Cluster, error) {
	dir = dirOf(dir)
	p := paths{dir}
	st, err := readState(p)
	if err != nil {
		return nil, fmt.Errorf("no cluster in %s: %w", dir, err)
	}
	if !st.alive() || !st.Ready {
		return nil, fmt.Errorf("the cluster in %s is not running (pid %d)", dir, st.PID)
	}
	bins, err := findBinaries()
	if err != nil {
		return nil, err
	}
	return &Cluster{Dir: dir, AdminKubeconfig: st.AdminKubeconfig, NodeIP: NodeIP, paths: p, bins: bins, state: st}, nil
}

// Running reports whether a cluster runs in dir (another process's).
func Running(dir string) bool {
	st, err := readState(paths{dirOf(dir)})
	return err == nil && st.Ready && st.alive()
}

// RESTConfig is an admin client configuration.
func (c *Cluster) RESTConfig() (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.AdminKubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 100, 200
	return cfg, nil
}

// Client is an admin clientset.
func (c *Cluster) Client() (kubernetes.Interface, error) {
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// Down stops a cluster this process started, in order (node components,
// containerd, then kube-apiserver and etcd), removes everything it made
// on the host, and fails if anything is left.
func (c *Cluster) Down() error {
	if !c.owned {
		return nil
	}
	if c.stopLB != nil {
		c.stopLB()
	}
	// The kubelet first, so it does not restart what goes next.
	for _, p := range slices.Backward(c.procs) {
		p.Stop(10 * time.Second)
	}
	var errs []error
	if c.env != nil {
		errs = append(errs, c.env.Stop())
	}
	errs = append(errs, sweep(c.Dir, c.bins.kubeProxy), restoreSysctls(c.state.Sysctls))
	errs = append(errs, os.RemoveAll(c.Dir))
	if left := Leftovers(c.Dir); len(left) > 0 {
		errs = append(errs, fmt.Errorf("left on the host after cluster down: %v", left))
	}
	c.unlock()
	c.owned = false
	return errors.Join(errs...)
}

// Down stops the cluster another process runs in dir (make cluster-up's
// supervisor) by signalling it, waits for it, and then removes whatever
// is left, as after a crash. It is what make cluster-down runs.
func Down(dir string) error {
	dir = dirOf(dir)
	p := paths{dir}
	st, err := readState(p)
	if err == nil && st.alive() {
		_ = syscall.Kill(st.PID, syscall.SIGTERM)
		deadline := time.Now().Add(90 * time.Second)
		for st.alive() && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
	}
	var errs []error
	root, _ := testenv.RepoRoot()
	errs = append(errs, sweep(dir, filepath.Join(root, ".cache", "bin", "kube-proxy")))
	if err == nil {
		errs = append(errs, restoreSysctls(st.Sysctls))
	}
	errs = append(errs, os.RemoveAll(dir))
	if left := Leftovers(dir); len(left) > 0 {
		errs = append(errs, fmt.Errorf("left on the host after cluster down: %v", left))
	}
	return errors.Join(errs...)
}

func lockCluster() (*os.File, error) {
	f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("another test cluster runs on this machine (%s is locked): stop it with make cluster-down", lockPath)
	}
	return f, nil
}

func (c *Cluster) unlock() {
	if c.lock != nil {
		os.Remove(lockPath)
		c.lock.Close()
		c.lock = nil
	}
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o600)
}
