package nic

import (
	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/class"
)

// The classes of NGINX Ingress Controller's resources: spec.ingressClassName.
// As in NIC, one that names none is served by every controller.
// GlobalConfiguration has no class: --global-configuration names it.
var (
	VirtualServerClass = class.Kind[*nicv1.VirtualServer]{
		Of: func(o *nicv1.VirtualServer) string { return o.Spec.IngressClass }}
	VirtualServerRouteClass = class.Kind[*nicv1.VirtualServerRoute]{
		Of: func(o *nicv1.VirtualServerRoute) string { return o.Spec.IngressClass }}
	PolicyClass = class.Kind[*nicv1.Policy]{
		Of: func(o *nicv1.Policy) string { return o.Spec.IngressClass }}
	TransportServerClass = class.Kind[*nicv1.TransportServer]{
		Of: func(o *nicv1.TransportServer) string { return o.Spec.IngressClass }}
)
