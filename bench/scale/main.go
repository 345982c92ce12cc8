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
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	kubeconfig := flag.String("kubeconfig", "", "use this API server instead of starting one; objects are created only if namespace "+namespace+" is absent")
	profile := flag.String("profile", "", "directory for CPU and heap profiles of the controller, if it serves /debug/pprof on its metrics port (with -in-process: the CPU profile file of the rounds)")
	var plane dataPlane
	flag.StringVar(&plane.binary, "nginx", "", "the data plane binary, nginx or angie (default: the controller's, nginx)")
	flag.StringVar(&plane.modulesDir, "nginx-modules-dir", "", "passed to the controller as --nginx-modules-dir (Angie: .cache/angie/modules)")
	flag.StringVar(&plane.luaPackagePath, "lua-package-path", "", "passed to the controller as --lua-package-path (Angie: '.cache/angie/lualib/?.lua;;', absolute)")
	gateways := flag.Int("gateways", 0, "with -in-process: also build n HTTPRoutes over this many Gateways beside n Ingresses, and compare (issue 34)")
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
	if err := run(options{*n, *workers, *changes, *shapes, *annots, *bin, *keep, *kubeconfig, *profile, plane}); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// row is one line of the result table.
type row struct{ what, value, target string }

type options struct {
	n, workers, changes, shapes, annotations int
	bin                                      string
	keep                                     bool
	kubeconfig, profile                      string
	plane                                    dataPlane
}

