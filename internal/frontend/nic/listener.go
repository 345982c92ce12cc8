package nic

import (
	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
)

// Listener is spec.listener: the GlobalConfiguration's HTTP listeners
// the VirtualServer is served on instead of the controller's HTTP and
// HTTPS ports. An empty name means it is not served over that protocol,
// as in NGINX Ingress Controller. The names are only looked up, never
// printed.
type Listener struct {
	HTTP, HTTPS string
}

// listener reads spec.listener; one naming neither listener is ignored
// with a Problem.
func (t *translator) listener(in *nicv1.VirtualServerListener) *Listener {
	switch {
	case in == nil:
		return nil
	case in.HTTP == "" && in.HTTPS == "":
		t.unsupported("spec.listener", "names neither an http nor an https listener; the controller's HTTP and HTTPS ports serve the VirtualServer")
		return nil
	}
	return &Listener{HTTP: in.HTTP, HTTPS: in.HTTPS}
}
