package main

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/causeway/causeway/internal/tunnel/certs"
	"github.com/causeway/causeway/internal/tunnel/leases"
	"github.com/causeway/causeway/internal/tunnel/metrics"
)

// certFlags choose where a side's key pair comes from: the files of
// --tls-cert-file and --tls-private-key-file, or, with --csr, certificates
// requested and renewed through certificates.k8s.io/v1
// CertificateSigningRequests.
type certFlags struct {
	side                string // "server" or "agent"
	certFile, keyFile   string
	csr                 bool
	bootstrapKubeconfig string
	certDir             string
	signerName          string
	lifetime            time.Duration
	dnsNames, ips       []string // server only
}

func (f *certFlags) add(c *cobra.Command, side string) {
	f.side = side
	signer := certs.AgentSignerName
	if side == "server" {
		signer = certs.ServingSignerName
	}
	fs := c.Flags()
	fs.StringVar(&f.certFile, "tls-cert-file", "", "Certificate file (reloaded when it changes); or use --csr.")
	fs.StringVar(&f.keyFile, "tls-private-key-file", "", "Private key file of --tls-cert-file.")
	fs.BoolVar(&f.csr, "csr", false, "Obtain the certificate through a CertificateSigningRequest and renew it before it expires, instead of --tls-cert-file.")
	fs.StringVar(&f.bootstrapKubeconfig, "bootstrap-kubeconfig", "", "With --csr: kubeconfig used to create and watch CSRs; empty means in-cluster config.")
	fs.StringVar(&f.certDir, "cert-dir", "/var/lib/causeway/tunnel-"+side, "With --csr: directory (0700) of the generated keys and issued certificates.")
	fs.StringVar(&f.signerName, "csr-signer-name", signer, "With --csr: spec.signerName of the requests.")
	fs.DurationVar(&f.lifetime, "csr-requested-lifetime", 0, "With --csr: lifetime to ask for (spec.expirationSeconds, at least 10m); 0 leaves it to the signer.")
	if side == "server" {
		fs.StringSliceVar(&f.dnsNames, "csr-dns-name", nil, "With --csr: DNS name agents dial, put in the serving certificate (repeatable).")
		fs.StringSliceVar(&f.ips, "csr-ip-address", nil, "With --csr: IP address agents dial, put in the serving certificate (repeatable).")
	}
}

// serverTemplate is the serving certificate request of replica serverID.
func (f *certFlags) serverTemplate(serverID string) (*x509.CertificateRequest, error) {
	var ips []net.IP
	for _, s := range f.ips {
		ip := net.ParseIP(s)
		if ip == nil {
			return nil, fmt.Errorf("--csr-ip-address %q: not an IP address", s)
		}
		ips = append(ips, ip)
	}
	if len(ips)+len(f.dnsNames) == 0 {
		return nil, errors.New("--csr needs --csr-dns-name or --csr-ip-address: the names agents verify")
	}
	return certs.ServingTemplate("causeway-tunnel-server:"+serverID, f.dnsNames, ips), nil
}