func run(o options) error {
	n, workers, changes, bin := o.n, o.workers, o.changes, o.bin
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	tmp, err := os.MkdirTemp("", "causeway-scale-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	os.Chmod(tmp, 0o755) // nginx workers read the state directory
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
	backendPort, otherPort := ports[0], ports[1]

	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 5000, 5000
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var rows []row
	_, err = client.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{})
	fresh := apierrors.IsNotFound(err)
	if fresh {
		created, err := createObjects(ctx, client, n, workers, o.shapes, o.annotations, ns.PeerIP.String(), backendPort)
		if err != nil {
			return err
		}
		rows = append(rows, row{fmt.Sprintf("create %d Ingresses (%d shapes, %s) + Services + EndpointSlices (%d workers)", n, o.shapes, annotationsNote(o.annotations), workers),
			fmt.Sprintf("%s (%.0f objects/s)", created.Round(100*time.Millisecond), float64(3*n)/created.Seconds()), ""})
	} else if err != nil {
		return err
	} else if err := checkExisting(ctx, client, o.shapes, o.annotations); err != nil {
		return err
	}

	c, err := startController(ctx, bin, kubeconfig, filepath.Join(tmp, "state"), o.plane)
	if err != nil {
		return err
	}
	defer c.stop()
	stopProfile := c.profile(o.profile, "start")
	ready, err := c.waitReady(ctx, 10*time.Minute)
	stopProfile()
	if err != nil {
		return err
	}
	readyTarget := targetReady
	if o.annotations > 0 {
		readyTarget = targetReadyAnnotated
	}
	rows = append(rows, row{"controller start → ready (/readyz 200)", ready.Round(10 * time.Millisecond).String(), "≤ " + readyTarget.String() + " " + verdict(ready <= readyTarget)})
	afterReady := c.rss()

	statusStart := time.Now()
	if err := waitPublished(ctx, client, n, 15*time.Minute); err != nil {
		return err
	}
	what := fmt.Sprintf("ready → status published on all %d Ingresses", n)
	if !fresh {
		what += " (already published by an earlier run)"
	}
	rows = append(rows, row{what, time.Since(statusStart).Round(100 * time.Millisecond).String(), ""})
	// Let the syncs caused by the status writes run out.
	time.Sleep(3 * time.Second)

	stopProfile = c.profile(o.profile, "change")
	var took, apply, reload []time.Duration
	for i := range changes {
		t, err := c.change(ctx, client, i, ns.PeerIP.String(), backendPort)
		if err != nil {
			stopProfile()
			return err
		}
		took = append(took, t.took)
		if t.apply > 0 {
			apply, reload = append(apply, t.apply), append(reload, t.reload)
		}
	}
	stopProfile()
	c.heapProfile(o.profile)
	slices.Sort(took)
	worst := took[len(took)-1]
	rows = append(rows, row{fmt.Sprintf("one Ingress changed → live, by traffic (median / max of %d)", changes),
		fmt.Sprintf("%s / %s", took[len(took)/2].Round(time.Millisecond), worst.Round(time.Millisecond)),
		"≤ " + targetChange.String() + " " + verdict(worst <= targetChange)})
	if len(apply) > 0 {
		// The split of the same changes (those that took one sync).
		var build []time.Duration
		for k := range apply {
			build = append(build, apply[k]-reload[k])
		}
		for _, r := range []struct {
			what string
			ds   []time.Duration
		}{
			{"of which: controller, event → live (causeway_config_apply_seconds)", apply},
			{"of which: the rest of the sync: quiet period, model build, render, endpoint push (event → live minus the reload)", build},
			{"of which: nginx reload, files written → new workers answering (causeway_nginx_last_reload_seconds)", reload},
		} {
			slices.Sort(r.ds)
			rows = append(rows, row{fmt.Sprintf("%s (median / max of %d)", r.what, len(r.ds)),
				fmt.Sprintf("%s / %s", r.ds[len(r.ds)/2].Round(time.Millisecond), r.ds[len(r.ds)-1].Round(time.Millisecond)), ""})
		}
	}

	// Endpoint changes: the Services of the last Ingresses, which the
	// Ingress changes above leave alone.
	var epTook, epApply []time.Duration
	epReloads := 0
	stopProfile = c.profile(o.profile, "endpoint")
	for k := range changes {
		t, err := c.endpointChange(ctx, client, n-1-k, ns.PeerIP.String(), backendPort, otherPort)
		if err != nil {
			stopProfile()
			return err
		}
		epTook, epReloads = append(epTook, t.took), epReloads+t.reloads
		if t.apply > 0 {
			epApply = append(epApply, t.apply)
		}
	}
	stopProfile()
	slices.Sort(epTook)
	rows = append(rows, row{fmt.Sprintf("one EndpointSlice changed → traffic on the new endpoint (median / max of %d)", changes),
		fmt.Sprintf("%s / %s", epTook[len(epTook)/2].Round(time.Millisecond), epTook[len(epTook)-1].Round(time.Millisecond)), ""})
	if len(epApply) > 0 {
		slices.Sort(epApply)
		rows = append(rows, row{fmt.Sprintf("of which: controller, event → pushed (causeway_config_apply_seconds; median / max of %d)", len(epApply)),
			fmt.Sprintf("%s / %s", epApply[len(epApply)/2].Round(time.Millisecond), epApply[len(epApply)-1].Round(time.Millisecond)), ""})
	}
	rows = append(rows, row{"nginx reloads during the endpoint changes", fmt.Sprint(epReloads), "0 " + verdict(epReloads == 0)})

	peak := c.rss()
	rows = append(rows, row{"controller RSS after ready / peak (VmHWM)",
		fmt.Sprintf("%s / %s", mib(afterReady.current), mib(peak.peak)), "< " + mib(targetRSS) + " " + verdict(peak.peak < targetRSS)})
	rows = append(rows, row{"nginx RSS, master + workers", mib(nginxRSS(c.stateDir)), ""})

	files, size, err := configSize(c.stateDir)
	if err != nil {
		return err
	}
	rows = append(rows, row{"rendered configuration", fmt.Sprintf("%s in %d files", mib(size), files), ""})
	testTime, testRSS, err := nginxTest(ctx, c.stateDir, o.plane)
	if err != nil {
		return err
	}
	rows = append(rows, row{"nginx -t (time, peak RSS)", fmt.Sprintf("%s, %s", testTime.Round(10*time.Millisecond), mib(testRSS)), ""})
	rows = append(rows, row{"nginx reloads (start included)", fmt.Sprint(c.metric("causeway_nginx_reloads_total")), ""})

	if o.keep {
		kept, err := os.MkdirTemp("", "causeway-scale-state-")
		if err == nil {
			exec.Command("cp", "-a", c.stateDir+"/.", kept).Run()
			fmt.Fprintln(os.Stderr, "state directory copied to", kept)
		}
	}
	printTable(n, o.shapes, o.annotations, o.plane.nginx(), rows)
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

func printTable(n, shapes, annots int, plane string, rows []row) {
	host, _ := os.Hostname()
	fmt.Printf("Causeway at scale: %d Ingresses, Services and EndpointSlices; %d layouts, %s; data plane %s (%s, %s, %d CPUs)\n\n", n, shapes, annotationsNote(annots), filepath.Base(plane), time.Now().Format(time.DateOnly), host, numCPU())
	fmt.Println("| measurement | result | target |")
	fmt.Println("|---|---|---|")
	for _, r := range rows {
		fmt.Printf("| %s | %s | %s |\n", r.what, r.value, r.target)
	}
}

func numCPU() int {
	data, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(data), "processor\t:")
}
