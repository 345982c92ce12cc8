package build

import (
	"github.com/causeway/causeway/internal/class"
	"github.com/causeway/causeway/internal/model"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/causeway/causeway/internal/source"
)

var testOpts = Options{Class: class.Options{ControllerName: "causeway.io/ingress-controller", IngressClass: "causeway"}, ConfigMap: "causeway/config",
	HeadersMoreAvailable: true, LuaAvailable: true}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// ingress builds an Ingress of class causeway created at epoch+age seconds.
func mkIngress(ns, name string, age int, rules ...networkingv1.IngressRule) *networkingv1.Ingress {
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(epoch.Add(time.Duration(age) * time.Second))},
		Spec: networkingv1.IngressSpec{IngressClassName: ptr.To("causeway"), Rules: rules},
	}
}

func rule(host string, paths ...networkingv1.HTTPIngressPath) networkingv1.IngressRule {
	return networkingv1.IngressRule{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{
		HTTP: &networkingv1.HTTPIngressRuleValue{Paths: paths}}}
}

func path(p, typ, svc string, port int32) networkingv1.HTTPIngressPath {
	pt := networkingv1.PathType(typ)
	return networkingv1.HTTPIngressPath{Path: p, PathType: &pt, Backend: *svcBackend(svc, port)}
}

func svcBackend(svc string, port int32) *networkingv1.IngressBackend {
	return &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
		Name: svc, Port: networkingv1.ServiceBackendPort{Number: port}}}
}

func service(ns, name string, port int32, portName string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: portName, Port: port, Protocol: corev1.ProtocolTCP}}}}
}

type ep struct {
	addr               string
	ready, terminating *bool
}

func slice(ns, svc, portName string, port int32, eps ...ep) *discoveryv1.EndpointSlice {
	es := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: svc + "-abc", Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To(portName), Port: ptr.To(port), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	for _, e := range eps {
		es.Endpoints = append(es.Endpoints, discoveryv1.Endpoint{Addresses: []string{e.addr},
			Conditions: discoveryv1.EndpointConditions{Ready: e.ready, Terminating: e.terminating}})
	}
	return es
}

// world is a snapshot with Services svc-0..svc-n-1 in ns "default", each
// with one ready endpoint 10.0.0.i:8080.
func world(n int) *source.Snapshot {
	s := &source.Snapshot{}
	for i := 0; i < n; i++ {
		name := svcName(i)
		s.Services = append(s.Services, service("default", name, 80, "http"))
		s.EndpointSlices = append(s.EndpointSlices, slice("default", name, "http", 8080, ep{addr: "10.0.0." + string(rune('1'+i))}))
	}
	return s
}

func svcName(i int) string { return "svc-" + string(rune('a'+i)) }

func server(m *model.Model, host string) *model.Server {
	for _, s := range m.Servers {
		if s.Host == host {
			return s
		}
	}
	return nil
}
