package webhookcert

import (
	"net/netip"
	"slices"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func serviceHook(name, svc, ns string) admissionv1.ValidatingWebhook {
	return admissionv1.ValidatingWebhook{Name: name, ClientConfig: admissionv1.WebhookClientConfig{
		Service: &admissionv1.ServiceReference{Name: svc, Namespace: ns},
	}}
}

func urlHook(name, url string) admissionv1.ValidatingWebhook {
	return admissionv1.ValidatingWebhook{Name: name, ClientConfig: admissionv1.WebhookClientConfig{URL: &url}}
}

func configuration(name string, hooks ...admissionv1.ValidatingWebhook) *admissionv1.ValidatingWebhookConfiguration {
	return &admissionv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}, Webhooks: hooks}
}

func addrs(s ...string) []netip.Addr {
	var out []netip.Addr
	for _, a := range s {
		out = append(out, netip.MustParseAddr(a))
	}
	return out
}

func TestNamesFor(t *testing.T) {
	for _, tc := range []struct {
		name    string
		hooks   []admissionv1.ValidatingWebhook
		hosts   []string
		dns     []string
		ips     []netip.Addr
		skipped int
	}{
		{
			name:  "service",
			hooks: []admissionv1.ValidatingWebhook{serviceHook("a", "causeway-webhook", "ingress")},
			dns: []string{"causeway-webhook", "causeway-webhook.ingress", "causeway-webhook.ingress.svc",
				"causeway-webhook.ingress.svc.cluster.local"},
		},
		{
			name: "urls: a name with a port, an IPv4 address, an IPv6 address",
			hooks: []admissionv1.ValidatingWebhook{
				urlHook("a", "https://webhook.example.com:8443/validate"),
				urlHook("b", "https://10.0.0.7:8443/validate"),
				urlHook("c", "https://[fd00::7]/validate"),
			},
			dns: []string{"webhook.example.com"},
			ips: addrs("10.0.0.7", "fd00::7"),
		},
		{
			name: "hosts merged, de-duplicated and sorted",
			hooks: []admissionv1.ValidatingWebhook{
				serviceHook("a", "wh", "ns"),
				serviceHook("b", "wh", "ns"), // the same service twice
				urlHook("c", "https://WH.ns.svc/x"),
				urlHook("d", "https://127.0.0.1/x"),
			},
			hosts: []string{"127.0.0.1", "::1", "[::2]", "localhost", "wh", " z.example ", "::ffff:10.1.2.3"},
			dns:   []string{"localhost", "wh", "wh.ns", "wh.ns.svc", "wh.ns.svc.cluster.local", "z.example"},
			ips:   addrs("10.1.2.3", "127.0.0.1", "::1", "::2"),
		},
		{
			name:    "a url with no host is skipped",
			hooks:   []admissionv1.ValidatingWebhook{urlHook("a", "/relative"), urlHook("b", "://bad")},
			hosts:   []string{"x"},
			dns:     []string{"x"},
			skipped: 2,
		},
		{
			name: "no webhooks, no hosts",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, skipped := namesFor(configuration("c", tc.hooks...), tc.hosts)
			if !slices.Equal(got.DNS, tc.dns) {
				t.Errorf("DNS names: got %q, want %q", got.DNS, tc.dns)
			}
			if !slices.Equal(got.IPs, tc.ips) {
				t.Errorf("IPs: got %v, want %v", got.IPs, tc.ips)
			}
			if len(skipped) != tc.skipped {
				t.Errorf("skipped %q, want %d", skipped, tc.skipped)
			}
			if got.empty() != (len(tc.dns)+len(tc.ips) == 0) {
				t.Errorf("empty() = %v", got.empty())
			}
		})
	}
}

func TestNamesForWithoutConfiguration(t *testing.T) {
	got, _ := namesFor(nil, []string{"b", "a", "192.0.2.1"})
	want := nameSet{DNS: []string{"a", "b"}, IPs: addrs("192.0.2.1")}
	if !got.equal(want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
