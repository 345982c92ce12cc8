package build

import (
	"github.com/causeway/causeway/internal/model"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestParseBalance(t *testing.T) {
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		wantMethod  model.BalanceMethod
		wantHashKey string
		wantErr     bool
	}{
		{"no annotation uses the default", nil, model.RoundRobin, "", false},
		{"ewma", map[string]string{AnnotationLoadBalance: "ewma"}, model.EWMA, "", false},
		{"least_conn", map[string]string{AnnotationLoadBalance: "least_conn"}, model.LeastConn, "", false},
		{"p2c", map[string]string{AnnotationLoadBalance: "p2c"}, model.P2C, "", false},
		{"chash defaults to the request URI", map[string]string{AnnotationLoadBalance: "chash"}, model.CHash, "$request_uri", false},
		{"chash on a header", map[string]string{AnnotationLoadBalance: "chash", AnnotationHashKey: "$http_x_user"}, model.CHash, "$http_x_user", false},
		{"chash on a cookie", map[string]string{AnnotationLoadBalance: "chash", AnnotationHashKey: "$cookie_session"}, model.CHash, "$cookie_session", false},
		{"chash key injection refused", map[string]string{AnnotationLoadBalance: "chash", AnnotationHashKey: `$uri"; return 200 "x`}, model.RoundRobin, "", true},
		{"unknown method refused", map[string]string{AnnotationLoadBalance: "random"}, model.RoundRobin, "", true},
		{"sticky with options", map[string]string{AnnotationLoadBalance: "sticky", AnnotationStickyCookie: "route",
			AnnotationStickyMaxAge: "3600", AnnotationStickySameSite: "Lax"}, model.Sticky, "", false},
		{"sticky bad cookie name", map[string]string{AnnotationLoadBalance: "sticky", AnnotationStickyCookie: "a;b"}, model.RoundRobin, "", true},
		{"sticky SameSite None needs secure", map[string]string{AnnotationLoadBalance: "sticky", AnnotationStickySameSite: "None"}, model.RoundRobin, "", true},
		{"retries out of range", map[string]string{AnnotationRetries: "9"}, model.RoundRobin, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "n", Annotations: tc.annotations}}
			b, err := parseBalance(svc, model.RoundRobin)
			if (err != nil) != tc.wantErr || b.Method != tc.wantMethod || b.HashKey != tc.wantHashKey {
				t.Fatalf("parseBalance = %+v, %v; want method %s hash %q err %v", b, err, tc.wantMethod, tc.wantHashKey, tc.wantErr)
			}
		})
	}
}

func TestInvalidBalanceIsAProblemOnTheService(t *testing.T) {
	s := world(1)
	s.Services[0].Annotations = map[string]string{AnnotationLoadBalance: "bogus"}
	s.Ingresses = append(s.Ingresses, mkIngress("default", "a", 0, rule("a.com", path("/", "Prefix", svcName(0), 80))))
	m, problems := Build(s, testOpts)
	if len(problems) != 1 || problems[0].Object.Kind != "Service" || problems[0].Rejected {
		t.Fatalf("problems = %v, want one on the Service", problems)
	}
	if m.Backends[0].Balance.Method != model.RoundRobin {
		t.Fatal("the default method must be used")
	}
}
