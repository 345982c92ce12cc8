package kube

import (
	"strings"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestTrimInterns: two objects decoded apart (each with its own copy of
// every string) share their namespace and their labels' and annotations'
// keys and short values once trimmed; long values keep their own copy;
// what the maps hold is unchanged but for the last-applied annotation,
// which goes, as managed fields do.
func TestTrimInterns(t *testing.T) {
	long := strings.Repeat("x", internMax+1)
	decoded := func() *networkingv1.Ingress {
		// strings.Clone: a decoder's copies, not the literals' one.
		c := strings.Clone
		return &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{
			Namespace:     c("shop"),
			Name:          c("web"),
			Labels:        map[string]string{c("app"): c("web")},
			Annotations:   map[string]string{c("nginx.ingress.kubernetes.io/enable-cors"): c("true"), c("snippet"): c(long), corev1.LastAppliedConfigAnnotation: c("{}")},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		}}
	}
	a, b := decoded(), decoded()
	trimMeta(a)
	trimMeta(b)
	same := func(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) }
	key := func(m map[string]string, want string) string {
		for k := range m {
			if k == want {
				return k
			}
		}
		t.Fatalf("no key %q in %v", want, m)
		return ""
	}
	for _, tc := range []struct {
		what       string
		x, y       string
		wantShared bool
	}{
		{"namespace", a.Namespace, b.Namespace, true},
		{"label key", key(a.Labels, "app"), key(b.Labels, "app"), true},
		{"label value", a.Labels["app"], b.Labels["app"], true},
		{"annotation key", key(a.Annotations, "nginx.ingress.kubernetes.io/enable-cors"), key(b.Annotations, "nginx.ingress.kubernetes.io/enable-cors"), true},
		{"annotation value", a.Annotations["nginx.ingress.kubernetes.io/enable-cors"], b.Annotations["nginx.ingress.kubernetes.io/enable-cors"], true},
		{"long annotation value", a.Annotations["snippet"], b.Annotations["snippet"], false},
		{"name", a.Name, b.Name, false},
	} {
		if got := same(tc.x, tc.y); got != tc.wantShared {
			t.Errorf("%s: shared %v, want %v", tc.what, got, tc.wantShared)
		}
	}
	if len(a.Annotations) != 2 || a.Annotations["snippet"] != long || a.Annotations["nginx.ingress.kubernetes.io/enable-cors"] != "true" ||
		len(a.Labels) != 1 || a.Labels["app"] != "web" || a.ManagedFields != nil || a.Namespace != "shop" {
		t.Errorf("trimmed: %+v", a.ObjectMeta)
	}
}
