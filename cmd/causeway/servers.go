package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/causeway/causeway/internal/metrics"
	"github.com/causeway/causeway/internal/version"
)

// restConfig is the configuration of the API server that --kubeconfig
// (or the in-cluster configuration) names, or --apiserver-host with
// --certificate-authority.
func (f *controllerFlags) restConfig() (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags(f.apiserverHost, f.kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client config: %w", err)
	}
	if f.apiserverHost != "" && f.rootCAFile != "" {
		cfg.TLSClientConfig.CAFile, cfg.TLSClientConfig.CAData = f.rootCAFile, nil
	}
	cfg.UserAgent = "causeway/" + version.Version
	return cfg, nil
}

// kubeClient is a client of the API server restConfig names, and that
// configuration, for other clients.
func (f *controllerFlags) kubeClient() (kubernetes.Interface, *rest.Config, error) {
	cfg, err := f.restConfig()
	if err != nil {
		return nil, nil, err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("kubernetes client: %w", err)
	}
	return client, cfg, nil
}

func metricsHandler(m *metrics.Metrics) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{}))
	return mux
}

// statusServers serve /healthz and /readyz (health) on --health-port and
// /metrics on --metrics-port; on one server when the two ports are the
// same, as ingress-nginx has them (--healthz-port); and, with --profiling,
// Go's profiler on --profiler-address and --profiler-port.
func (f *controllerFlags) statusServers(health, metrics http.Handler) []*http.Server {
	server := func(port int, h http.Handler) *http.Server {
		return &http.Server{Addr: net.JoinHostPort(f.healthzHost, strconv.Itoa(port)), Handler: h, ReadHeaderTimeout: 5 * time.Second}
	}
	var servers []*http.Server
	if f.healthPort == f.metricsPort {
		mux := http.NewServeMux()
		mux.Handle("/metrics", metrics)
		mux.Handle("/", health)
		servers = []*http.Server{server(f.healthPort, mux)}
	} else {
		servers = []*http.Server{server(f.healthPort, health), server(f.metricsPort, metrics)}
	}
	if f.profiling {
		servers = append(servers, &http.Server{Addr: net.JoinHostPort(f.profilerAddress, strconv.Itoa(f.profilerPort)),
			Handler: profiler(), ReadHeaderTimeout: 5 * time.Second})
	}
	return servers
}

// profiler serves Go's runtime profiles under /debug/pprof/, as
// ingress-nginx's --profiling does, on a mux of its own (importing
// net/http/pprof registers nothing the other servers use: they have their
// own muxes too).
func profiler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}
