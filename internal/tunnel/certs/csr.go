package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"time"

	"github.com/go-logr/logr"
	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/certificate"
	"k8s.io/klog/v2"
)

// Signers the tunnel requests certificates from by default.
const (
	// AgentSignerName signs agent client certificates. Its only permitted
	// subject is the node identity the server authorizes (CN
	// system:node:<name>, O system:nodes), and kube-controller-manager's
	// signer for it refuses anything else.
	AgentSignerName = certificatesv1.KubeAPIServerClientKubeletSignerName
	// ServingSignerName signs tunnel server certificates. It is a signer
	// of its own rather than kubernetes.io/kubelet-serving, so that agents
	// trust a CA dedicated to the tunnel and no kubelet certificate can
	// pose as a tunnel server (see docs/tunnel.md).
	ServingSignerName = "causeway.io/tunnel-serving"
)

// Key usages requested for the ECDSA keys the CSR source generates (no key
// encipherment: ECDSA keys cannot encipher).
var (
	ClientUsages  = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
	ServingUsages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}
)

// AgentTemplate is the certificate request of the agent on node: the
// identity the server's authorizer checks against the registration.
func AgentTemplate(node string) *x509.CertificateRequest {
	return &x509.CertificateRequest{Subject: pkix.Name{CommonName: "system:node:" + node, Organization: []string{"system:nodes"}}}
}

// ServingTemplate is the certificate request of a server replica: cn
// names it, and the DNS names and IPs are those agents dial.
func ServingTemplate(cn string, dnsNames []string, ips []net.IP) *x509.CertificateRequest {
	return &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn}, DNSNames: dnsNames, IPAddresses: ips}
}

// CSRConfig configures a CSRSource.
type CSRConfig struct {
	// Client creates and watches the CertificateSigningRequests. It needs
	// create, get, list and watch on certificatesigningrequests.
	Client kubernetes.Interface
	// Dir holds the private keys and issued certificates. It is created
	// with mode 0700; each pair is one 0600 file, and <Name>-current.pem
	// links to the pair in use, so a restart reuses a valid certificate.
	Dir  string
	Name string
	// SignerName is spec.signerName of the requests.
	SignerName string
	// Template is the subject and SANs requested; see AgentTemplate and
	// ServingTemplate.
	Template *x509.CertificateRequest
	// Usages are the key usages requested; see ClientUsages and
	// ServingUsages.
	Usages []certificatesv1.KeyUsage
	// RequestedLifetime, when positive, sets spec.expirationSeconds. The
	// API requires at least 10 minutes, and signers may ignore it.
	RequestedLifetime time.Duration
	// Rotations observes how long each certificate was used before being
	// replaced; RenewFailures counts failed requests. Both are optional.
	Rotations     certificate.Histogram
	RenewFailures certificate.Counter
	Logger        *slog.Logger
}

// CSRSource is a Source whose certificate comes from the
// certificates.k8s.io API. The key is generated locally and never leaves
// Dir. client-go's certificate manager (the kubelet's) does the work: it
// requests a certificate when none is valid, waits for it to be approved
// and issued, and requests the next one at 70–90% of the current one's
// lifetime (jittered, so replicas and nodes do not renew in lockstep). New
// handshakes then use the new certificate; links already up keep theirs.
type CSRSource struct {
	mgr    certificate.Manager
	signer string
	log    *slog.Logger
}

