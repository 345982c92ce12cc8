package main

import (
	"fmt"
	"net"
	"net/http"
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
// same, as ingress-nginx has them (--healthz-port).
func (f *controllerFlags) statusServers(health, metrics http.Handler) []*http.Server {
	server := func(port int, h http.Handler) *http.Server {
		return &http.Server{Addr: net.JoinHostPort(f.healthzHost, strconv.Itoa(port)), Handler: h, ReadHeaderTimeout: 5 * time.Second}
	}
	if f.healthPort == f.metricsPort {
		mux := http.NewServeMux()
		mux.Handle("/metrics", metrics)
		mux.Handle("/", health)
		return []*http.Server{server(f.healthPort, mux)}
	}
	return []*http.Server{server(f.healthPort, health), server(f.metricsPort, metrics)}
}
