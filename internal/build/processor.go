package build

import (
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

// A processor turns the objects of one kind into the model, or of kinds
// that share their state (a VirtualServer with its VirtualServerRoutes
// and Policies; the TransportServers of both kinds of listener). It keeps
// the state only its kind needs; what every kind shares (servers, claims,
// backends, secrets, Problems, creation times, host owners) is the
// builder's, with its methods. Build runs the processors of one ordered
// list (newProcessors): a new kind of object is one more entry.
//
// Build runs them in two rounds. First, the objects every processor
// returns are added together, oldest first (ranksFirst), so that the
// oldest claim on a host or a path wins whatever the kind. Then each
// processor's after runs, in the list's order.
type processor interface {
	// objects are the processor's objects that claim hosts or paths, of
	// our classes only, each with the function that adds it: its intake
	// (intake) and its claims (claims.go).
	objects(snap *source.Snapshot) []object
	// after runs once every processor's objects are added: what the
	// kind does once the claims on hosts are settled (canaries that
	// split the paths won, references no object used, listeners of its
	// own).
	after(snap *source.Snapshot)
}

// A serverOwner is a processor whose objects own whole servers, as a
// VirtualServer owns its host. finish leaves the locations of such a
// server in the order the processor added them, adds no Ingress path
// without a host to it, and lets the processor set its server-level
// policy. The servers no processor owns are made as Ingress rules make
// them (ingressProcessor).
type serverOwner interface {
	processor
	// ownsServer reports whether the server of host is the processor's.
	ownsServer(host string) bool
	// serverPolicy sets the server-level policy of a server the
	// processor owns, once every server has its locations.
	serverPolicy(srv *model.Server)
}

// globalSnippets is a serverOwner whose servers may carry snippets for
// every host (a VirtualServer's http-snippets).
type globalSnippets interface {
	serverOwner
	// globalSnippets collects those of srv, one of its servers, before
	// any server's policy is set.
	globalSnippets(srv *model.Server)
}

// ownedServer is the processor that owns the server of host, or nil.
func (b *builder) ownedServer(host string) serverOwner {
	for _, p := range b.procs {
		if o, ok := p.(serverOwner); ok && o.ownsServer(host) {
			return o
		}
	}
	return nil
}

// A finisher is a processor with work of its own once every server is
// final: model-wide values that follow from what the servers use.
type finisher interface {
	processor
	finishModel()
}

// object is a processor's object that claims hosts or paths, ranked with
// those of every other processor.
type object struct {
	meta metav1.Object
	add  func()
}

// newProcessors are the processors in the order Build runs them. The
// order of their objects among equals (neither ranks first) and of
// their after rounds is this list's.
func (b *builder) newProcessors() []processor {
	b.ing = &ingressProcessor{builder: b}
	return []processor{
		b.ing,
		&virtualServerProcessor{builder: b},
		&transportServerProcessor{builder: b},
		&servicesConfigMapProcessor{builder: b},
		&gatewayProcessor{builder: b},
	}
}

// process runs the processors: their objects together, oldest first, then
// each one's after.
func (b *builder) process(snap *source.Snapshot, procs []processor) {
	var objs []object
	for _, p := range procs {
		objs = append(objs, p.objects(snap)...)
	}
	sort.SliceStable(objs, func(i, j int) bool { return ranksFirst(objs[i].meta, objs[j].meta) })
	for _, o := range objs {
		o.add()
	}
	for _, p := range procs {
		p.after(snap)
	}
}