// StartCSRSource starts requesting and renewing certificates until ctx
// ends. It returns at once; Wait blocks until the first one is issued.
func StartCSRSource(ctx context.Context, cfg CSRConfig) (*CSRSource, error) {
	switch {
	case cfg.Client == nil:
		return nil, errors.New("CSR source: a Kubernetes client is required")
	case cfg.Dir == "" || cfg.Name == "":
		return nil, errors.New("CSR source: a certificate directory and file name are required")
	case cfg.SignerName == "":
		return nil, errors.New("CSR source: a signer name is required")
	case cfg.Template == nil || len(cfg.Usages) == 0:
		return nil, errors.New("CSR source: a request template and usages are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	log := cfg.Logger.With("signer", cfg.SignerName, "subject", cfg.Template.Subject.String())
	// The keys live here: nobody but the owner may list or read them.
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("create certificate directory: %w", err)
	}
	if err := os.Chmod(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("restrict certificate directory: %w", err)
	}
	// client-go logs through logr; bridge it into our slog handler for this
	// manager only, instead of setting klog's global logger.
	lr := logr.FromSlogHandler(log.Handler())
	fs, err := certificate.NewFileStoreWithLogger(lr.V(1), cfg.Name, cfg.Dir, cfg.Dir, "", "")
	if err != nil {
		return nil, fmt.Errorf("certificate store %s: %w", cfg.Dir, err)
	}
	mctx := klog.NewContext(ctx, lr)
	mc := &certificate.Config{
		ClientsetFn:             func(*tls.Certificate) (kubernetes.Interface, error) { return cfg.Client, nil },
		Template:                cfg.Template,
		SignerName:              cfg.SignerName,
		Usages:                  cfg.Usages,
		CertificateStore:        &matchingStore{FileStore: fs, tmpl: cfg.Template, log: log},
		CertificateRotation:     cfg.Rotations,
		CertificateRenewFailure: cfg.RenewFailures,
		Name:                    cfg.Name,
		Ctx:                     &mctx,
	}
	if cfg.RequestedLifetime > 0 {
		mc.RequestedCertificateLifetime = &cfg.RequestedLifetime
	}
	mgr, err := certificate.NewManager(mc)
	if err != nil {
		return nil, fmt.Errorf("certificate manager: %w", err)
	}
	mgr.Start()
	return &CSRSource{mgr: mgr, signer: cfg.SignerName, log: log}, nil
}

// Get implements Source. It fails while no valid certificate is held:
// before the first one is issued, or after one expired unrenewed.
func (s *CSRSource) Get() (*tls.Certificate, error) {
	if c := s.mgr.Current(); c != nil {
		return c, nil
	}
	return nil, fmt.Errorf("no valid certificate from signer %s yet (is the CSR approved and issued?)", s.signer)
}

// Leaf is the certificate in use, or nil.
func (s *CSRSource) Leaf() *x509.Certificate {
	if c := s.mgr.Current(); c != nil {
		return c.Leaf
	}
	return nil
}

// Wait blocks until a certificate is held or ctx ends.
func (s *CSRSource) Wait(ctx context.Context) error {
	if s.mgr.Current() != nil {
		return nil
	}
	s.log.Info("waiting for the certificate signing request to be approved and issued")
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for s.mgr.Current() == nil {
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for certificate from signer %s: %w", s.signer, context.Cause(ctx))
		case <-tick.C:
		}
	}
	leaf := s.Leaf()
	s.log.Info("certificate issued", "serial", leaf.SerialNumber.String(), "notAfter", leaf.NotAfter)
	return nil
}

// Stop stops renewing; Get keeps returning the last certificate.
func (s *CSRSource) Stop() { s.mgr.Stop() }

// matchingStore hides a stored pair that is expired or was issued for
// another identity (say, the cert directory of a renamed node), so that
// the manager requests a fresh certificate instead of presenting a stale
// one until its first rotation.
type matchingStore struct {
	certificate.FileStore
	tmpl *x509.CertificateRequest
	log  *slog.Logger
}

func (m *matchingStore) Current() (*tls.Certificate, error) {
	c, err := m.FileStore.Current()
	if err != nil {
		return nil, err
	}
	why := ""
	switch {
	case c.Leaf == nil:
		why = "unparsed"
	case time.Now().After(c.Leaf.NotAfter):
		why = "expired " + c.Leaf.NotAfter.String()
	case !satisfies(c.Leaf, m.tmpl):
		why = "issued for " + c.Leaf.Subject.String()
	default:
		return c, nil
	}
	m.log.Info("not using the stored certificate; requesting a new one", "reason", why)
	e := certificate.NoCertKeyError("stored certificate " + why)
	return nil, &e
}

// satisfies reports whether cert carries the subject and every SAN of tmpl.
func satisfies(cert *x509.Certificate, tmpl *x509.CertificateRequest) bool {
	if cert.Subject.CommonName != tmpl.Subject.CommonName {
		return false
	}
	for _, o := range tmpl.Subject.Organization {
		if !slices.Contains(cert.Subject.Organization, o) {
			return false
		}
	}
	for _, d := range tmpl.DNSNames {
		if !slices.Contains(cert.DNSNames, d) {
			return false
		}
	}
	for _, ip := range tmpl.IPAddresses {
		if !slices.ContainsFunc(cert.IPAddresses, ip.Equal) {
			return false
		}
	}
	return true
}
