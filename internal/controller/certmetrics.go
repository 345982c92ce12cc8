package controller

import (
	"github.com/causeway/causeway/internal/metrics"
	"github.com/causeway/causeway/internal/model"
)

// servedCertificates lists, for the certificate metrics, every host that
// presents a certificate from a Secret: its own, or the one
// --default-ssl-certificate names. The default certificate is also listed
// under host "_", ingress-nginx's name for the catch-all server. Hosts
// presenting the self-generated certificate are left out: it renews
// itself and no Secret stands behind it.
func servedCertificates(m *model.Model) []metrics.ServedCertificate {
	secrets := make(map[string]*model.TLSSecret, len(m.Secrets))
	for _, s := range m.Secrets {
		secrets[s.Key()] = s
	}
	var out []metrics.ServedCertificate
	add := func(host, key string) {
		if s := secrets[key]; s != nil {
			out = append(out, metrics.ServedCertificate{Host: host, Namespace: s.Namespace, Name: s.Name, PEM: s.PEM})
		}
	}
	for _, srv := range m.Servers {
		if srv.Host == "" || srv.TLS == nil {
			continue
		}
		key := srv.TLS.Secret
		if key == "" {
			key = m.DefaultCertificate
		}
		add(srv.Host, key)
	}
	add("_", m.DefaultCertificate)
	return out
}
