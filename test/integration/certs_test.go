package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/causeway/causeway/test/testcert"
)

// tlsSecretYAML returns a kubernetes.io/tls Secret with a self-signed
// certificate whose CN is cn. rsaBits 0 means ECDSA P-256.
func tlsSecretYAML(t *testing.T, ns, name, cn string, rsaBits int) string {
	t.Helper()
	crt, k, err := testcert.SelfSigned(rsaBits, 24*time.Hour, cn)
	if err != nil {
		t.Fatal(err)
	}
	return testcert.SecretYAML(ns, name, crt, k)
}

// tlsIngressYAML is an Ingress serving host over TLS with secret.
func tlsIngressYAML(ns, name, host, secret, service string) string {
	return fmt.Sprintf(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  ingressClassName: causeway
  tls: [{hosts: [%[3]q], secretName: %[4]s}]
  rules:
  - host: %[3]q
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: %[5]s, port: {number: 80}}}}
---
`, ns, name, host, secret, service)
}