// source returns the key pair to serve or present. For --csr it starts a
// CSR source for identity (the server ID or the node name) that renews
// until ctx ends; wait then blocks until the first certificate is issued
// or ctx ends (for files it returns at once), so callers can answer health
// probes while an administrator approves the request.
func (f *certFlags) source(ctx context.Context, log *slog.Logger, reg prometheus.Registerer, identity string) (src certs.Source, wait func(context.Context) error, err error) {
	noWait := func(context.Context) error { return nil }
	if !f.csr {
		if f.certFile == "" || f.keyFile == "" {
			return nil, nil, errors.New("--tls-cert-file and --tls-private-key-file are required, unless --csr is set")
		}
		kp, err := certs.NewKeyPair(f.certFile, f.keyFile)
		return kp, noWait, err
	}
	if f.certFile != "" || f.keyFile != "" {
		return nil, nil, errors.New("--csr and --tls-cert-file/--tls-private-key-file exclude each other")
	}
	if f.lifetime != 0 && f.lifetime < 10*time.Minute {
		return nil, nil, fmt.Errorf("--csr-requested-lifetime %s: the API requires at least 10m", f.lifetime)
	}
	tmpl, usages := certs.AgentTemplate(identity), certs.ClientUsages
	if f.side == "server" {
		if tmpl, err = f.serverTemplate(identity); err != nil {
			return nil, nil, err
		}
		usages = certs.ServingUsages
	}
	rc, err := clientcmd.BuildConfigFromFlags("", f.bootstrapKubeconfig)
	if err != nil {
		return nil, nil, fmt.Errorf("--bootstrap-kubeconfig: %w", err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, nil, fmt.Errorf("kubernetes client for CSRs: %w", err)
	}
	m := metrics.NewCertMetrics(reg, f.side)
	s, err := certs.StartCSRSource(ctx, certs.CSRConfig{
		Client: cs, Dir: f.certDir, Name: "tunnel-" + f.side, SignerName: f.signerName,
		Template: tmpl, Usages: usages, RequestedLifetime: f.lifetime,
		Rotations: m.Rotations, RenewFailures: m.RenewFailures, Logger: log.With("component", "csr"),
	})
	if err != nil {
		return nil, nil, err
	}
	metrics.RegisterCertExpiry(reg, f.side, s.Leaf)
	wait = func(ctx context.Context) error {
		if err := s.Wait(ctx); err != nil && ctx.Err() == nil {
			return err
		}
		return nil // shutting down: not a failure
	}
	return s, wait, nil
}

// leaseFlags make a server replica count its peers from labelled
// coordination.k8s.io Leases instead of trusting --server-count.
type leaseFlags struct {
	enabled         bool
	namespace       string
	label           string
	duration, renew time.Duration
}

func (f *leaseFlags) add(c *cobra.Command) {
	fs := c.Flags()
	fs.BoolVar(&f.enabled, "server-count-from-leases", false, "Hold a Lease and set the server count to the number of unexpired Leases with --lease-label (needs --kubeconfig or in-cluster config).")
	fs.StringVar(&f.namespace, "lease-namespace", "causeway-system", "Namespace of the replicas' Leases.")
	fs.StringVar(&f.label, "lease-label", "causeway.io/tunnel-server=causeway-tunnel", "Label (key=value,...) of this replica's Lease; Leases with it are counted.")
	fs.DurationVar(&f.duration, "lease-duration", 30*time.Second, "How long a replica's Lease stays valid after its last renewal.")
	fs.DurationVar(&f.renew, "lease-renew-interval", 10*time.Second, "How often the Lease is renewed and the replicas recounted.")
}

// start runs the Lease loop in the background when enabled; set receives
// every new count, and the returned channel closes once the Lease is
// released after ctx ends.
func (f *leaseFlags) start(ctx context.Context, log *slog.Logger, kubeconfig, serverID string, set func(int)) (<-chan struct{}, error) {
	done := make(chan struct{})
	if !f.enabled {
		close(done)
		return done, nil
	}
	sel, err := labels.ConvertSelectorToLabelsMap(f.label)
	if err != nil || len(sel) == 0 {
		return nil, fmt.Errorf("--lease-label %q: want key=value[,key=value]: %v", f.label, err)
	}
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig for leases: %w", err)
	}
	// A hung request must not outlast a renewal.
	rc = rest.CopyConfig(rc)
	rc.Timeout = max(f.renew, time.Second)
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client for leases: %w", err)
	}
	cfg := leases.Config{Client: cs.CoordinationV1(), Namespace: f.namespace, Name: "causeway-tunnel-" + serverID,
		Holder: serverID, Labels: sel, Duration: f.duration, RenewInterval: f.renew, OnCount: set,
		Logger: log.With("component", "leases")}
	go func() {
		defer close(done)
		if err := leases.Run(ctx, cfg); err != nil {
			log.Error("server leases", "err", err)
		}
	}()
	return done, nil
}
