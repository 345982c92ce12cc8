// Command gateway-conformance runs the Gateway API conformance suite
// against Causeway in the single-node cluster of tier 5 (test/cluster):
// `make test-gateway-conformance` calls it.
//
//	gateway-conformance [-channel experimental] [-report FILE] [-set K=V]... [-- GO TEST ARGS]
//
// It uses make cluster-up's cluster when one runs (and leaves it running),
// else starts one and takes it down at the end. In the cluster it imports
// the suite's backend images (make gateway-api-images) and Causeway's (make
// image), installs the pinned Gateway API CRDs of the channel from the
// module cache, installs Causeway with its chart, and runs the suite from
// its own module (hack/gateway-api, `go test`) with the cluster's admin
// kubeconfig. The suite writes its report to -report. See docs/testenv.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/causeway/causeway/test/cluster"
	"github.com/causeway/causeway/test/testenv"
)

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	channel := flag.String("channel", "experimental", "the Gateway API CRDs' channel: standard or experimental")
	report := flag.String("report", "", "the suite's report (default docs/conformance/gateway-api-VERSION-CHANNEL-report.yaml)")
	var set list
	flag.Var(&set, "set", "a chart value for helm --set (repeatable)")
	flag.Parse()
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx, *channel, *report, set, flag.Args())
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gateway-conformance:", err)
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			os.Exit(exit.ExitCode())
		}
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Printf("%s gateway-conformance: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func run(ctx context.Context, channel, report string, set, testArgs []string) (err error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return err
	}
	causewayImage := filepath.Join(root, "bin", "causeway-image.tar")
	images := []string{causewayImage}
	for _, name := range cluster.GatewayAPIImages {
		images = append(images, filepath.Join(root, "bin", name))
	}
	for _, img := range images {
		if _, err := os.Stat(img); err != nil {
			return fmt.Errorf("%s: run make image gateway-api-images", img)
		}
	}

	var c *cluster.Cluster
	if cluster.Running("") {
		if c, err = cluster.Attach(""); err != nil {
			return err
		}
		logf("using make cluster-up's cluster; importing the images")
		for _, img := range images {
			if err := c.ImportImage(ctx, img); err != nil {
				return err
			}
		}
	} else {
		start := time.Now()
		upCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		c, err = cluster.Up(upCtx, cluster.Options{Images: images, Logf: func(f string, a ...any) { logf("cluster: "+f, a...) }})
		cancel()
		if err != nil {
			return err
		}
		logf("cluster up in %s", time.Since(start).Round(100*time.Millisecond))
		defer func() {
			start := time.Now()
			if derr := c.Down(); derr != nil {
				err = errors.Join(err, fmt.Errorf("cluster down: %w", derr))
				return
			}
			logf("cluster down in %s, nothing left on the host", time.Since(start).Round(100*time.Millisecond))
		}()
	}

	version, err := c.InstallGatewayAPICRDs(ctx, channel)
	if err != nil {
		return err
	}
	logf("Gateway API CRDs %s (%s channel) installed from the module cache", version, channel)

	start := time.Now()
	// The chart's GatewayClass, now that the CRDs are there.
	set = append([]string{"controller.gatewayAPI.gatewayClass.create=true"}, set...)
	cw, err := c.InstallCauseway(ctx, cluster.InstallOptions{ImageArchive: causewayImage, Set: set})
	if err != nil {
		return err
	}
	logf("Causeway %s installed by its chart in %s", cw.ImageTag, time.Since(start).Round(100*time.Millisecond))

	if report == "" {
		report = filepath.Join(root, "docs", "conformance", fmt.Sprintf("gateway-api-%s-%s-report.yaml", version, channel))
	}
	if report, err = filepath.Abs(report); err != nil {
		return err
	}
	args := append([]string{"test", "-count=1", "-timeout=90m", "-v", "-run", "TestConformance", "."}, testArgs...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = filepath.Join(root, "hack", "gateway-api")
	cmd.Env = append(os.Environ(), "GOWORK=off", "KUBECONFIG="+c.AdminKubeconfig,
		"CAUSEWAY_CONFORMANCE_REPORT="+report, "CAUSEWAY_VERSION="+cw.ImageTag)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	logf("running the suite: go %s (in hack/gateway-api)", strings.Join(args, " "))
	if err := cmd.Run(); err != nil {
		// The cluster goes with this run: what the controllers did is
		// only here, for a failure that does not come again. Every
		// replica's, as either may have served the failed request
		// (deployment/NAME would pick one).
		logs, lerr := c.Kubectl(ctx, "logs", "-n", cw.Namespace, "-l", cw.Selector(), "--all-containers", "--prefix", "--timestamps", "--tail=3000")
		if lerr != nil {
			logf("the controllers' logs: %v", lerr)
		} else {
			logf("the controllers' logs, the last 3,000 lines of each container:\n%s", logs)
		}
		return err
	}
	logf("passed; report in %s", report)
	return nil
}
