// Command scale measures the controller against a real kube-apiserver
// holding many objects, and prints a table. It is a benchmark, not a test:
// it asserts nothing, and compares what it measures with the targets.
//
//	go run ./bench/scale              # 10,000 Ingresses, Services, EndpointSlices
//	go run ./bench/scale -n 2000      # smaller
//	go run ./bench/scale -shapes 10000
//	                                  # no two Ingresses alike: the worst case
//	go run ./bench/scale -annotations 5
//	                                  # every Ingress carries 5 common annotations
//	make testenv; go run ./bench/scale -kubeconfig .cache/testenv/admin.kubeconfig
//	                                  # reuse an API server (objects are created once)
//
// It starts etcd and kube-apiserver (test/testenv), creates the objects
// concurrently, then runs the real `causeway controller` binary with
// nginx and measures: start to ready, one changed Ingress to verified
// live (by traffic), one changed EndpointSlice to traffic on the new
// endpoint, peak controller memory, the rendered configuration and
// `nginx -t`. Every endpoint points at one echo backend in a network
// namespace of its own (the API refuses loopback endpoints), so all
// traffic stays on this machine. Needs root, nginx, etcd and
// `make kube-apiserver`.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/causeway/causeway/test/e2e/netns"
	"github.com/causeway/causeway/test/echo"
	"github.com/causeway/causeway/test/testenv"
)

// Targets from the design; the table says whether each was met.
const (
	targetReady  = 60 * time.Second
	targetChange = 2 * time.Second
	targetRSS    = 300 << 20
	// targetReadyAnnotated is the annotation issue's start → ready target
	// for 10,000 Ingresses in 100 layouts with 5 annotations each; it
	// applies whenever -annotations is set.
	targetReadyAnnotated = 30 * time.Second
)

const namespace = "bench"

// publishAddress is what the controller publishes in Ingress status.
const publishAddress = "192.0.2.1"

