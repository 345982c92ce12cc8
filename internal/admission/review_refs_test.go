package admission

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
	"github.com/causeway/causeway/test/testcert"
)

// TestReviewSeesWhatTheFrontEndsList: a review's context holds every
// object the front-ends list for its objects, so it reports what the full
// build reports: the TLS Secret of an egressMTLS Policy and the Service of
// an externalAuth one (the review once read basicAuth's Secret only), and
// the TLS Secret of a TransportServer.
func TestReviewSeesWhatTheFrontEndsList(t *testing.T) {
	cert, key, err := testcert.SelfSigned(2048, time.Hour, "cafe.test")
	if err != nil {
		t.Fatal(err)
	}
	tlsSecret := func(name string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: name}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{corev1.TLSCertKey: cert, corev1.TLSPrivateKeyKey: key}}
	}
	svc, es := service("ns1", "svc-0")
	auth, authES := service("ns1", "auth")
	opts := testOpts
	opts.GlobalConfiguration = "causeway/gc"
	snap := &source.Snapshot{
		Services:       []*corev1.Service{svc, auth},
		EndpointSlices: []*discoveryv1.EndpointSlice{es, authES},
		Secrets:        []*corev1.Secret{tlsSecret("client"), tlsSecret("ts-tls")},
		Policies: []*nicv1.Policy{
			{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "egress"}, Spec: nicv1.PolicySpec{EgressMTLS: &nicv1.EgressMTLS{TLSSecret: "client"}}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "ext"}, Spec: nicv1.PolicySpec{ExternalAuth: &nicv1.ExternalAuth{AuthServiceName: "auth"}}},
		},
		GlobalConfigurations: []*nicv1.GlobalConfiguration{{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: "gc"},
			Spec: nicv1.GlobalConfigurationSpec{Listeners: []nicv1.Listener{{Name: "tcp-a", Protocol: "TCP", Port: 5000}}}}},
	}
	vs := &nicv1.VirtualServer{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "cafe", UID: "uid-cafe"},
		Spec: nicv1.VirtualServerSpec{Host: "cafe.test",
			Upstreams: []nicv1.Upstream{{Name: "a", Service: "svc-0", Port: 80}},
			Routes: []nicv1.Route{{Path: "/", Action: &nicv1.Action{Pass: "a"},
				Policies: []nicv1.PolicyReference{{Name: "egress"}, {Name: "ext"}}}}}}
	ts := mkTransportServer("ns1", "tcp", 1, "tcp-a", "svc-0")
	ts.Spec.TLS = &nicv1.TransportServerTLS{Secret: "ts-tls"}

	full := *snap
	full.VirtualServers = []*nicv1.VirtualServer{vs}
	full.TransportServers = []*nicv1.TransportServer{ts}
	_, all := build.Build(&full, opts)
	r := NewReviewer(opts, nil, nil)
	r.Update(snap)
	for _, c := range []struct {
		kind, name string
		review     func() ([]model.Problem, bool, error)
	}{
		{"VirtualServer", "cafe", func() ([]model.Problem, bool, error) { return r.ReviewVirtualServer(context.Background(), vs) }},
		{"TransportServer", "tcp", func() ([]model.Problem, bool, error) {
			return r.ReviewTransportServer(context.Background(), ts)
		}},
	} {
		ps, ours, err := c.review()
		got, want := problemsOfKind(ps, c.kind, "ns1", c.name), problemsOfKind(all, c.kind, "ns1", c.name)
		if err != nil || !ours || !slices.Equal(got, want) {
			t.Errorf("%s: review %q (ours %v, err %v)\nbuild  %q", c.kind, got, ours, err, want)
		}
	}
}
