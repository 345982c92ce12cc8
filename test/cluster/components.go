package cluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/template"
	"time"

	"github.com/causeway/causeway/test/testenv"
)

// The node's components and their configuration: containerd (Debian's,
// with its root, state and socket under the cluster's directory, so the
// tier never touches a system containerd), the CNI network, and the
// pinned Kubernetes binaries.

// binaries are the programs the node runs.
type binaries struct {
	containerd, ctr, kubelet, kubeProxy, controllerManager, scheduler, kubectl string
}

// kubeBinaries are built by make kube-apiserver into .cache/bin.
var kubeBinaries = []string{"kubelet", "kube-proxy", "kube-controller-manager", "kube-scheduler", "kubectl"}

// ErrMissing is wrapped when a program the node needs is not installed
// or built.
var ErrMissing = testenv.ErrBinaryNotFound

func findBinaries() (binaries, error) {
	var b binaries
	root, err := testenv.RepoRoot()
	if err != nil {
		return b, fmt.Errorf("%w: %v", ErrMissing, err)
	}
	kube := map[string]string{}
	for _, name := range kubeBinaries {
		p := filepath.Join(root, ".cache", "bin", name)
		if _, err := os.Stat(p); err != nil {
			return b, fmt.Errorf("%w: %s: run `make kube-apiserver` (it builds every Kubernetes binary)", ErrMissing, p)
		}
		kube[name] = p
	}
	b.kubelet, b.kubeProxy = kube["kubelet"], kube["kube-proxy"]
	b.controllerManager, b.scheduler, b.kubectl = kube["kube-controller-manager"], kube["kube-scheduler"], kube["kubectl"]
	for _, prog := range []struct {
		dst  *string
		name string
	}{{&b.containerd, "containerd"}, {&b.ctr, "ctr"}} {
		p, err := exec.LookPath(prog.name)
		if err != nil {
			return b, fmt.Errorf("%w: %s: install Debian's containerd (make cluster-up does)", ErrMissing, prog.name)
		}
		*prog.dst = p
	}
	for _, prog := range []string{"runc", "conntrack", "iptables", "ip"} {
		if _, err := exec.LookPath(prog); err != nil {
			return b, fmt.Errorf("%w: %s: make cluster-up installs it", ErrMissing, prog)
		}
	}
	for _, plugin := range []string{"bridge", "host-local", "loopback", "portmap"} {
		if _, err := os.Stat(filepath.Join(cniBinDir, plugin)); err != nil {
			return b, fmt.Errorf("%w: CNI plugin %s: install Debian's containernetworking-plugins", ErrMissing, plugin)
		}
	}
	return b, nil
}

// cniBinDir is where Debian's containernetworking-plugins installs them.
const cniBinDir = "/usr/lib/cni"

// identities of the components, each with its own token and the RBAC the
// API server bootstraps for it.
var (
	kubeletUser           = testenv.User{Name: "system:node:" + NodeName, Groups: []string{"system:nodes", "system:authenticated"}}
	kubeProxyUser         = testenv.User{Name: "system:kube-proxy", Groups: []string{"system:authenticated"}}
	controllerManagerUser = testenv.User{Name: "system:kube-controller-manager", Groups: []string{"system:authenticated"}}
	schedulerUser         = testenv.User{Name: "system:kube-scheduler", Groups: []string{"system:authenticated"}}
)

// config is what the configuration templates need.
type config struct {
	Dir, Socket, RuncRoot, CNIConf, CNIIPAM, PodLogs, KubeletRoot string
	NodeIP, NodeName, PodCIDR, PodGateway, PodBridge, NetworkName string
	PauseImage, CgroupRoot, ClientCA, ServingCert, ServingKey     string
	Kubeconfig                                                    string
}

var containerdConfig = template.Must(template.New("containerd").Parse(`# containerd for the test cluster: its own root, state and socket.
version = 2
root = "{{.Dir}}/containerd/root"
state = "{{.Dir}}/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "{{.Socket}}"
[ttrpc]
  address = "{{.Socket}}.ttrpc"
[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "{{.Dir}}/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{{.PauseImage}}"
  # This sandbox drops CAP_SYS_RESOURCE, so nothing may lower an
  # oom_score_adj: without this every sandbox fails in runc.
  restrict_oom_score_adj = true
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "{{.RuncRoot}}"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "` + cniBinDir + `"
    conf_dir = "{{.CNIConf}}"
    max_conf_num = 1
`))

var cniConfig = template.Must(template.New("cni").Parse(`{
  "cniVersion": "0.4.0",
  "name": "{{.NetworkName}}",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "{{.PodBridge}}",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "{{.CNIIPAM}}",
        "ranges": [[{"subnet": "{{.PodCIDR}}", "gateway": "{{.PodGateway}}"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`))

var kubeletConfig = template.Must(template.New("kubelet").Parse(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: {{.NodeIP}}
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: {{.ClientCA}}
authorization:
  mode: Webhook
tlsCertFile: {{.ServingCert}}
tlsPrivateKeyFile: {{.ServingKey}}
containerRuntimeEndpoint: unix://{{.Socket}}
cgroupDriver: cgroupfs
cgroupRoot: {{.CgroupRoot}}
cgroupsPerQOS: true
enforceNodeAllocatable: ["pods"]
failSwapOn: false
# This sandbox drops CAP_SYS_RESOURCE: the kubelet keeps its own score.
oomScoreAdj: 0
podLogsDir: {{.PodLogs}}
volumePluginDir: {{.KubeletRoot}}/volume-plugins
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
serializeImagePulls: false
# Images are imported, never pulled: the collector must never remove one.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 100Mi
  nodefs.available: "1%"
  nodefs.inodesFree: "1%"
  imagefs.available: "1%"
maxPods: 110
nodeStatusReportFrequency: 10s
`))

var kubeProxyConfig = template.Must(template.New("kube-proxy").Parse(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: {{.Kubeconfig}}
mode: iptables
clusterCIDR: {{.PodCIDR}}
hostnameOverride: {{.NodeName}}
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
# NodePorts answer on the node's address only, never on the machine's own.
nodePortAddresses: ["{{.NodeIP}}/32"]
iptables:
  localhostNodePorts: false
  minSyncPeriod: 0s
# Leave the host's conntrack sysctls alone.
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
`))

