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
//	go run ./bench/scale -sizes 100,1000,10000 -endpoints-only
//	                                  # endpoint changes at three sizes, one table
//
// It starts etcd and kube-apiserver (test/testenv), creates the objects
// concurrently, then runs the real `causeway controller` binary with
// nginx and measures: start to ready, one changed Ingress to verified
// live (by traffic), single EndpointSlice changes to traffic on the new
// endpoint (p50 / p99), the same under a churn of EndpointSlice writes
// with the controller's CPU, peak controller memory, the rendered
// configuration and `nginx -t`. Every endpoint points at one echo backend in a network
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
	"slices"
	"strconv"
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
	// targetRSS is issue 35's "≤ 300 MB" (286 MiB), not 300 MiB, which
	// the table printed as its target until 2026-11-29.
	targetRSS = 300_000_000
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
	var ep endpointOptions
	flag.IntVar(&ep.samples, "endpoint-samples", 100, "single EndpointSlice changes to time, one at a time, each on another Service (0: none)")
	flag.DurationVar(&ep.limit, "endpoint-limit", 10*time.Second, "give an endpoint change up (and count it as failed) after this long")
	flag.DurationVar(&ep.poll, "poll-interval", 500*time.Microsecond, "pause between two requests while waiting for the new endpoint (on kept-alive connections)")
	flag.IntVar(&ep.churn.rate, "churn-rate", 100, "EndpointSlice writes a second during the churn")
	flag.IntVar(&ep.churn.services, "churn-services", 1000, "the churn writes the EndpointSlices of the last this many Services, round robin")
	flag.IntVar(&ep.churn.seconds, "churn-seconds", 60, "how long the churn writes (0: no churn)")
	flag.IntVar(&ep.churn.writers, "churn-writers", 16, "concurrent writers of the churn (a tick that finds a fifth of a second of writes waiting for them is missed)")
	flag.IntVar(&ep.churn.every, "churn-sample-every", 10, "time every this many-th write of the churn to the new endpoint answering")
	var hosts hostOptions
	flag.IntVar(&hosts.samples, "host-samples", 20, "Ingresses of existing shapes to add and remove again, one at a time, timed to served and to 404 (0: none; Ingress sets only)")
	flag.DurationVar(&hosts.limit, "host-limit", time.Minute, "give a host change up (and count it as failed) after this long")
	sizesFlag := flag.String("sizes", "", "comma-separated Ingress counts (e.g. 100,1000,10000) measured one after the other, each in namespace bench-<n> (bench-<n>-a<annotations> with -annotations) with a controller of its own against one API server, side by side in one table (instead of -n; Ingresses only)")
	endpointsOnly := flag.Bool("endpoints-only", false, "skip the status wait and the single-object changes, and run the controller with --update-status=false: only start, the endpoint changes and the churn")
	flag.BoolVar(&corsOrigin, "cors-origin", false, "give every layout CORS for an origin of its own (enable-cors, cors-allow-origin: https://app-<k>.example.com), with any -annotations")
	breakdownFlag := flag.Bool("breakdown", false, "instead of the API server and the controller: time each step of one changed Ingress (build, render, writing the files, nginx -t, the reload) with the controller's code on real nginx, -changes times (breakdown.go)")
	flag.Parse()
	sizes, err := parseSizes(*sizesFlag)
	if err != nil || (len(sizes) > 0 && (*kind != "ingress" || *inproc > 0)) {
		fmt.Fprintf(os.Stderr, "bench: -sizes %q: want counts such as 100,1000,10000, with -kind ingress and without -in-process (%v)\n", *sizesFlag, err)
		os.Exit(2)
	}
	if ep.churn.rate < 1 || ep.churn.services < 1 || ep.churn.writers < 1 || ep.churn.every < 1 || ep.churn.seconds < 0 || ep.samples < 0 || hosts.samples < 0 {
		fmt.Fprintln(os.Stderr, "bench: -churn-rate, -churn-services, -churn-writers and -churn-sample-every want at least 1, -churn-seconds and -endpoint-samples at least 0")
		os.Exit(2)
	}
	if len(sizes) > 0 {
		*n = slices.Max(sizes) // only for the checks below
	}
	if *shapes < 1 || *shapes > *n {
		fmt.Fprintf(os.Stderr, "bench: -shapes %d: want 1 to -n (%d)\n", *shapes, *n)
		os.Exit(2)
	}
	if *annots < 0 || *annots > len(commonAnnotations) {
		fmt.Fprintf(os.Stderr, "bench: -annotations %d: want 0 to %d\n", *annots, len(commonAnnotations))
		os.Exit(2)
	}
	if *breakdownFlag {
		if err := breakdown(*n, *shapes, *annots, *changes, *keep, plane); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
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
	if err := run(options{*n, *workers, *changes, *shapes, *annots, *kind, *gateways, *bin, *keep, *kubeconfig, *profile, plane, ep, hosts, sizes, *endpointsOnly}); err != nil {
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
	endpoints           endpointOptions
	hosts               hostOptions
	// sizes are -sizes: Ingress sets of these counts, one after the
	// other, instead of one of n.
	sizes         []int
	endpointsOnly bool
}

// endpointOptions are the endpoint changes' flags: samples single
// changes, each given up after limit, polled every poll; then the churn.
type endpointOptions struct {
	samples     int
	limit, poll time.Duration
	churn       churnOptions
}

// parseSizes reads -sizes: "" is none.
func parseSizes(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 2 {
			return nil, fmt.Errorf("%q is not a count of at least 2", f)
		}
		if slices.Contains(out, n) {
			return nil, fmt.Errorf("%d twice", n)
		}
		out = append(out, n)
	}
	return out, nil
}

