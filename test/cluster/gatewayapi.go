package cluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/causeway/causeway/test/testenv"
)

// The Gateway API conformance suite's pieces on this cluster: the CRDs
// and the suite's manifests come from the modules pinned in
// hack/gateway-api, read from the Go module cache (downloaded through the
// module proxy when missing; nothing else is fetched). The suite's backend
// images are make gateway-api-images' archives (hack/build-gateway-api.sh).

// Gateway API modules pinned in hack/gateway-api.
const (
	GatewayAPIModule            = "sigs.k8s.io/gateway-api"
	GatewayAPIConformanceModule = "sigs.k8s.io/gateway-api/conformance"
)

// GatewayAPIImages are the archives of the suite's backends (echo-basic
// under every name the suite's manifests use, CoreDNS), in bin/.
var GatewayAPIImages = []string{"echo-basic-image.tar", "coredns-image.tar"}

// PinnedModuleDir returns the directory in the module cache of a module
// hack/gateway-api pins, and its version, downloading it if needed.
func PinnedModuleDir(ctx context.Context, module string) (dir, version string, err error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return "", "", err
	}
	gomod := filepath.Join(root, "hack", "gateway-api")
	run := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = gomod
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		out, err := cmd.Output()
		if err != nil {
			if ee, ok := err.(*exec.ExitError); ok {
				return "", fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, ee.Stderr)
			}
			return "", fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out)), nil
	}
	if _, err := run("mod", "download", module); err != nil {
		return "", "", err
	}
	out, err := run("list", "-m", "-f", "{{.Dir}} {{.Version}}", module)
	if err != nil {
		return "", "", err
	}
	dir, version, ok := strings.Cut(out, " ")
	if !ok || dir == "" {
		return "", "", fmt.Errorf("go list -m %s: no directory in %q", module, out)
	}
	return dir, version, nil
}

// GatewayAPICRDs returns the CustomResourceDefinition files of a channel
// ("standard" or "experimental") of the pinned sigs.k8s.io/gateway-api's
// config/crd, and the other objects shipped beside them (the
// ValidatingAdmissionPolicy that guards upgrades).
func GatewayAPICRDs(ctx context.Context, channel string) (crds, others []string, version string, err error) {
	if channel != "standard" && channel != "experimental" {
		return nil, nil, "", fmt.Errorf("Gateway API channel %q: want standard or experimental", channel)
	}
	dir, version, err := PinnedModuleDir(ctx, GatewayAPIModule)
	if err != nil {
		return nil, nil, "", err
	}
	files, err := filepath.Glob(filepath.Join(dir, "config", "crd", channel, "*.yaml"))
	if err != nil {
		return nil, nil, "", err
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, "", err
		}
		switch {
		case filepath.Base(f) == "kustomization.yaml":
		case strings.Contains(string(data), "\nkind: CustomResourceDefinition\n"):
			crds = append(crds, f)
		default:
			others = append(others, f)
		}
	}
	if len(crds) == 0 {
		return nil, nil, "", fmt.Errorf("no CRDs in %s/config/crd/%s", dir, channel)
	}
	return crds, others, version, nil
}

// InstallGatewayAPICRDs installs a channel of the pinned Gateway API CRDs
// as the project's docs tell users to (server-side apply: the
// experimental CRDs' last-applied annotation would pass the limit), and
// waits until every CRD is Established. It returns the version.
func (c *Cluster) InstallGatewayAPICRDs(ctx context.Context, channel string) (string, error) {
	crds, others, version, err := GatewayAPICRDs(ctx, channel)
	if err != nil {
		return "", err
	}
	args := []string{"apply", "--server-side", "--force-conflicts"}
	for _, f := range append(crds, others...) {
		args = append(args, "-f", f)
	}
	if _, err := c.Kubectl(ctx, args...); err != nil {
		return "", err
	}
	wait := []string{"wait", "--for=condition=Established", "--timeout=2m"}
	for _, f := range crds {
		wait = append(wait, "-f", f)
	}
	if _, err := c.Kubectl(ctx, wait...); err != nil {
		return "", err
	}
	return version, nil
}

// UninstallGatewayAPICRDs removes what InstallGatewayAPICRDs installed
// (and with the CRDs every object of their kinds).
func (c *Cluster) UninstallGatewayAPICRDs(ctx context.Context, channel string) error {
	crds, others, _, err := GatewayAPICRDs(ctx, channel)
	if err != nil {
		return err
	}
	args := []string{"delete", "--ignore-not-found", "--wait"}
	for _, f := range append(crds, others...) {
		args = append(args, "-f", f)
	}
	_, err = c.Kubectl(ctx, args...)
	return err
}
