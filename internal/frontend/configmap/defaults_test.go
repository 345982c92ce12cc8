package configmap

import (
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/model"
)

// TestAnnotationDefaultKeys: the keys that set the defaults of the
// annotations of the same name, with good, edge and hostile values. A
// good value reaches model.Config.Defaults; a bad one is a Problem naming
// the ConfigMap and the key, and leaves the built-in default.
func TestAnnotationDefaultKeys(t *testing.T) {
	size := func(n int64) *model.Size { return new(model.Size(n)) }
	on := true
	for _, tc := range []struct {
		key, value string
		want       func(d *model.Defaults) any
		is         any
		problem    string // a fragment; "" for none
	}{
		{"proxy-buffering", "on", func(d *model.Defaults) any { return d.Proxy.Buffering.Response }, &on, ""},
		{"proxy-buffering", "off", func(d *model.Defaults) any { return d.Proxy.Buffering.Response }, (*bool)(nil), ""},
		{"proxy-buffering", "On", func(d *model.Defaults) any { return d.Proxy.Buffering.Response }, (*bool)(nil), "want on or off"},
		{"proxy-buffer-size", "16k", func(d *model.Defaults) any { return d.Proxy.Buffering.BufferSize }, size(16 << 10), ""},
		{"proxy-buffer-size", "16k;", func(d *model.Defaults) any { return d.Proxy.Buffering.BufferSize }, (*model.Size)(nil), "want a size"},
		{"proxy-buffers-number", "64", func(d *model.Defaults) any { return d.Proxy.Buffering.Buffers }, 64, ""},
		{"proxy-buffers-number", "65", func(d *model.Defaults) any { return d.Proxy.Buffering.Buffers }, 0, "from 3 to 64"},
		{"proxy-busy-buffers-size", "12k", func(d *model.Defaults) any { return d.Proxy.Buffering.BusyBuffers }, size(12 << 10), ""},
		{"proxy-busy-buffers-size", "13k", func(d *model.Defaults) any { return d.Proxy.Buffering.BusyBuffers }, (*model.Size)(nil), "buffers but one"},
		{"proxy-request-buffering", "off", func(d *model.Defaults) any { return d.Proxy.Buffering.Request }, new(false), ""},
		{"client-body-buffer-size", "1g", func(d *model.Defaults) any { return d.Proxy.Buffering.ClientBodyBuffer }, size(1 << 30), ""},
		{"client-body-buffer-size", "2g", func(d *model.Defaults) any { return d.Proxy.Buffering.ClientBodyBuffer }, (*model.Size)(nil), "want a size"},
		{"proxy-http-version", "1.0", func(d *model.Defaults) any { return d.Proxy.HTTPVersion }, "1.0", ""},
		{"proxy-http-version", "HTTP/1.0", func(d *model.Defaults) any { return d.Proxy.HTTPVersion }, "", "want 1.0 or 1.1"},
		{"proxy-max-temp-file-size", "0", func(d *model.Defaults) any { return d.Proxy.Buffering.MaxTempFile }, size(0), ""},
		{"proxy-next-upstream", "error timeout http_503", func(d *model.Defaults) any { return d.Proxy.Retry.On },
			[]string{"error", "timeout", "http_503"}, ""},
		{"proxy-next-upstream", "error; return 200", func(d *model.Defaults) any { return d.Proxy.Retry.On }, []string(nil), "is not one of"},
		{"proxy-next-upstream-timeout", "10", func(d *model.Defaults) any { return d.Proxy.Retry.Timeout }, 10 * time.Second, ""},
		{"proxy-next-upstream-timeout", "-1", func(d *model.Defaults) any { return d.Proxy.Retry.Timeout }, time.Duration(0), "want"},
		{"proxy-cookie-domain", "svc.internal example.com", func(d *model.Defaults) any { return d.Proxy.CookieDomain },
			&model.Replace{From: "svc.internal", To: "example.com"}, ""},
		{"proxy-cookie-domain", "$host example.com", func(d *model.Defaults) any { return d.Proxy.CookieDomain }, (*model.Replace)(nil), "host"},
		{"proxy-cookie-path", "/app/ /", func(d *model.Defaults) any { return d.Proxy.CookiePath }, &model.Replace{From: "/app/", To: "/"}, ""},
		{"proxy-redirect-from", "off", func(d *model.Defaults) any { return d.Proxy.RedirectRewrite }, &model.Replace{Off: true}, ""},
		{"proxy-redirect-from", "http://a$host/", func(d *model.Defaults) any { return d.Proxy.RedirectRewrite }, (*model.Replace)(nil), "want off"},
		{"custom-http-errors", "404, 503", func(d *model.Defaults) any { return d.ErrorCodes }, []int{404, 503}, ""},
		{"custom-http-errors", "404 503", func(d *model.Defaults) any { return d.ErrorCodes }, []int(nil), "between 400 and 599"},
		{"force-ssl-redirect", "true", func(d *model.Defaults) any { return d.ForceSSLRedirect }, true, ""},
		{"force-ssl-redirect", "on", func(d *model.Defaults) any { return d.ForceSSLRedirect }, false, "want true or false"},
		{"preserve-trailing-slash", "True", func(d *model.Defaults) any { return d.PreserveTrailingSlash }, true, ""},
		{"service-upstream", "t", func(d *model.Defaults) any { return d.ServiceUpstream }, true, ""},
		{"service-upstream", "true\n", func(d *model.Defaults) any { return d.ServiceUpstream }, false, "want true or false"},
	} {
		t.Run(tc.key+"="+tc.value, func(t *testing.T) {
			// Beside a key of another area, which must keep working.
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ingress-nginx", Name: "ingress-nginx-controller"},
				Data: map[string]string{tc.key: tc.value, "proxy-body-size": "8m"}}
			cfg, problems := Parse(cm)
			if got := tc.want(&cfg.Defaults); !reflect.DeepEqual(got, tc.is) {
				t.Errorf("default = %#v, want %#v", got, tc.is)
			}
			if cfg.ProxyBodySize != 8<<20 {
				t.Errorf("proxy-body-size = %d: another key stopped working", cfg.ProxyBodySize)
			}
			switch {
			case tc.problem == "" && len(problems) > 0:
				t.Fatalf("problems %v, want none", problems)
			case tc.problem == "":
			case len(problems) != 1:
				t.Fatalf("problems %v, want one", problems)
			default:
				p := problems[0]
				prefix := `key "` + tc.key + `": value `
				if p.Object.Kind != "ConfigMap" || p.Object.Name != "ingress-nginx-controller" || p.Reason != model.ReasonInvalidConfig ||
					!strings.HasPrefix(p.Message, prefix) || !strings.Contains(p.Message, tc.problem) || !strings.HasSuffix(p.Message, "the default is used") {
					t.Fatalf("problem %v: %q; want InvalidConfig on the ConfigMap, %q...%q...", p.Object, p.Message, prefix, tc.problem)
				}
			}
		})
	}
}

