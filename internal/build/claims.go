package build

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/causeway/causeway/internal/model"
)

// This file holds the claims objects of every kind make on hosts, paths,
// listeners and settings: the oldest object wins (ranksFirst: the older,
// then the greater namespace/name, then the UID), whatever its kind, and
// each loser gets a Collision Problem that names the owner and says why
// it won (whyFirst). Processors add objects oldest first, so the first
// claim on anything is the one that stands.

// owners are who claimed each key: a host and path, a host, a listener.
type owners[K comparable] map[K]model.ObjectRef

// claim gives key to ref when no object holds it, and reports whether it
// did (fresh); else it returns the object that holds it, ref itself
// perhaps (a second rule of one Ingress, say).
func (o owners[K]) claim(key K, ref model.ObjectRef) (owner model.ObjectRef, fresh bool) {
	if owner, taken := o[key]; taken {
		return owner, false
	}
	o[key] = ref
	return ref, true
}

// lost reports that ref lost a claim to owner: format (with args) says
// what was claimed and by whom; why owner won is appended.
func (b *builder) lost(ref, owner model.ObjectRef, rejected bool, format string, args ...any) {
	b.problem(ref, model.ReasonCollision, rejected, format+", %s", append(args, b.whyFirst(owner, ref))...)
}

// claimHost gives host to ref alone (a VirtualServer, a tls-passthrough
// TransportServer), unless another object holds it or (an object that
// needs the host alone) an Ingress has a rule for it: then ref gets a
// Problem and false.
func (b *builder) claimHost(ref model.ObjectRef, host string) bool {
	if b.hostTaken(ref, host, true) {
		return false
	}
	b.hostOwner[host] = ref
	return true
}

// streamPort is what a stream server claims: a port of a transport.
type streamPort struct {
	port  int
	proto model.StreamProtocol
}

// addStream adds a stream server, which claims its port for its source.
// The GlobalConfiguration gives each listener its own port; a services
// ConfigMap's entry comes after every TransportServer and loses a port
// taken (addServicesEntry).
func (b *builder) addStream(srv *model.StreamServer) {
	if b.streamPorts == nil {
		b.streamPorts = owners[streamPort]{}
	}
	b.streamPorts.claim(streamPort{srv.Port, srv.Protocol}, srv.Source)
	b.model.Streams = append(b.model.Streams, srv)
}

// claimKey is what an Ingress path claims: a host, a path and its type.
type claimKey struct {
	host, path string
	typ        model.PathType
}

// ranksFirst says whether a's claims come before b's: the older first
// (creationTimestamp, whole seconds), and between two of the same second
// the greater namespace/name, as ingress-nginx ranks Ingresses, so that
// objects applied together have the same winner in every cluster (a UID
// is random). The UID settles the rest: objects of different kinds with
// the same namespace and name.
func ranksFirst(a, b metav1.Object) bool {
	ta, tb := a.GetCreationTimestamp().Time, b.GetCreationTimestamp().Time
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	if na, nb := a.GetNamespace()+"/"+a.GetName(), b.GetNamespace()+"/"+b.GetName(); na != nb {
		return na > nb
	}
	return a.GetUID() < b.GetUID()
}

// whyFirst explains why winner's claim beat loser's (see ranksFirst).
func (b *builder) whyFirst(winner, loser model.ObjectRef) string {
	tw, tl := b.created[winner], b.created[loser]
	if !tw.Equal(&tl) {
		return "which is older"
	}
	if tw.IsZero() {
		return "which ranks first: neither has a creationTimestamp, so the greater namespace/name wins"
	}
	return "which ranks first: both have the same creationTimestamp, so the greater namespace/name wins, as in ingress-nginx"
}

// hostTaken reports, with a Problem on ref, whether host belongs to
// someone else: a VirtualServer, a passthrough TransportServer or
// ssl-passthrough Ingress, or (for a VirtualServer or a passthrough
// TransportServer, byVirtualServer) an Ingress.
func (b *builder) hostTaken(ref model.ObjectRef, host string, byVirtualServer bool) bool {
	owner, ok := b.hostOwner[host]
	switch {
	case ok && owner != ref:
		b.lost(ref, owner, false, "host %q belongs to %s", displayHost(host), owner)
		return true
	case ok:
		return false
	case byVirtualServer:
		if ing, used := b.ingressHost[host]; used {
			b.lost(ref, ing, false, "host %q belongs to %s", displayHost(host), ing)
			return true
		}
	}
	return false
}

func displayHost(h string) string {
	if h == "" {
		return "*"
	}
	return h
}
