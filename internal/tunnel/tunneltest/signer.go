package tunneltest

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Signer stands in for the cluster's CSR approver and signer controllers,
// which the test environment does not run (there is no
// kube-controller-manager). It approves or denies pending requests through
// the /approval subresource, then, like a signer controller, signs the
// approved ones with a test CA and writes status.certificate through the
// /status subresource.
type Signer struct {
	// CAs sign requests by spec.signerName; requests for other signers are
	// left alone, as a real signer would.
	CAs map[string]*CA
	// Lifetime of issued certificates; zero means an hour. A short one
	// makes the requester rotate during a test.
	Lifetime time.Duration
	// Approve decides on a pending request that passed the signer's
	// policy: nil approves it, an error denies it with that message. A nil
	// Approve approves every such request.
	Approve func(csr *certificatesv1.CertificateSigningRequest, req *x509.CertificateRequest) error
	// Logf, if set, reports each decision and failure.
	Logf func(format string, args ...any)

	client  kubernetes.Interface
	issued  atomic.Int64
	cancel  context.CancelFunc
	factory informers.SharedInformerFactory
}

// Start watches CertificateSigningRequests with client until ctx ends or
// Stop. It returns once the watch is established.
func (s *Signer) Start(ctx context.Context, client kubernetes.Interface) error {
	s.client = client
	ctx, s.cancel = context.WithCancel(ctx)
	f := informers.NewSharedInformerFactory(client, 0)
	s.factory = f
	inf := f.Certificates().V1().CertificateSigningRequests().Informer()
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.handle(ctx, obj) },
		UpdateFunc: func(_, obj any) { s.handle(ctx, obj) },
	})
	if err != nil {
		return fmt.Errorf("watch CSRs: %w", err)
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return errors.New("watch CSRs: cache did not sync")
	}
	return nil
}

// Stop stops the watch and waits until no handler runs any more, so that
// nothing is logged after a test ends.
func (s *Signer) Stop() {
	s.cancel()
	s.factory.Shutdown()
}

// Issued is the number of certificates signed so far.
func (s *Signer) Issued() int { return int(s.issued.Load()) }

func (s *Signer) logf(format string, args ...any) {
	if s.Logf != nil {
		s.Logf(format, args...)
	}
}

// handle moves one request along: pending → approved or denied (or failed
// when it breaks the signer's policy), approved → issued. A conflict just
// means a newer version is on its way to this handler.
func (s *Signer) handle(ctx context.Context, obj any) {
	csr, ok := obj.(*certificatesv1.CertificateSigningRequest)
	if !ok || len(csr.Status.Certificate) > 0 {
		return
	}
	ca := s.CAs[csr.Spec.SignerName]
	if ca == nil || hasCondition(csr, certificatesv1.CertificateDenied) || hasCondition(csr, certificatesv1.CertificateFailed) {
		return
	}
	req, err := parseRequest(csr.Spec.Request)
	if err == nil {
		err = checkPolicy(csr.Spec.SignerName, req, csr.Spec.Usages)
	}
	if err != nil {
		s.logf("signer: CSR %s fails the %s policy: %v", csr.Name, csr.Spec.SignerName, err)
		s.setCondition(ctx, csr, certificatesv1.CertificateFailed, "SignerValidationFailure", err.Error())
		return
	}
	if !hasCondition(csr, certificatesv1.CertificateApproved) {
		s.decide(ctx, csr, req)
		return
	}
	certPEM, err := s.sign(ca, req, csr.Spec.Usages)
	if err != nil {
		s.logf("signer: sign CSR %s: %v", csr.Name, err)
		return
	}
	csr = csr.DeepCopy()
	csr.Status.Certificate = certPEM
	if _, err := s.client.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{}); err != nil {
		s.logf("signer: write certificate of CSR %s: %v", csr.Name, err)
		return
	}
	s.issued.Add(1)
	s.logf("signer: issued %q for CSR %s (requested by %s)", req.Subject.CommonName, csr.Name, csr.Spec.Username)
}