// TestAnnotationDefaultKeysListed: every default of an annotation is a
// parsed key of the table, and the table's rows of these keys document
// the default the annotation registry applies.
func TestAnnotationDefaultKeysListed(t *testing.T) {
	for _, d := range annotations.DefaultKeys() {
		k, ok := LookupKey(d.Name)
		if !ok || !k.Status.Parsed() {
			t.Errorf("%s: %v %q; want a parsed key", d.Name, ok, k.Status)
		}
		a, ok := annotations.Lookup(annotations.FamilyIngressNginx, d.Name)
		if !ok || a.Status != annotations.AnnotationSupported || a.Scope != d.Scope {
			t.Errorf("%s: the annotation is %v %q scope %q; want a supported one of scope %q", d.Name, ok, a.Status, a.Scope, d.Scope)
		}
		if !strings.Contains(a.Default, "the ConfigMap's "+d.Name) {
			t.Errorf("%s: the annotation's default %q does not name the ConfigMap's key", d.Name, a.Default)
		}
	}
	if n := len(annotations.DefaultKeys()); n < 18 {
		t.Errorf("%d defaults of annotations, want the 18 of ingress-nginx's per-location keys", n)
	}
}

// TestUnusedDefaultKeys: a proxy-redirect key without its other half is
// a Problem on the ConfigMap, and still applies where an Ingress's
// annotation supplies the other half.
func TestUnusedDefaultKeys(t *testing.T) {
	cfg, problems := parseOne("proxy-redirect-to", "/app/")
	if cfg.Defaults.RedirectTo != "/app/" {
		t.Errorf("RedirectTo = %q, want /app/", cfg.Defaults.RedirectTo)
	}
	if len(problems) != 1 || !strings.HasPrefix(problems[0].Message, `key "proxy-redirect-to" only applies together with proxy-redirect-from`) {
		t.Fatalf("problems %v", problems)
	}
	if _, problems := Parse(&corev1.ConfigMap{Data: map[string]string{"proxy-redirect-to": "/app/", "proxy-redirect-from": "/"}}); len(problems) > 0 {
		t.Fatalf("problems %v, want none for a pair", problems)
	}
}
