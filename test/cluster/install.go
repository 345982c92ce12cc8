package cluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/causeway/causeway/test/testenv"
)

// Installing Causeway as a user does: helm install of charts/causeway with
// only the image values changed. Tier 5 uses it, and so can later suites
// (Gateway API conformance) that need a running Causeway.

// InstallOptions configure InstallCauseway.
type InstallOptions struct {
	// Release and Namespace default to causeway and causeway-system.
	Release, Namespace string
	// ImageArchive is the archive make image wrote and the cluster
	// imported (default bin/causeway-image.tar); its tag is what the
	// chart's controller.image.tag is set to.
	ImageArchive string
	// Set are more --set values, such as "controller.replicaCount=1".
	Set []string
	// Timeout bounds helm's --wait (default 5m).
	Timeout time.Duration
}

// Causeway is an installed release.
type Causeway struct {
	Release, Namespace string
	// Name is the chart's full name: its Deployment, Service, ConfigMap.
	Name string
	// Client is an admin clientset.
	Client kubernetes.Interface
	// NodeIP is the node's address; the Service's NodePorts answer there.
	NodeIP string
	// ImageRepository and ImageTag are the image's values in the chart.
	ImageRepository, ImageTag string

	cluster *Cluster
	opts    InstallOptions
}

// InstallCauseway installs the chart and waits until helm reports every
// object ready (the controller's Pods Ready through their probes). A
// release of that name installed already is upgraded to opts instead.
func (c *Cluster) InstallCauseway(ctx context.Context, opts InstallOptions) (*Causeway, error) {
	if opts.Release == "" {
		opts.Release = "causeway"
	}
	if opts.Namespace == "" {
		opts.Namespace = "causeway-system"
	}
	if opts.Timeout == 0 {
		opts.Timeout = 5 * time.Minute
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		return nil, err
	}
	if opts.ImageArchive == "" {
		opts.ImageArchive = filepath.Join(root, "bin", "causeway-image.tar")
	}
	refs, err := ArchiveRefs(opts.ImageArchive)
	if err != nil {
		return nil, fmt.Errorf("%w (make image builds it)", err)
	}
	repo, tag, ok := strings.Cut(refs[0], ":")
	if !ok {
		return nil, fmt.Errorf("%s: image %q has no tag", opts.ImageArchive, refs[0])
	}
	client, err := c.Client()
	if err != nil {
		return nil, err
	}
	name := opts.Release
	if !strings.Contains(name, "causeway") {
		name += "-causeway"
	}
	cw := &Causeway{Release: opts.Release, Namespace: opts.Namespace, Name: name, Client: client, NodeIP: c.NodeIP,
		ImageRepository: repo, ImageTag: tag, cluster: c, opts: opts}
	verb := "install"
	if _, err := c.Helm(ctx, "status", opts.Release, "--namespace", opts.Namespace); err == nil {
		// Installed by an earlier run against make cluster-up's cluster:
		// bring it to these values instead.
		verb = "upgrade"
	}
	args := []string{verb, opts.Release, filepath.Join(root, "charts", "causeway"),
		"--namespace", opts.Namespace, "--create-namespace", "--wait", "--timeout", opts.Timeout.String()}
	args = append(args, cw.imageValues()...)
	for _, s := range opts.Set {
		args = append(args, "--set", s)
	}
	if _, err := c.Helm(ctx, args...); err != nil {
		return nil, err
	}
	return cw, nil
}

// imageValues are the only values a user changes to install the chart on
// this node: the imported image, never pulled. The tag is a string
// even when a commit's short hash is all digits (helm would read a number).
func (cw *Causeway) imageValues() []string {
	return []string{"--set-string", "controller.image.repository=" + cw.ImageRepository,
		"--set-string", "controller.image.tag=" + cw.ImageTag,
		"--set", "controller.image.pullPolicy=Never"}
}

