package address

import (
	"context"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/causeway/causeway/test/harness"
)

func ip(s string) networkingv1.IngressLoadBalancerIngress {
	return networkingv1.IngressLoadBalancerIngress{IP: s}
}

func host(s string) networkingv1.IngressLoadBalancerIngress {
	return networkingv1.IngressLoadBalancerIngress{Hostname: s}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      []string
		want    []networkingv1.IngressLoadBalancerIngress
		wantErr bool
	}{
		{"one IP", []string{"192.0.2.1"}, []networkingv1.IngressLoadBalancerIngress{ip("192.0.2.1")}, false},
		{"comma list, IPs first, sorted", []string{"lb.example.com, 192.0.2.2,192.0.2.1"},
			[]networkingv1.IngressLoadBalancerIngress{ip("192.0.2.1"), ip("192.0.2.2"), host("lb.example.com")}, false},
		{"repeated flag, duplicates dropped", []string{"192.0.2.1", "192.0.2.1,a.example"},
			[]networkingv1.IngressLoadBalancerIngress{ip("192.0.2.1"), host("a.example")}, false},
		{"IPv6 is canonicalised", []string{"2001:DB8:0::1"}, []networkingv1.IngressLoadBalancerIngress{ip("2001:db8::1")}, false},
		{"empty entries ignored", []string{",", ""}, nil, false},
		{"upper-case host refused", []string{"LB.example.com"}, nil, true},
		{"host with a port refused", []string{"lb.example.com:80"}, nil, true},
		{"IPv6 zone refused", []string{"fe80::1%eth0"}, nil, true},
		{"junk refused", []string{"a b"}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Parse(%q) error = %v, want error %v", tc.in, err, tc.wantErr)
			}
			if !tc.wantErr && !reflect.DeepEqual(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
				t.Errorf("Parse(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestFromService(t *testing.T) {
	for _, tc := range []struct {
		name string
		svc  *corev1.Service
		want []networkingv1.IngressLoadBalancerIngress
	}{
		{"no Service", nil, nil},
		{"load-balancer addresses", &corev1.Service{Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{
			Ingress: []corev1.LoadBalancerIngress{{Hostname: "lb.example.com"}, {IP: "192.0.2.9"}},
		}}}, []networkingv1.IngressLoadBalancerIngress{ip("192.0.2.9"), host("lb.example.com")}},
		{"load balancer wins over external IPs", &corev1.Service{
			Spec: corev1.ServiceSpec{ExternalIPs: []string{"192.0.2.1"}},
			Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{
				Ingress: []corev1.LoadBalancerIngress{{IP: "192.0.2.9"}},
			}},
		}, []networkingv1.IngressLoadBalancerIngress{ip("192.0.2.9")}},
		{"external IPs when no load balancer", &corev1.Service{
			Spec: corev1.ServiceSpec{ExternalIPs: []string{"192.0.2.2", "192.0.2.1"}},
		}, []networkingv1.IngressLoadBalancerIngress{ip("192.0.2.1"), ip("192.0.2.2")}},
		{"nothing published", &corev1.Service{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := FromService(tc.svc); !Equal(got, tc.want) {
				t.Errorf("FromService = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestEqualIgnoresOrder(t *testing.T) {
	a := []networkingv1.IngressLoadBalancerIngress{host("x.example"), ip("192.0.2.1")}
	b := []networkingv1.IngressLoadBalancerIngress{ip("192.0.2.1"), host("x.example")}
	if !Equal(a, b) {
		t.Error("same entries in another order are not Equal")
	}
	if Equal(a, b[:1]) {
		t.Error("a subset is Equal")
	}
	if !Equal(nil, []networkingv1.IngressLoadBalancerIngress{}) {
		t.Error("nil and empty are not Equal")
	}
}

// TestServicePorts: a row per rule of which Service ports NIC's
// externalEndpoints[].ports show: those whose targetPort is nginx's HTTP
// or HTTPS port, or is named http or https; sorted, once each.
func TestServicePorts(t *testing.T) {
	port := func(p int32, target intstr.IntOrString) corev1.ServicePort {
		return corev1.ServicePort{Port: p, TargetPort: target}
	}
	for _, tc := range []struct {
		name  string
		ports []corev1.ServicePort
		want  string
	}{
		{"target ports by number", []corev1.ServicePort{port(443, intstr.FromInt32(8443)), port(80, intstr.FromInt32(8080))}, "[80,443]"},
		{"target ports by name", []corev1.ServicePort{port(80, intstr.FromString("http")), port(443, intstr.FromString("https"))}, "[80,443]"},
		{"other ports are left out", []corev1.ServicePort{port(80, intstr.FromInt32(8080)), port(9113, intstr.FromInt32(9113)),
			port(8081, intstr.FromString("metrics"))}, "[80]"},
		{"two Service ports to one listener", []corev1.ServicePort{port(8000, intstr.FromInt32(8080)), port(80, intstr.FromInt32(8080))}, "[80,8000]"},
		{"none", []corev1.ServicePort{port(9113, intstr.FromInt32(9113))}, ""},
	} {
		got := ServicePorts(&corev1.Service{Spec: corev1.ServiceSpec{Ports: tc.ports}}, 8080, 8443)
		if s := EndpointPorts(got); len(got) == 0 && tc.want != "" || len(got) > 0 && s != tc.want {
			t.Errorf("%s: %v (%s), want %s", tc.name, got, s, tc.want)
		}
	}
	if ServicePorts(nil, 80, 443) != nil {
		t.Error("a missing Service has ports")
	}
}

// TestServiceWatcherSaysWhenNothingIsPublished: a publish Service that
// does not exist, or has no address yet, is logged once per state, and
// so is its first address.
func TestServiceWatcherSaysWhenNothingIsPublished(t *testing.T) {
	client := fake.NewSimpleClientset()
	var logs harness.SyncBuffer
	w, err := NewServiceWatcher(client, "ingress", "causeway", 80, 443, nil, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go w.Run(ctx)
	waitLog := func(want string, n int) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for strings.Count(logs.String(), want) != n {
			if time.Now().After(deadline) {
				t.Fatalf("log %q %d times, want %d:\n%s", want, strings.Count(logs.String(), want), n, logs.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitLog("publish service does not exist", 1)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ingress", Name: "causeway"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(80)}}}}
	svc, err = client.CoreV1().Services("ingress").Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitLog("publish service has no load-balancer address nor external IP yet", 1)
	svc.Labels = map[string]string{"touched": "yes"} // another event, the same state
	if svc, err = client.CoreV1().Services("ingress").Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.10"}}
	if _, err := client.CoreV1().Services("ingress").UpdateStatus(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitLog("publish service has addresses again", 1)
	waitLog("publish service has no load-balancer address nor external IP yet", 1)
	if addrs, ok := w.Addresses(); !ok || len(addrs) != 1 || addrs[0].IP != "192.0.2.10" {
		t.Errorf("addresses %v, %v", addrs, ok)
	}
}
