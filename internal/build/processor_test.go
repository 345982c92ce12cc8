package build

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

// fakeProcessor records, in log, when its objects are added and when its
// after round runs.
type fakeProcessor struct {
	name string
	objs []metav1.ObjectMeta
	log  *[]string
}

func (p *fakeProcessor) objects(*source.Snapshot) []object {
	var out []object
	for _, m := range p.objs {
		out = append(out, object{meta: &m, add: func() { *p.log = append(*p.log, p.name+":"+m.Name) }})
	}
	return out
}

func (p *fakeProcessor) after(*source.Snapshot) { *p.log = append(*p.log, p.name+":after") }

// TestProcessOrder: the objects of every processor are added together,
// oldest first (ranksFirst), those equal in rank in the list's order;
// then each processor's after round runs, in the list's order.
func TestProcessOrder(t *testing.T) {
	at := func(s int) metav1.Time { return metav1.NewTime(time.Unix(1700000000+int64(s), 0)) }
	var log []string
	first := &fakeProcessor{name: "first", log: &log, objs: []metav1.ObjectMeta{
		{Namespace: "ns", Name: "young", CreationTimestamp: at(3)},
		{Namespace: "ns", Name: "same", CreationTimestamp: at(0)},
	}}
	second := &fakeProcessor{name: "second", log: &log, objs: []metav1.ObjectMeta{
		{Namespace: "ns", Name: "middle", CreationTimestamp: at(2)},
		{Namespace: "ns", Name: "same", CreationTimestamp: at(0)}, // ties with first's: list order
		{Namespace: "ns", Name: "z-same-second", CreationTimestamp: at(2)},
	}}
	(&builder{}).process(&source.Snapshot{}, []processor{first, second})
	want := []string{"first:same", "second:same", "second:z-same-second", "second:middle", "first:young", "first:after", "second:after"}
	if !slices.Equal(log, want) {
		t.Errorf("order:\n got %v\nwant %v", log, want)
	}
}

// TestOwnersClaim: the first claim on a key wins; a later one learns the
// owner, and whether it is itself.
func TestOwnersClaim(t *testing.T) {
	a := model.ObjectRef{Kind: "Ingress", Namespace: "ns", Name: "a"}
	v := model.ObjectRef{Kind: "VirtualServer", Namespace: "ns", Name: "a"}
	o := owners[string]{}
	if owner, fresh := o.claim("h", a); !fresh || owner != a {
		t.Errorf("first claim: owner %v fresh %v, want %v true", owner, fresh, a)
	}
	if owner, fresh := o.claim("h", a); fresh || owner != a {
		t.Errorf("claim again by the owner: owner %v fresh %v, want %v false", owner, fresh, a)
	}
	if owner, fresh := o.claim("h", v); fresh || owner != a {
		t.Errorf("claim by another kind: owner %v fresh %v, want %v false", owner, fresh, a)
	}
}