func run(o options) error {
	// Each set takes up to about 20 minutes at 10,000 (creating the
	// objects, then status on every one).
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(60+30*max(len(o.sizes), 2))*time.Minute)
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
	// Each set with its options (its n), and its column's title.
	var sets []objectSet
	var opts []options
	var titles []string
	add := func(s objectSet, n int, title string) {
		so := o
		so.n = n
		sets, opts, titles = append(sets, s), append(opts, so), append(titles, title)
	}
	for _, n := range o.sizes {
		// Annotated sets apart from the others: an earlier run's are
		// reused only if made alike (checkExisting).
		ns := fmt.Sprintf("%s-%d", namespace, n)
		if o.annotations > 0 {
			ns += fmt.Sprintf("-a%d", o.annotations)
		}
		add(&ingressSet{client: client, ns: ns, n: n, workers: o.workers, shapes: min(o.shapes, n), annots: o.annotations},
			n, fmt.Sprintf("%s Ingresses", thousands(n)))
	}
	if len(o.sizes) == 0 && (o.kind == "ingress" || o.kind == "both") {
		add(&ingressSet{client: client, ns: namespace, n: o.n, workers: o.workers, shapes: o.shapes, annots: o.annotations}, o.n, "Ingresses")
	}
	if o.kind == "httproute" || o.kind == "both" {
		add(&routeSet{client: client, dyn: dyn, n: o.n, workers: o.workers, shapes: o.shapes, gateways: o.gateways}, o.n, "HTTPRoutes")
	}
	var columns [][]row
	for k, set := range sets {
		rows, err := measureSet(ctx, opts[k], set, client, bin, kubeconfig, filepath.Join(tmp, fmt.Sprintf("state-%d-%s", k, strings.ToLower(set.kind()))), b)
		if err != nil {
			return fmt.Errorf("%s: %w", titles[k], err)
		}
		columns = append(columns, rows)
		if len(sets) > 1 {
			// Kept in the log, should a later set fail.
			printTable(os.Stderr, o, []objectSet{set}, titles[k:k+1], [][]row{rows})
		}
	}
	printTable(os.Stdout, o, sets, titles, columns)
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

// thousands prints n with commas: 10,000.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for k := len(s) - 3; k > 0; k -= 3 {
		s = s[:k] + "," + s[k:]
	}
	return s
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

func numCPU() int {
	data, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(data), "processor\t:")
}