func main() {
	n := flag.Int("n", 10000, "Ingresses (and Services, and EndpointSlices) to create")
	workers := flag.Int("workers", 16, "concurrent creates")
	changes := flag.Int("changes", 5, "single-Ingress changes to time")
	shapes := flag.Int("shapes", 100, "distinct path layouts among the Ingresses (1 to n; n makes every Ingress unlike the others)")
	annots := flag.Int("annotations", 0, fmt.Sprintf("common ingress-nginx annotations on every Ingress (0 to %d; 5 is the issue's case: proxy-body-size, proxy-read-timeout, enable-cors, rewrite-target on a regex path, ssl-redirect)", len(commonAnnotations)))
	bin := flag.String("causeway", "", "causeway binary (default: go build ./cmd/causeway)")
	keep := flag.Bool("keep", false, "keep the controller's state directory and print its path")
	kubeconfig := flag.String("kubeconfig", "", "use this API server instead of starting one; each set's objects are created only if its namespace is absent")
	profile := flag.String("profile", "", "directory for CPU and heap profiles of the controller, from its --profiling port (with -in-process: the CPU profile file of the rounds)")
	var plane dataPlane
	flag.StringVar(&plane.binary, "nginx", "", "the data plane binary, nginx or angie (default: the controller's, nginx)")
	flag.StringVar(&plane.modulesDir, "nginx-modules-dir", "", "passed to the controller as --nginx-modules-dir (Angie: .cache/angie/modules)")
	flag.StringVar(&plane.luaPackagePath, "lua-package-path", "", "passed to the controller as --lua-package-path (Angie: '.cache/angie/lualib/?.lua;;', absolute)")
	gateways := flag.Int("gateways", 0, "the Gateways the HTTPRoutes attach to (-kind httproute or both: default 100); with -in-process: also build n HTTPRoutes over this many Gateways beside n Ingresses, and compare (issue 34)")
	kind := flag.String("kind", "ingress", "what the real controller serves: ingress (n Ingresses, namespace "+namespace+"), httproute (n HTTPRoutes over -gateways Gateways, namespace "+gatewayNamespace+") or both, one after the other, in one table")
	inproc := flag.Int("in-process", 0, "instead of the real controller: time this many rounds of model build and render of the same objects in this process, one host changed per round")
	flag.Parse()
	if *shapes < 1 || *shapes > *n {
		fmt.Fprintf(os.Stderr, "bench: -shapes %d: want 1 to -n (%d)\n", *shapes, *n)
		os.Exit(2)
	}
	if *annots < 0 || *annots > len(commonAnnotations) {
		fmt.Fprintf(os.Stderr, "bench: -annotations %d: want 0 to %d\n", *annots, len(commonAnnotations))
		os.Exit(2)
	}
	if *inproc > 0 && *gateways > 0 {
		if err := inProcessGateway(*n, *shapes, *gateways, *inproc); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *inproc > 0 {
		if err := inProcess(*n, *shapes, *annots, *inproc, *profile); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	switch *kind {
	case "ingress":
	case "httproute", "both":
		if *annots > 0 {
			fmt.Fprintf(os.Stderr, "bench: -annotations is for Ingresses only (-kind ingress)\n")
			os.Exit(2)
		}
		if *gateways == 0 {
			*gateways = 100
		}
	default:
		fmt.Fprintf(os.Stderr, "bench: -kind %q: want ingress, httproute or both\n", *kind)
		os.Exit(2)
	}
	if err := run(options{*n, *workers, *changes, *shapes, *annots, *kind, *gateways, *bin, *keep, *kubeconfig, *profile, plane}); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type options struct {
	n, workers, changes, shapes, annotations int
	// kind is ingress, httproute or both; gateways the Gateways the
	// HTTPRoutes attach to.
	kind                string
	gateways            int
	bin                 string
	keep                bool
	kubeconfig, profile string
	plane               dataPlane
}

func run(o options) error {
	// Each set takes up to about 20 minutes at 10,000 (creating the
	// objects, then status on every one).
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Minute)
	defer cancel()
	tmp, err := os.MkdirTemp("", "causeway-scale-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	os.Chmod(tmp, 0o755) // nginx workers read the state directory
	bin := o.bin
	if bin == "" {
		bin = filepath.Join(tmp, "causeway")
		fmt.Fprintln(os.Stderr, "building causeway ...")
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/causeway")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("build causeway: %w", err)
		}
	}

	kubeconfig := o.kubeconfig
	if kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "starting etcd and kube-apiserver ...")
		// The default /24 holds only 254 ClusterIPs.
		env, err := testenv.Start(ctx, testenv.Options{ExtraAPIServerArgs: []string{"--service-cluster-ip-range=10.0.0.0/16"}})
		if err != nil {
			return err
		}
		defer env.Stop()
		kubeconfig = env.AdminKubeconfig
	}
	ns, err := netns.New()
	if err != nil {
		return err
	}
	defer ns.Close()
	// Two echo endpoints of one address: every EndpointSlice points at
	// the first; the endpoint changes move one to the second.
	var ports [2]int
	for i := range ports {
		srv, port, err := echoServer(ns)
		if err != nil {
			return err
		}
		defer srv.Close()
		ports[i] = port
	}
	b := backend{ip: ns.PeerIP.String(), port: ports[0], other: ports[1]}

	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 5000, 5000
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var sets []objectSet
	if o.kind == "ingress" || o.kind == "both" {
		sets = append(sets, &ingressSet{client: client, n: o.n, workers: o.workers, shapes: o.shapes, annots: o.annotations})
	}
	if o.kind == "httproute" || o.kind == "both" {
		sets = append(sets, &routeSet{client: client, dyn: dyn, n: o.n, workers: o.workers, shapes: o.shapes, gateways: o.gateways})
	}
	var columns [][]row
	for _, set := range sets {
		rows, err := measureSet(ctx, o, set, client, bin, kubeconfig, filepath.Join(tmp, "state-"+strings.ToLower(set.kind())), b)
		if err != nil {
			return fmt.Errorf("%s: %w", set.plural(), err)
		}
		columns = append(columns, rows)
		if len(sets) > 1 {
			// Kept in the log, should a later set fail.
			printTable(os.Stderr, o, []objectSet{set}, [][]row{rows})
		}
	}
	printTable(os.Stdout, o, sets, columns)
	return nil
}

// echoServer serves an echo backend on a port of its own at ns's address.
func echoServer(ns *netns.Netns) (*http.Server, int, error) {
	ln, err := ns.Listen(net.JoinHostPort(ns.PeerIP.String(), "0"))
	if err != nil {
		return nil, 0, err
	}
	srv := &http.Server{Handler: echo.Handler("bench", ln.Addr().String()), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	return srv, ln.Addr().(*net.TCPAddr).Port, nil
}

// annotationsNote names the annotations every Ingress carries.
func annotationsNote(n int) string {
	if n == 0 {
		return "no annotations"
	}
	var names []string
	for _, a := range commonAnnotations[:n] {
		names = append(names, a[0])
	}
	return fmt.Sprintf("%d annotations each: %s", n, strings.Join(names, ", "))
}

func verdict(ok bool) string {
	if ok {
		return "(met)"
	}
	return "(MISSED)"
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

func numCPU() int {
	data, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(data), "processor\t:")
}
