// Command peer runs ingress-nginx's own controller, driving Debian's
// nginx, on the objects bench/scale creates, and measures what
// bench/scale measures for Causeway, for a side-by-side table (issue 35
// §5). It is a benchmark outside `make test`: nothing else depends on it,
// and the controller it runs is built outside the repository, in
// -root, by bench/peer/setup.sh (see bench/PEERS.md).
//
//	go run ./hack/testenv --kubeconfig /var/cache/causeway-peer/admin.kubeconfig \
//	    --apiserver-arg=--service-cluster-ip-range=10.0.0.0/16 &
//	go run ./bench/scale -kubeconfig /var/cache/causeway-peer/admin.kubeconfig -sizes 100,1000 ...
//	go run ./bench/peer -kubeconfig /var/cache/causeway-peer/admin.kubeconfig -sizes 100,1000
//
// The objects are bench/scale's, in namespace bench-<n> (IngressClass
// causeway): ingress-nginx serves them unchanged through its
// --controller-class and --ingress-class flags. bench/scale's echo
// backend is gone once it exits, so this tool starts its own (in a
// network namespace of its own, as bench/scale does) and points every
// EndpointSlice of the set at it before the controller starts, untimed.
//
// ingress-nginx writes /etc/nginx/nginx.conf and /tmp/nginx: it runs in
// a mount namespace of its own (unshare -m) where -root's etc/nginx,
// etc/ingress-controller and tmp/nginx are bind-mounted over those
// paths, so nothing of the host's nginx changes. Needs root.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/causeway/causeway/test/e2e/netns"
	"github.com/causeway/causeway/test/echo"
)

// options are the flags.
type options struct {
	kubeconfig, root, controller, nginx string
	sizes                               []int
	changes, samples, portOnly          int
	limit, portOnlyLimit                time.Duration
	keepLog                             bool
	// extra are more controller flags (-controller-arg).
	extra stringList
}

// stringList collects a repeatable flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, " ") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	var o options
	flag.StringVar(&o.kubeconfig, "kubeconfig", "", "the API server holding bench/scale's objects (required)")
	flag.StringVar(&o.root, "root", "/var/cache/causeway-peer/root", "ingress-nginx's files laid out as its image has them (bench/peer/setup.sh)")
	flag.StringVar(&o.controller, "controller", "/var/cache/causeway-peer/bin/nginx-ingress-controller", "ingress-nginx's controller binary (bench/peer/setup.sh)")
	flag.StringVar(&o.nginx, "nginx", "/usr/sbin/nginx", "the nginx binary ingress-nginx drives (NGINX_BINARY)")
	sizes := flag.String("sizes", "100,1000", "comma-separated Ingress counts; namespace bench-<n> must hold bench/scale's objects")
	flag.IntVar(&o.changes, "changes", 5, "single-Ingress changes to time (Ingresses 0 to changes-1)")
	flag.IntVar(&o.samples, "endpoint-samples", 20, "single EndpointSlice changes to time")
	flag.DurationVar(&o.limit, "endpoint-limit", 10*time.Second, "give an endpoint change up after this long")
	flag.IntVar(&o.portOnly, "port-only-samples", 3, "bench/scale's own endpoint changes (the port only) to try first, each given up after -port-only-limit")
	flag.DurationVar(&o.portOnlyLimit, "port-only-limit", 5*time.Second, "give a port-only endpoint change up after this long")
	flag.Var(&o.extra, "controller-arg", "one more ingress-nginx controller flag, e.g. -controller-arg=--sync-rate-limit=100 (repeatable)")
	flag.BoolVar(&o.keepLog, "keep-log", false, "keep the controller's log and print its path")
	flag.Parse()
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 2 {
			fmt.Fprintf(os.Stderr, "peer: -sizes %q: want counts such as 100,1000\n", *sizes)
			os.Exit(2)
		}
		o.sizes = append(o.sizes, n)
	}
	if o.kubeconfig == "" || o.changes < 1 || o.samples < 1 {
		fmt.Fprintln(os.Stderr, "peer: -kubeconfig is required; -changes and -endpoint-samples want at least 1")
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "peer:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(20*len(o.sizes))*time.Minute)
	defer cancel()
	cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 500, 500
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ns, err := netns.New()
	if err != nil {
		return err
	}
	defer ns.Close()
	var ports [2]int
	for i := range ports {
		ln, err := ns.Listen(net.JoinHostPort(ns.PeerIP.String(), "0"))
		if err != nil {
			return err
		}
		srv := &http.Server{Handler: echo.Handler("peer", ln.Addr().String()), ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(ln)
		defer srv.Close()
		ports[i] = ln.Addr().(*net.TCPAddr).Port
	}
	b := backend{ip: ns.PeerIP.String(), port: ports[0], other: ports[1]}
	var columns [][]row
	for _, n := range o.sizes {
		rows, err := measure(ctx, o, client, fmt.Sprintf("bench-%d", n), n, b)
		if err != nil {
			return fmt.Errorf("%d Ingresses: %w", n, err)
		}
		columns = append(columns, rows)
	}
	printTable(o, columns)
	return nil
}

// backend is the echo backend: every EndpointSlice points at ip:port;
// the endpoint changes move one to ip:other and back.
type backend struct {
	ip          string
	port, other int
}

func (b backend) addr(port int) string { return net.JoinHostPort(b.ip, strconv.Itoa(port)) }

// row is one line of the table.
type row struct{ what, value string }

func printTable(o options, columns [][]row) {
	fmt.Printf("ingress-nginx (controller v1.11.0 from the Go module proxy, Debian nginx %s) on bench/scale's objects", nginxVersion(o.nginx))
	if len(o.extra) > 0 {
		fmt.Printf(", with %s", o.extra.String())
	}
	fmt.Print("\n\n")
	fmt.Print("| measure |")
	for _, n := range o.sizes {
		fmt.Printf(" %d Ingresses |", n)
	}
	fmt.Print("\n|---|")
	for range o.sizes {
		fmt.Print("---|")
	}
	fmt.Println()
	for k := range columns[0] {
		fmt.Printf("| %s |", columns[0][k].what)
		for _, c := range columns {
			fmt.Printf(" %s |", c[k].value)
		}
		fmt.Println()
	}
}
