package build

import (
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/causeway/causeway/internal/model"
)

// This file is the intake every processor's objects pass before they
// claim anything: the exclusion of objects nginx refused, the
// translation by the object's front-end with its Problems, and the
// creation time that explains the claims an object loses (whyFirst).

// errReported is what a translate function of intake returns when it
// refused the object and reported why itself.
var errReported = errors.New("refused with a Problem")

// excluded reports, with a Problem, whether the object ref is left out
// of the build (Options.Excluded: nginx refused its configuration).
func (b *builder) excluded(ref model.ObjectRef) bool {
	reason, ok := b.opts.Excluded[ref.Key()]
	if ok {
		b.problem(ref, model.ReasonExcluded, true, "excluded: %s", reason)
	}
	return ok
}

// intake takes in the object obj (ref): unless it is excluded, it
// translates it, keeps the translator's Problems, rejects the object on a
// translation error, and records its creation time for whyFirst. It
// returns the translation and whether the object goes on to claim what it
// asks for.
func intake[T any](b *builder, ref model.ObjectRef, obj metav1.Object, translate func() (T, []model.Problem, error)) (T, bool) {
	var none T
	if b.excluded(ref) {
		return none, false
	}
	t, problems, err := translate()
	b.problems = append(b.problems, problems...)
	switch {
	case errors.Is(err, errReported):
		return none, false
	case err != nil:
		b.problem(ref, model.ReasonInvalid, true, "%v", err)
		return none, false
	}
	b.created[ref] = obj.GetCreationTimestamp()
	return t, true
}
