package annotations

import (
	"fmt"
	"slices"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// Reader hands one group's annotations to its parser and records what the
// parser could not use. A parser reads a value with Get (or a typed
// helper), and reports a bad one with Invalid: the setting is dropped and
// the rest of the Ingress keeps working.
type Reader struct {
	ref    model.ObjectRef
	prefix string
	// values are the annotations under prefix, by name without it: a
	// parser asks for dozens of names per Ingress, and building each full
	// key costs an allocation.
	values   map[string]string
	problems []model.Problem
	// closed collects security settings that could not be applied.
	closed []string
	// refused are the names of the annotations reported Invalid.
	refused []string
	// defaults are the ConfigMap's defaults the Ingress starts from; nil
	// for none.
	defaults *model.Defaults
}

// newReader keeps the annotations under prefix.
func newReader(ref model.ObjectRef, prefix string, all map[string]string) *Reader {
	r := &Reader{ref: ref, prefix: prefix, values: make(map[string]string, len(all))}
	slash := prefix + "/"
	for k, v := range all {
		if name, ok := strings.CutPrefix(k, slash); ok {
			r.values[name] = v
		}
	}
	return r
}

// Key is the full key of an ingress-nginx annotation name.
func (r *Reader) Key(name string) string { return r.prefix + "/" + name }

// Get returns the value of an annotation by its name after the prefix.
func (r *Reader) Get(name string) (string, bool) {
	v, ok := r.values[name]
	return v, ok
}

// Has reports whether the annotation is set.
func (r *Reader) Has(name string) bool {
	_, ok := r.values[name]
	return ok
}

// Invalid reports a value that cannot be used; the setting keeps its
// default.
func (r *Reader) Invalid(name, value string, err error) {
	r.refused = append(r.refused, name)
	r.problems = append(r.problems, model.Problem{Object: r.ref, Reason: model.ReasonInvalidAnnotation,
		Message: fmt.Sprintf("annotation %s: value %q: %v; the setting is ignored", r.Key(name), model.Truncate(value), err)})
}

// Ignored reports a valid annotation that has no effect, with why.
func (r *Reader) Ignored(name, why string) {
	r.problems = append(r.problems, model.Problem{Object: r.ref, Reason: model.ReasonUnsupportedAnnotation,
		Message: fmt.Sprintf("annotation %s %s; ignored", r.Key(name), why)})
}

// FailClosed reports a security setting that cannot be applied as
// written: every path of the Ingress answers 503.
func (r *Reader) FailClosed(name, value string, err error) {
	r.closed = append(r.closed, r.Key(name))
	r.problems = append(r.problems, model.Problem{Object: r.ref, Reason: model.ReasonInvalidAnnotation,
		Message: fmt.Sprintf("annotation %s: value %q: %v; every path of this Ingress answers 503 rather than being served without it", r.Key(name), model.Truncate(value), err)})
}

// Parse reads an annotation with parse; it returns false when the
// annotation is absent or invalid (and then reported).
func Parse[T any](r *Reader, name string, parse func(string) (T, error)) (T, bool) {
	var zero T
	v, ok := r.Get(name)
	if !ok {
		return zero, false
	}
	out, err := parse(v)
	if err != nil {
		r.Invalid(name, v, err)
		return zero, false
	}
	return out, true
}

// Set stores a parsed annotation in *dst when it is present and valid.
func Set[T any](r *Reader, name string, dst *T, parse func(string) (T, error)) bool {
	v, ok := Parse(r, name, parse)
	if ok {
		*dst = v
	}
	return ok
}

// SetPtr stores a parsed annotation as a new pointer in *dst.
func SetPtr[T any](r *Reader, name string, dst **T, parse func(string) (T, error)) bool {
	v, ok := Parse(r, name, parse)
	if ok {
		*dst = &v
	}
	return ok
}

// setKeys records the full keys of the names present, sorted.
func (r *Reader) setKeys(dst *[]string, names ...string) {
	for _, n := range names {
		if r.Has(n) {
			*dst = append(*dst, r.Key(n))
		}
	}
	slices.Sort(*dst)
}
