package build

import (
	"github.com/causeway/causeway/internal/frontend/nic"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

// This file reports the VirtualServerRoutes and Policies of ours that no
// served VirtualServer uses. Nothing is silent: each is still checked, so
// an invalid one is reported as it is written, not first when a
// VirtualServer starts to use it.

// reportUnused checks, in snapshot order, every VirtualServerRoute and
// Policy of ours that the VirtualServers left unused. A VirtualServerRoute
// is also told why it is not served, with NGINX Ingress Controller's
// reasons: no served VirtualServer has its host (NoVirtualServerFound), or
// the one that has does not delegate to it (Ignored). An unused Policy is
// no problem (it may be referenced later); an invalid one is.
func (b *virtualServerProcessor) reportUnused(snap *source.Snapshot) {
	// A VirtualServerRoute a route delegated to but found invalid has
	// been reported already.
	rejected := map[model.ObjectRef]bool{}
	for _, p := range b.problems {
		if p.Rejected && p.Object.Kind == "VirtualServerRoute" {
			rejected[p.Object] = true
		}
	}
	for _, vsr := range snap.VirtualServerRoutes {
		key := vsr.Namespace + "/" + vsr.Name
		if b.vsrUsed[key] != "" || rejected[nic.VSRRef(vsr)] ||
			!nic.VirtualServerRouteClass.IsOurs(b.classes, vsr) {
			continue
		}
		ref := nic.VSRRef(vsr)
		// Checked on its own: its subroutes need no parent prefix yet.
		_, problems, err := nic.TranslateVirtualServerRoute(vsr, vsr.Spec.Host, &b.model.Config.Defaults)
		b.problems = append(b.problems, problems...)
		if err != nil {
			b.problem(ref, model.ReasonInvalid, true, "%v", err)
			continue
		}
		if vs := b.vsServers[vsr.Spec.Host]; vs != nil {
			b.problem(ref, model.ReasonIgnored, false, "VirtualServer %s ignores VirtualServerRoute", vs.Ref.Namespace+"/"+vs.Ref.Name)
		} else {
			b.problem(ref, model.ReasonNoVirtualServerFound, false, "VirtualServer is invalid or doesn't exist")
		}
	}
	for _, p := range snap.Policies {
		if !nic.PolicyClass.IsOurs(b.classes, p) {
			continue
		}
		b.nicPolicy(p.Namespace + "/" + p.Name) // translated once per build
	}
}
