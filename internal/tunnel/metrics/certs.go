package metrics

import (
	"crypto/x509"

	"github.com/prometheus/client_golang/prometheus"
)

// CertMetrics observe a certificate obtained through
// CertificateSigningRequests. Their fields satisfy the Histogram and
// Counter interfaces of client-go's certificate manager.
type CertMetrics struct {
	// Rotations observes, at each rotation, how long the replaced
	// certificate had been valid.
	Rotations prometheus.Histogram
	// RenewFailures counts certificate requests that failed.
	RenewFailures prometheus.Counter
}

// NewCertMetrics creates the collectors for subsystem ("server" or
// "agent") and registers them on reg.
func NewCertMetrics(reg prometheus.Registerer, subsystem string) *CertMetrics {
	m := &CertMetrics{
		Rotations: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "causeway_tunnel", Subsystem: subsystem, Name: "certificate_rotation_age_seconds",
			Help:    "Age of a CSR-issued certificate when it was replaced by a new one.",
			Buckets: prometheus.ExponentialBuckets(10, 4, 10),
		}),
		RenewFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "causeway_tunnel", Subsystem: subsystem, Name: "certificate_renewal_failures_total",
			Help: "Certificate signing requests that failed or were not issued.",
		}),
	}
	reg.MustRegister(m.Rotations, m.RenewFailures)
	return m
}

// RegisterCertExpiry registers a gauge of the expiry of the certificate
// leaf returns (nil: none held yet), so alerts can fire before a
// certificate that fails to renew runs out.
func RegisterCertExpiry(reg prometheus.Registerer, subsystem string, leaf func() *x509.Certificate) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: "causeway_tunnel", Subsystem: subsystem, Name: "certificate_expiration_timestamp_seconds",
		Help: "Expiry (Unix time) of the certificate in use; 0 while none is held.",
	}, func() float64 {
		if c := leaf(); c != nil {
			return float64(c.NotAfter.Unix())
		}
		return 0
	}))
}
