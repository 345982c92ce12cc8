package migrate

import (
	"github.com/causeway/causeway/internal/frontend/configmap"
	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
)

// maxTypo is the edit distance within which an unknown name is taken for
// a misspelling of a known one.
const maxTypo = 2

// suggestAnnotation returns the full key of the known annotation closest
// to an unknown name, or "" when none is within maxTypo edits.
func suggestAnnotation(family annotations.AnnotationFamily, name, prefix string) string {
	best, bestD := annotations.Annotation{}, maxTypo+1
	for _, a := range annotations.Known() {
		if a.Family != family {
			continue
		}
		if d := distance(name, a.Name); d < bestD {
			best, bestD = a, d
		}
	}
	if bestD > maxTypo {
		return ""
	}
	return best.Key(prefix)
}

// suggestKey returns the known ConfigMap key closest to an unknown one.
func suggestKey(name string) string {
	keys := configmap.Keys()
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.Name
	}
	return Closest(name, names)
}

// Closest returns the first of names closest to name, or "" when none is
// within maxTypo edits: the known name an unknown one is taken to
// misspell.
func Closest(name string, names []string) string {
	best, bestD := "", maxTypo+1
	for _, n := range names {
		if d := distance(name, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

func distance(a, b string) int {
	if d := len(a) - len(b); d > maxTypo || -d > maxTypo {
		return maxTypo + 1
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
