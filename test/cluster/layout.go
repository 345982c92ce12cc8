package cluster

import "path/filepath"

// The node's addresses and names. Everything the cluster makes on the host
// is named from here, so that Down and Leftovers can find it again after a
// crash, with no state but this file.
const (
	// NodeName is the Node object's name and the kubelet's hostname.
	NodeName = "tier5-node"
	// NodeIP is the node's address, on an interface of its own
	// (NodeInterface, a bridge without ports), so the cluster never uses
	// the machine's own addresses: the API server, the kubelet, NodePorts
	// and hostNetwork Pods are reached here.
	NodeIP = "10.250.0.1"
	// NodeInterface holds NodeIP.
	NodeInterface = "causeway0"
	// PodCIDR is the Pods' network, on the bridge PodBridge; the host is
	// its gateway (PodGateway).
	PodCIDR    = "10.244.0.0/24"
	PodGateway = "10.244.0.1"
	PodBridge  = "causeway-br0"
	// ServiceCIDR is where Services get their ClusterIPs;
	// APIServiceIP is the "kubernetes" Service's.
	ServiceCIDR  = "10.96.0.0/24"
	APIServiceIP = "10.96.0.1"
	// APIServerPort is kube-apiserver's port on NodeIP.
	APIServerPort = 6443
	// NetworkName is the CNI network's name; libcni caches results as
	// /var/lib/cni/results/NetworkName-*.
	NetworkName = "causeway-pods"
	// CgroupRoot is the kubelet's --cgroup-root: every Pod's cgroup is
	// below it in every hierarchy, and nothing else of ours is.
	CgroupRoot = "/causeway-cluster"
	// DefaultDir holds every file of the cluster: its state, logs,
	// containerd's root and the kubelet's; CAUSEWAY_CLUSTER_DIR overrides.
	DefaultDir = "/var/lib/causeway-cluster"
	// Images built here and imported into the node: the sandbox and the
	// echo backend (make cluster-images).
	PauseImage = "causeway.test/pause:1"
	EchoImage  = "causeway.test/echo:1"
)

// Paths outside Dir that the node's components write to and cannot be
// told to move; Down removes only the entries the cluster made.
const (
	// containerd 1.6's CRI mounts each sandbox's network namespace here.
	netnsDir = "/var/run/netns"
	// containerd 1.6's shims listen on sockets here.
	shimSocketDir = "/run/containerd/s"
	// libcni caches each attachment's result here.
	cniResultsDir = "/var/lib/cni/results"
	// The kubelet links each container's log here.
	containerLogLinks = "/var/log/containers"
)

// paths are the files and directories of a cluster under its Dir.
type paths struct{ dir string }

func (p paths) state() string          { return filepath.Join(p.dir, "state.json") }
func (p paths) lock() string           { return filepath.Join(p.dir, "lock") }
func (p paths) logs() string           { return filepath.Join(p.dir, "logs") }
func (p paths) log(name string) string { return filepath.Join(p.dir, "logs", name+".log") }
func (p paths) pki() string            { return filepath.Join(p.dir, "pki") }
func (p paths) kubeconfig(n string) string {
	return filepath.Join(p.dir, "kubeconfig", n+".kubeconfig")
}
func (p paths) containerd() string        { return filepath.Join(p.dir, "containerd") }
func (p paths) containerdSocket() string  { return filepath.Join(p.dir, "run", "containerd.sock") }
func (p paths) runcRoot() string          { return filepath.Join(p.dir, "run", "runc") }
func (p paths) cniConf() string           { return filepath.Join(p.dir, "cni", "net.d") }
func (p paths) cniIPAM() string           { return filepath.Join(p.dir, "cni", "ipam") }
func (p paths) kubelet() string           { return filepath.Join(p.dir, "kubelet") }
func (p paths) podLogs() string           { return filepath.Join(p.dir, "pod-logs") }
func (p paths) config(name string) string { return filepath.Join(p.dir, "config", name) }
