package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"

	extdnsv1 "github.com/causeway/causeway/internal/apis/externaldns/v1"
)

// TestExternalDNSEndpoints: with --enable-external-dns the leader, as
// deploy/'s ServiceAccount with the chart's extra rule, writes the
// DNSEndpoint (deploy/crds) a VirtualServer asks for: records of its host
// pointing at the published addresses, controlled by it, rewritten when
// the request changes.
func TestExternalDNSEndpoints(t *testing.T) {
	t.Parallel()
	kubectl := tool(t, "kubectl", "KUBECTL", "make kube-apiserver")
	installCRDs(t, kubectl)
	grantWrites(t, "externaldns.nginx.org", "dnsendpoints")
	ns := newNamespace(t)
	createService(t, ns, "tea", startBackend(t, "tea"))
	startController(t, controllerConfig{Namespace: ns, Args: []string{"--enable-external-dns", "--publish-address", "192.0.2.10,lb.example.net"}})

	apply := func(ttl int) {
		t.Helper()
		m := vsYAML(ns, "cafe", "causeway", "cafe.example.com", fmt.Sprintf(`  externalDNS:
    enable: true
    recordTTL: %d
    labels: {zone: public}
  routes:
  - path: /
    action:
      pass: tea
`, ttl))
		if out, ok := kubectlApply(t, kubectl, m); !ok {
			t.Fatalf("kubectl apply:\n%s\n%s", out, m)
		}
	}
	dyn, err := dynamic.NewForConfig(e2e.env.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	records := func(ttl int) error {
		u, err := dyn.Resource(extdnsv1.DNSEndpoints).Namespace(ns).Get(t.Context(), "cafe", metav1.GetOptions{})
		if err != nil {
			return err
		}
		var dep extdnsv1.DNSEndpoint
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &dep); err != nil {
			return err
		}
		var got []string
		for _, e := range dep.Spec.Endpoints {
			if e.RecordTTL != extdnsv1.TTL(ttl) || e.Labels["zone"] != "public" {
				return fmt.Errorf("record %+v, want TTL %d and the label", e, ttl)
			}
			got = append(got, e.DNSName+" "+e.RecordType+" "+strings.Join(e.Targets, ","))
		}
		if want := []string{"cafe.example.com A 192.0.2.10", "cafe.example.com CNAME lb.example.net"}; !slices.Equal(got, want) {
			return fmt.Errorf("records %q, want %q", got, want)
		}
		if o := dep.OwnerReferences; len(o) != 1 || o[0].Kind != "VirtualServer" || o[0].Name != "cafe" || o[0].Controller == nil || !*o[0].Controller {
			return fmt.Errorf("owners %+v", o)
		}
		return nil
	}
	apply(60)
	eventually(t, waitFor, func() error { return records(60) })
	apply(300)
	eventually(t, waitFor, func() error { return records(300) })
	eventually(t, waitFor, func() error {
		reasons, err := vsEventReasons(t, ns, "cafe", `DNSEndpoint "cafe"`)
		if err != nil || !slices.Contains(reasons, "CreateDNSEndpoint") || !slices.Contains(reasons, "UpdateDNSEndpoint") {
			return fmt.Errorf("Events on the VirtualServer: %v (%v)", reasons, err)
		}
		return nil
	})
}