// Upgrade runs helm upgrade with the release's values plus set, without
// waiting: the caller watches the rollout it causes.
func (cw *Causeway) Upgrade(ctx context.Context, set ...string) error {
	root, err := testenv.RepoRoot()
	if err != nil {
		return err
	}
	args := []string{"upgrade", cw.Release, filepath.Join(root, "charts", "causeway"), "--namespace", cw.Namespace, "--reuse-values"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	_, err = cw.cluster.Helm(ctx, args...)
	return err
}

// Uninstall runs helm uninstall and waits for the release's Pods to go.
func (cw *Causeway) Uninstall(ctx context.Context) error {
	return cw.cluster.UninstallCauseway(ctx, cw.Release, cw.Namespace)
}

// UninstallCauseway runs helm uninstall of release, if it is installed,
// and waits for its Pods to go.
func (c *Cluster) UninstallCauseway(ctx context.Context, release, namespace string) error {
	if _, err := c.Helm(ctx, "status", release, "--namespace", namespace); err != nil {
		return nil // not installed
	}
	if _, err := c.Helm(ctx, "uninstall", release, "--namespace", namespace, "--wait", "--timeout", "3m"); err != nil {
		return err
	}
	client, err := c.Client()
	if err != nil {
		return err
	}
	cw := &Causeway{Release: release, Namespace: namespace, Client: client}
	return pollUntil(ctx, nil, 2*time.Minute, func() error {
		pods, err := cw.Pods(ctx)
		if err != nil {
			return err
		}
		if len(pods) > 0 {
			return fmt.Errorf("%d controller pods remain", len(pods))
		}
		return nil
	})
}

// Selector is the label selector of the release's controller Pods.
func (cw *Causeway) Selector() string {
	return "app.kubernetes.io/name=causeway,app.kubernetes.io/instance=" + cw.Release
}

// Pods are the release's controller Pods, terminating ones included.
func (cw *Causeway) Pods(ctx context.Context) ([]corev1.Pod, error) {
	list, err := cw.Client.CoreV1().Pods(cw.Namespace).List(ctx, metav1.ListOptions{LabelSelector: cw.Selector()})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// NodePorts returns the controller Service's HTTP and HTTPS NodePorts.
func (cw *Causeway) NodePorts(ctx context.Context) (http, https int, err error) {
	svc, err := cw.Client.CoreV1().Services(cw.Namespace).Get(ctx, cw.Name, metav1.GetOptions{})
	if err != nil {
		return 0, 0, err
	}
	for _, p := range svc.Spec.Ports {
		switch p.Name {
		case "http":
			http = int(p.NodePort)
		case "https":
			https = int(p.NodePort)
		}
	}
	if http == 0 || https == 0 {
		return 0, 0, fmt.Errorf("service %s/%s has no http and https NodePorts", cw.Namespace, cw.Name)
	}
	return http, https, nil
}

// Helm runs the pinned helm (make helm) against the cluster.
func (c *Cluster) Helm(ctx context.Context, args ...string) (string, error) {
	return c.tool(ctx, "helm", args...)
}

// Kubectl runs the pinned kubectl against the cluster, as a user types it.
func (c *Cluster) Kubectl(ctx context.Context, args ...string) (string, error) {
	return c.tool(ctx, "kubectl", args...)
}

// KubectlApply runs kubectl apply -f - with manifest as its input.
func (c *Cluster) KubectlApply(ctx context.Context, manifest string, args ...string) (string, error) {
	return c.toolInput(ctx, "kubectl", manifest, append([]string{"apply", "-f", "-"}, args...)...)
}

func (c *Cluster) tool(ctx context.Context, name string, args ...string) (string, error) {
	return c.toolInput(ctx, name, "", args...)
}

func (c *Cluster) toolInput(ctx context.Context, name, input string, args ...string) (string, error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(root, ".cache", "bin", name)
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("%w: %s (make %s)", ErrMissing, bin, map[string]string{"helm": "helm", "kubectl": "kube-apiserver"}[name])
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	if input != "" {
		cmd.Stdin = strings.NewReader(input)
	}
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.AdminKubeconfig, "HELM_CACHE_HOME="+filepath.Join(c.Dir, "helm"),
		"HELM_CONFIG_HOME="+filepath.Join(c.Dir, "helm"), "HELM_DATA_HOME="+filepath.Join(c.Dir, "helm"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// URL is http://NodeIP:port.
func (cw *Causeway) URL(port int) string { return "http://" + cw.NodeIP + ":" + strconv.Itoa(port) }
