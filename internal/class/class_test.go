package class

import (
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// named is a kind whose objects are their class name.
func named(u Unnamed) Kind[string] {
	return Kind[string]{Of: func(s string) string { return s }, Unnamed: u}
}

func TestKinds(t *testing.T) {
	mine := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "mine"},
		Spec: networkingv1.IngressClassSpec{Controller: "causeway.io/ingress-controller"}}
	mineDefault := mine.DeepCopy()
	mineDefault.Annotations = map[string]string{DefaultAnnotation: "true"}
	theirs := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx", Annotations: map[string]string{DefaultAnnotation: "true"}},
		Spec: networkingv1.IngressClassSpec{Controller: "k8s.io/ingress-nginx"}}
	opts := Options{ControllerName: "causeway.io/ingress-controller", IngressClass: "flag"}
	without := opts
	without.WatchWithoutClass = true
	for _, tc := range []struct {
		name    string
		opts    Options
		classes []*networkingv1.IngressClass
		unnamed Unnamed
		class   string
		want    bool
	}{
		{"our IngressClass", opts, []*networkingv1.IngressClass{mine}, ByDefault, "mine", true},
		{"another controller's IngressClass", opts, []*networkingv1.IngressClass{theirs}, Everyone, "nginx", false},
		{"the flag's class without an object", opts, nil, ByDefault, "flag", true},
		{"an unknown class", opts, nil, Everyone, "other", false},
		{"none, everyone's", opts, nil, Everyone, "", true},
		{"none, by default without a default", opts, []*networkingv1.IngressClass{mine, theirs}, ByDefault, "", false},
		{"none, by default with our default", opts, []*networkingv1.IngressClass{mineDefault}, ByDefault, "", true},
		{"none, by default with watch-without-class", without, nil, ByDefault, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := named(tc.unnamed).IsOurs(NewFilter(tc.opts, tc.classes), tc.class); got != tc.want {
				t.Errorf("IsOurs = %v, want %v", got, tc.want)
			}
		})
	}
}
