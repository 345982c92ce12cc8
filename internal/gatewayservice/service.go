// Package gatewayservice is the record of each Gateway's own address: the
// Service the leader keeps per Gateway of Causeway's classes, in the
// controller's namespace, selecting the controller's Pods. Its ports are
// the Gateway's listener ports; their targetPorts are internal ports of
// the controller's nginx that only this Gateway's listeners use. The
// Service is where that allocation lives, so every replica (and the next
// leader) reads it from the API: the build takes a Gateway's internal
// ports and addresses from Parse.
package gatewayservice

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// The labels that name the Gateway a Service is for. A Service without
// both, or with LabelManagedBy not ManagedBy, is not one of ours.
const (
	LabelNamespace = "gateway.causeway.io/namespace"
	LabelName      = "gateway.causeway.io/name"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "causeway-gateway"
)

// Owner is what a Gateway's Service records.
type Owner struct {
	// Namespace and Name are the Gateway's.
	Namespace, Name string
	// Ports maps each listener port to the internal port nginx listens
	// on for it.
	Ports map[int32]int32
	// Addresses are the Gateway's addresses: a LoadBalancer Service's
	// load-balancer ingress (IP or hostname), none until it has one; the
	// cluster IPs of any other type.
	Addresses []string
}

// Parse reads a Service of a Gateway; ok is false for any other Service,
// or one whose ports cannot be read (a port without a numeric targetPort
// is left out).
func Parse(svc *corev1.Service) (o Owner, ok bool) {
	if svc == nil || svc.Labels[LabelManagedBy] != ManagedBy {
		return Owner{}, false
	}
	o.Namespace, o.Name = svc.Labels[LabelNamespace], svc.Labels[LabelName]
	if o.Namespace == "" || o.Name == "" {
		return Owner{}, false
	}
	o.Ports = map[int32]int32{}
	for _, p := range svc.Spec.Ports {
		if p.TargetPort.IntVal > 0 && p.TargetPort.IntVal < 65536 {
			o.Ports[p.Port] = p.TargetPort.IntVal
		}
	}
	for _, in := range svc.Status.LoadBalancer.Ingress {
		switch {
		case in.IP != "":
			o.Addresses = append(o.Addresses, in.IP)
		case in.Hostname != "":
			o.Addresses = append(o.Addresses, in.Hostname)
		}
	}
	if len(o.Addresses) == 0 && svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		// A LoadBalancer Service's address is its load balancer's: none
		// until one is assigned.
		for _, ip := range svc.Spec.ClusterIPs {
			if ip != "" && ip != corev1.ClusterIPNone {
				o.Addresses = append(o.Addresses, ip)
			}
		}
	}
	return o, true
}

// Key is "namespace/name" of the Gateway.
func (o Owner) Key() string { return o.Namespace + "/" + o.Name }

// PortName is the Service port name of listener port p.
func PortName(p int32) string { return "p" + strconv.Itoa(int(p)) }