func (s *Signer) decide(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, req *x509.CertificateRequest) {
	var err error
	if s.Approve != nil {
		err = s.Approve(csr, req)
	}
	csr = csr.DeepCopy()
	cond := certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved,
		Status: corev1.ConditionTrue, Reason: "TestHarnessApproved", Message: "approved by the test harness"}
	if err != nil {
		cond.Type, cond.Reason, cond.Message = certificatesv1.CertificateDenied, "TestHarnessDenied", err.Error()
	}
	csr.Status.Conditions = append(csr.Status.Conditions, cond)
	if _, err := s.client.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
		s.logf("signer: approve CSR %s: %v", csr.Name, err)
		return
	}
	s.logf("signer: CSR %s for %q: %s", csr.Name, req.Subject.CommonName, cond.Type)
}

func (s *Signer) setCondition(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType, reason, msg string) {
	csr = csr.DeepCopy()
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: msg})
	if _, err := s.client.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{}); err != nil {
		s.logf("signer: mark CSR %s %s: %v", csr.Name, t, err)
	}
}

// sign issues the certificate the way kube-controller-manager's signers
// do: subject and SANs from the request, usages from the spec.
func (s *Signer) sign(ca *CA, req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) ([]byte, error) {
	lifetime := s.Lifetime
	if lifetime <= 0 {
		lifetime = time.Hour
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      req.Subject,
		DNSNames:     req.DNSNames,
		IPAddresses:  req.IPAddresses,
		NotBefore:    now.Add(-time.Second),
		NotAfter:     now.Add(lifetime),
	}
	for _, u := range usages {
		switch u {
		case certificatesv1.UsageDigitalSignature:
			tmpl.KeyUsage |= x509.KeyUsageDigitalSignature
		case certificatesv1.UsageKeyEncipherment:
			tmpl.KeyUsage |= x509.KeyUsageKeyEncipherment
		case certificatesv1.UsageClientAuth:
			tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
		case certificatesv1.UsageServerAuth:
			tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, req.PublicKey, ca.Key)
	if err != nil {
		return nil, fmt.Errorf("sign %s: %w", req.Subject.CommonName, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

func parseRequest(data []byte) (*x509.CertificateRequest, error) {
	b, _ := pem.Decode(data)
	if b == nil || b.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("spec.request is not a PEM CERTIFICATE REQUEST")
	}
	req, err := x509.ParseCertificateRequest(b.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parse request: %w", err)
	}
	if err := req.CheckSignature(); err != nil {
		return nil, fmt.Errorf("request signature: %w", err)
	}
	return req, nil
}

// checkPolicy enforces what each signer may issue, as the real signers do:
// kubernetes.io/kube-apiserver-client-kubelet only node client identities;
// causeway.io/tunnel-serving only serving certificates with SANs.
func checkPolicy(signer string, req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
	switch signer {
	case certificatesv1.KubeAPIServerClientKubeletSignerName:
		if !strings.HasPrefix(req.Subject.CommonName, "system:node:") || !slices.Equal(req.Subject.Organization, []string{"system:nodes"}) {
			return fmt.Errorf("subject %q is not a node (CN system:node:<name>, O system:nodes)", req.Subject)
		}
		if len(req.DNSNames)+len(req.IPAddresses)+len(req.EmailAddresses)+len(req.URIs) > 0 {
			return errors.New("node client certificates carry no SANs")
		}
		return checkUsages(usages, certificatesv1.UsageClientAuth)
	case "causeway.io/tunnel-serving": // certs.ServingSignerName; certs' tests import this package
		if len(req.DNSNames)+len(req.IPAddresses) == 0 {
			return errors.New("a serving certificate needs DNS or IP SANs")
		}
		return checkUsages(usages, certificatesv1.UsageServerAuth)
	}
	return nil
}

// checkUsages allows digital signature, key encipherment and exactly the
// one extended usage the signer is for.
func checkUsages(usages []certificatesv1.KeyUsage, ext certificatesv1.KeyUsage) error {
	if !slices.Contains(usages, ext) {
		return fmt.Errorf("usages %v lack %q", usages, ext)
	}
	for _, u := range usages {
		if u != ext && u != certificatesv1.UsageDigitalSignature && u != certificatesv1.UsageKeyEncipherment {
			return fmt.Errorf("usage %q is not allowed", u)
		}
	}
	return nil
}

func hasCondition(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
