package annotations

import (
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// naming are the rows that declare the kind of object their value names
// (Annotation.Names), in the table's order.
var naming = func() []Annotation {
	var out []Annotation
	for _, a := range Known() {
		if a.Names != "" {
			out = append(out, a)
		}
	}
	return out
}()

// References lists the objects that the annotations of an object in
// namespace name, by the rows that declare it (Annotation.Names): the value
// is "namespace/name", or "name" in that namespace, as ingress-nginx reads
// it. It lists what is asked for: a value the annotation's parser refuses
// (another namespace, an invalid name) is listed as written, for the
// caller to judge; an empty one names nothing.
func References(namespace string, values map[string]string, prefix string) []model.Reference {
	var out []model.Reference
	for _, a := range naming {
		k := a.Key(prefix)
		v := values[k]
		if v == "" {
			continue
		}
		n := model.ObjectName{Namespace: namespace, Name: v}
		if before, after, ok := strings.Cut(v, "/"); ok {
			n = model.ObjectName{Namespace: before, Name: after}
		}
		out = append(out, model.Reference{Kind: a.Names, ObjectName: n, From: k})
	}
	return out
}