func writeTemplate(path string, t *template.Template, c config) error {
	var b strings.Builder
	if err := t.Execute(&b, c); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// startContainerd starts containerd and waits for its socket to answer.
func (c *Cluster) startContainerd(ctx context.Context, cfg config) error {
	path := c.paths.config("containerd.toml")
	if err := writeTemplate(path, containerdConfig, cfg); err != nil {
		return err
	}
	if err := writeTemplate(filepath.Join(cfg.CNIConf, "10-"+NetworkName+".conflist"), cniConfig, cfg); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(cfg.Socket), 0o700); err != nil {
		return err
	}
	p, err := c.start("containerd", c.bins.containerd, "--config", path)
	if err != nil {
		return err
	}
	return pollUntil(ctx, p, time.Minute, func() error {
		return exec.CommandContext(ctx, c.bins.ctr, "--address", cfg.Socket, "version").Run()
	})
}

// ImportImage imports an OCI or docker archive into the node's image
// store, where Pods with imagePullPolicy Never or IfNotPresent find it. An
// OCI archive's short names ("causeway:v1") are also tagged with the name
// the kubelet asks for ("docker.io/library/causeway:v1"), since containerd
// keeps them as written.
func (c *Cluster) ImportImage(ctx context.Context, archive string) error {
	refs, err := ArchiveRefs(archive)
	if err != nil {
		return err
	}
	ctr := func(args ...string) error {
		args = append([]string{"--address", c.paths.containerdSocket(), "-n", "k8s.io", "images"}, args...)
		out, err := exec.CommandContext(ctx, c.bins.ctr, args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ctr %s: %w: %s", strings.Join(args[4:], " "), err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	if err := ctr("import", "--all-platforms", archive); err != nil {
		return err
	}
	for _, ref := range refs {
		if full := normalizedRef(ref); full != ref {
			if err := ctr("tag", "--force", ref, full); err != nil {
				return err
			}
		}
	}
	return nil
}

// startNode starts the controllers, the scheduler, kube-proxy and the
// kubelet.
func (c *Cluster) startNode(cfg config, kubeconfigs map[string]string, rootCA string) error {
	if _, err := c.start("kube-controller-manager", c.bins.controllerManager,
		"--kubeconfig="+kubeconfigs[controllerManagerUser.Name],
		"--authentication-kubeconfig="+kubeconfigs[controllerManagerUser.Name],
		"--authorization-kubeconfig="+kubeconfigs[controllerManagerUser.Name],
		"--bind-address=127.0.0.1",
		"--use-service-account-credentials=true",
		"--root-ca-file="+rootCA,
		"--service-cluster-ip-range="+ServiceCIDR,
		"--cluster-cidr="+PodCIDR,
		"--allocate-node-cidrs=false",
		"--profiling=false",
	); err != nil {
		return err
	}
	if _, err := c.start("kube-scheduler", c.bins.scheduler,
		"--kubeconfig="+kubeconfigs[schedulerUser.Name],
		"--authentication-kubeconfig="+kubeconfigs[schedulerUser.Name],
		"--authorization-kubeconfig="+kubeconfigs[schedulerUser.Name],
		"--bind-address=127.0.0.1",
		"--profiling=false",
	); err != nil {
		return err
	}
	proxyCfg := cfg
	proxyCfg.Kubeconfig = kubeconfigs[kubeProxyUser.Name]
	if err := writeTemplate(c.paths.config("kube-proxy.yaml"), kubeProxyConfig, proxyCfg); err != nil {
		return err
	}
	if _, err := c.start("kube-proxy", c.bins.kubeProxy, "--config="+c.paths.config("kube-proxy.yaml")); err != nil {
		return err
	}
	if err := writeTemplate(c.paths.config("kubelet.yaml"), kubeletConfig, cfg); err != nil {
		return err
	}
	_, err := c.start("kubelet", c.bins.kubelet,
		"--config="+c.paths.config("kubelet.yaml"),
		"--kubeconfig="+kubeconfigs[kubeletUser.Name],
		"--root-dir="+cfg.KubeletRoot,
		"--node-ip="+NodeIP,
		"--hostname-override="+NodeName,
		"--pod-infra-container-image="+PauseImage,
	)
	return err
}

// start runs one component with its log in the cluster's logs directory.
func (c *Cluster) start(name, bin string, args ...string) (*testenv.Process, error) {
	p, err := testenv.StartProcess(name, bin, args, nil, c.paths.log(name))
	if err != nil {
		return nil, err
	}
	c.procs = append(c.procs, p)
	return p, nil
}

// pollUntil calls check until it succeeds, p exits, ctx ends or timeout
// passes.
func pollUntil(ctx context.Context, p *testenv.Process, timeout time.Duration, check func() error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var err error
	for {
		if err = check(); err == nil {
			return nil
		}
		if p != nil && p.Exited() {
			return p.ExitError()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
