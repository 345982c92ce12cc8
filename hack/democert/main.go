// Command democert writes a kubernetes.io/tls Secret manifest holding a
// fresh self-signed certificate for the demo's TLS host.
//
//	go run ./hack/democert -host secure.causeway.test -name secure-tls -out FILE
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/causeway/causeway/test/testcert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

func main() {
	host := flag.String("host", "secure.causeway.test", "DNS name of the certificate")
	name := flag.String("name", "secure-tls", "Secret name")
	ns := flag.String("namespace", "demo", "Secret namespace")
	out := flag.String("out", "", "output file (default stdout)")
	flag.Parse()
	if err := run(*host, *name, *ns, *out); err != nil {
		fmt.Fprintln(os.Stderr, "democert:", err)
		os.Exit(1)
	}
}

func run(host, name, ns, out string) error {
	crt, key, err := testcert.SelfSigned(0, 30*24*time.Hour, host)
	if err != nil {
		return err
	}
	secret := corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Type:       corev1.SecretTypeTLS,
		Data: map[string][]byte{
			corev1.TLSCertKey:       crt,
			corev1.TLSPrivateKeyKey: key,
		},
	}
	data, err := yaml.Marshal(&secret)
	if err != nil {
		return err
	}
	if out == "" {
		_, err = os.Stdout.Write(data)
		return err
	}
	return os.WriteFile(out, data, 0o600)
}
