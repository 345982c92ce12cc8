package source

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestTrimTargetRef(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *corev1.ObjectReference
		want string // the kept Pod name, "" for nil
	}{
		{"none", nil, ""},
		{"a Pod", &corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "web-1", UID: "u", ResourceVersion: "9"}, "web-1"},
		{"another kind", &corev1.ObjectReference{Kind: "Node", Name: "n1"}, ""},
		{"a Pod without a name", &corev1.ObjectReference{Kind: "Pod"}, ""},
	} {
		got := TrimTargetRef(tc.in)
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("%s: %+v, want nil", tc.name, got)
		case tc.want != "" && (got == nil || *got != corev1.ObjectReference{Kind: "Pod", Name: tc.want}):
			t.Errorf("%s: %+v, want Pod %s only", tc.name, got, tc.want)
		}
	}
}
