package build

import (
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/causeway/causeway/internal/model"
)

// externalBackend is the Backend of an ExternalName Service: its name
// and port, whose addresses the controller resolves and fills in as
// endpoints (controller/externalname.go). The build never resolves a
// name; an IPv4 address written as the name is the endpoint at once.
//
// The port follows ingress-nginx: the Service port the reference names
// (by name, or by number) gives its targetPort when that is a number,
// else its own port; a number no Service port has is used as it is, since
// ExternalName Services often list no ports.
func (idx *serviceIndex) externalBackend(svc *corev1.Service, ref *networkingv1.IngressServiceBackend) (*model.Backend, error) {
	ns := svc.Namespace
	if idx.noExternal {
		return nil, fmt.Errorf("service %s/%s is of type ExternalName, which --disable-svc-external-name refuses", ns, ref.Name)
	}
	host, err := model.ParseExternalName(svc.Spec.ExternalName)
	if err != nil {
		return nil, fmt.Errorf("service %s/%s: externalName %q: %v", ns, ref.Name, model.Truncate(svc.Spec.ExternalName), err)
	}
	port := ref.Port.Number
	found := false
	for _, p := range svc.Spec.Ports {
		if ref.Port.Name != "" && p.Name == ref.Port.Name || ref.Port.Name == "" && p.Port == ref.Port.Number {
			port, found = p.Port, true
			if p.TargetPort.Type == intstr.Int && p.TargetPort.IntVal > 0 {
				port = p.TargetPort.IntVal
			}
			break
		}
	}
	if !found && ref.Port.Name != "" {
		return nil, fmt.Errorf("service %s/%s has no port %s", ns, ref.Name, ref.Port.Name)
	}
	if port < 1 || port > 65535 {
		return nil, fmt.Errorf("service %s/%s: port %d is out of range", ns, ref.Name, port)
	}
	b := &model.Backend{Key: backendKey(ns, ref), Namespace: ns, Service: ref.Name, Port: portString(ref.Port),
		External: &model.ExternalName{Host: host, Port: port}}
	if a, err := netip.ParseAddr(host); err == nil {
		b.Endpoints = []model.Endpoint{{Address: a.String(), Port: port}}
	}
	return b, nil
}
