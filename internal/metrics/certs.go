package metrics

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// ServedCertificate is one host presenting the certificate of a Secret.
type ServedCertificate struct {
	// Host is the server name; "_" for the default certificate, as
	// ingress-nginx names its catch-all server.
	Host string
	// Namespace and Name locate the Secret.
	Namespace, Name string
	// PEM is the Secret's bundle; its first CERTIFICATE block is the
	// certificate presented.
	PEM []byte
}

// certLabels are ingress-nginx's labels for ssl_expire_time_seconds;
// ssl_certificate_info adds certInfoLabels.
var (
	certLabels     = []string{"namespace", "class", "host", "secret_name", "identifier"}
	certInfoLabels = append(append([]string(nil), certLabels...),
		"issuer_organization", "issuer_common_name", "serial_number", "public_key_algorithm")
)

// Certificates reports the certificates that the live configuration
// presents. The set is replaced whole on every Set, so the series of a
// certificate or host no longer served disappear with it.
type Certificates struct {
	class  string
	errors prometheus.Counter
	log    *slog.Logger
	expire *prometheus.Desc
	info   *prometheus.Desc

	mu      sync.Mutex
	served  []servedCert
	parsed  map[string]parsedCert // by namespace/name
	leading func() bool
}

type servedCert struct {
	host, namespace, name string
	cert                  *x509.Certificate
}

// parsedCert caches a Secret's parse: only a changed bundle is parsed again.
type parsedCert struct {
	pem  []byte
	cert *x509.Certificate
}

func newCertificates(id Identity, errs prometheus.Counter, log *slog.Logger) *Certificates {
	return &Certificates{
		class:  id.Class,
		errors: errs,
		log:    log,
		expire: prometheus.NewDesc(CompatPrefix+"ssl_expire_time_seconds",
			"Unix time at which the certificate a host presents expires. Alert on it with e.g. nginx_ingress_controller_ssl_expire_time_seconds < time() + 10*24*3600.",
			certLabels, nil),
		info: prometheus.NewDesc(CompatPrefix+"ssl_certificate_info",
			"Always 1; the labels describe the certificate a host presents.",
			certInfoLabels, nil),
		parsed: map[string]parsedCert{},
	}
}

// SetLeader makes ssl_expire_time_seconds appear only while leading says
// this replica leads, as in ingress-nginx, so that an expiry alert fires
// once and not once per replica. Without it every replica reports it.
func (c *Certificates) SetLeader(leading func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.leading = leading
}

// Set replaces the served certificates. A bundle that does not parse is
// logged and counted, and its hosts have no series.
func (c *Certificates) Set(served []ServedCertificate) {
	c.mu.Lock()
	defer c.mu.Unlock()
	parsed := make(map[string]parsedCert, len(c.parsed))
	out := make([]servedCert, 0, len(served))
	for _, s := range served {
		key := s.Namespace + "/" + s.Name
		p, ok := parsed[key]
		if !ok {
			p, ok = c.parsed[key]
			if !ok || !bytes.Equal(p.pem, s.PEM) {
				cert, err := leafCertificate(s.PEM)
				if err != nil {
					c.errors.Inc()
					c.log.Error("certificate metrics: cannot read a served certificate", "secret", key, "host", s.Host, "err", err)
				}
				p = parsedCert{pem: s.PEM, cert: cert}
			}
			parsed[key] = p
		}
		if p.cert != nil {
			out = append(out, servedCert{host: s.Host, namespace: s.Namespace, name: s.Name, cert: p.cert})
		}
	}
	c.served, c.parsed = out, parsed
}

// leafCertificate is the first certificate in a PEM bundle.
func leafCertificate(bundle []byte) (*x509.Certificate, error) {
	for rest := bundle; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return nil, errors.New("no CERTIFICATE block")
		}
		if block.Type == "CERTIFICATE" {
			cert, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("parse certificate: %w", err)
			}
			return cert, nil
		}
	}
}

// certIdentifier is ingress-nginx's identifier label: the issuer's
// serialNumber attribute (usually empty) and the certificate's serial.
func certIdentifier(cert *x509.Certificate) string {
	return cert.Issuer.SerialNumber + "-" + cert.SerialNumber.String()
}

// Describe implements prometheus.Collector.
func (c *Certificates) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.expire
	ch <- c.info
}

// Collect implements prometheus.Collector.
func (c *Certificates) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	served, leading := c.served, c.leading
	c.mu.Unlock()
	withExpiry := leading == nil || leading()
	for _, s := range served {
		id := certIdentifier(s.cert)
		if withExpiry {
			c.emit(ch, c.expire, float64(s.cert.NotAfter.Unix()), s.namespace, c.class, s.host, s.name, id)
		}
		org := ""
		if len(s.cert.Issuer.Organization) > 0 {
			org = s.cert.Issuer.Organization[0]
		}
		c.emit(ch, c.info, 1, s.namespace, c.class, s.host, s.name, id,
			org, s.cert.Issuer.CommonName, s.cert.SerialNumber.String(), s.cert.PublicKeyAlgorithm.String())
	}
}

// emit sends one gauge. Label values come from certificates and may be
// invalid UTF-8: such a series is left out, logged and counted.
func (c *Certificates) emit(ch chan<- prometheus.Metric, desc *prometheus.Desc, v float64, labels ...string) {
	m, err := prometheus.NewConstMetric(desc, prometheus.GaugeValue, v, labels...)
	if err != nil {
		c.errors.Inc()
		c.log.Error("certificate metrics: cannot report a certificate", "secret", labels[0]+"/"+labels[3], "host", labels[2], "err", err)
		return
	}
	ch <- m
}
