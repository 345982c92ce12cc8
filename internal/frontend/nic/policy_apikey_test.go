package nic

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
)

// TestAPIKeyPolicy: apiKey, a row per rule.
func TestAPIKeyPolicy(t *testing.T) {
	ak := func(secret string, headers, query []string) nicv1.PolicySpec {
		return nicv1.PolicySpec{APIKey: &nicv1.APIKey{ClientSecret: secret, SuppliedIn: &nicv1.SuppliedIn{Header: headers, Query: query}}}
	}
	for _, tc := range []struct {
		name string
		spec nicv1.PolicySpec
		want *APIKey
		err  string
	}{
		{name: "header and query", spec: ak("keys", []string{"X-API-Key"}, []string{"apikey"}),
			want: &APIKey{Headers: []string{"X-API-Key"}, Query: []string{"apikey"}, Secret: "keys"}},
		{name: "namespace/name of the Policy's namespace", spec: ak("shop/keys", []string{"X-Key"}, nil),
			want: &APIKey{Headers: []string{"X-Key"}, Secret: "keys"}},
		{name: "another namespace", spec: ak("other/keys", []string{"X-Key"}, nil), err: "Policy's namespace"},
		{name: "no Secret", spec: ak("", []string{"X-Key"}, nil), err: "clientSecret is required"},
		{name: "a Secret name that is no name", spec: ak("Keys!", []string{"X-Key"}, nil), err: "clientSecret"},
		{name: "nowhere to supply it", spec: ak("keys", nil, nil), err: "at least one header or query"},
		{name: "no suppliedIn", spec: nicv1.PolicySpec{APIKey: &nicv1.APIKey{ClientSecret: "keys"}}, err: "at least one header or query"},
		{name: "header with an underscore, which nginx drops", spec: ak("keys", []string{"x_api_key"}, nil), err: "suppliedIn.header[0]"},
		{name: "header that would inject", spec: ak("keys", []string{`x"; deny all; #`}, nil), err: "suppliedIn.header[0]"},
		{name: "query that would inject", spec: ak("keys", nil, []string{"a b"}), err: "suppliedIn.query[0]"},
		{name: "query with a variable", spec: ak("keys", nil, []string{"$host"}), err: "suppliedIn.query[0]"},
		{name: "header listed twice", spec: ak("keys", []string{"X-Key", "x-key"}, nil), err: "listed twice"},
		{name: "query listed twice", spec: ak("keys", nil, []string{"k", "K"}), err: "listed twice"},
		{name: "too many names", spec: ak("keys", strings.Split("a b c d e f g h i j k l m n o p q", " "), nil), err: "more than 16"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := translatePolicyCase(t, tc.spec, tc.err, nil)
			if out == nil {
				return
			}
			if out.Kind != "apiKey" || !reflect.DeepEqual(out.APIKey, tc.want) {
				t.Errorf("policy %s %+v, want %+v", out.Kind, out.APIKey, tc.want)
			}
		})
	}
}

// TestCORSPolicy: cors maps onto enable-cors's model.CORS.
func TestCORSPolicy(t *testing.T) {
	cors := func(c nicv1.CORS) nicv1.PolicySpec { return nicv1.PolicySpec{CORS: &c} }
	for _, tc := range []struct {
		name string
		spec nicv1.PolicySpec
		want *model.CORS
		err  string
	}{
		{name: "any origin", spec: cors(nicv1.CORS{AllowOrigin: []string{"*"}}), want: &model.CORS{AllowAnyOrigin: true}},
		{name: "every field", spec: cors(nicv1.CORS{AllowOrigin: []string{"https://a.example", "https://*.b.example:8443"},
			AllowMethods: []string{"GET", "POST"}, AllowHeaders: []string{"X-Req"}, ExposeHeaders: []string{"X-Resp"},
			AllowCredentials: ptr.To(true), MaxAge: ptr.To(600)}),
			want: &model.CORS{Origins: []string{"https://a.example", "https://*.b.example:8443"}, Methods: []string{"GET", "POST"},
				Headers: []string{"X-Req"}, ExposeHeaders: []string{"X-Resp"}, Credentials: true, MaxAge: 600 * time.Second}},
		{name: "a default port is dropped", spec: cors(nicv1.CORS{AllowOrigin: []string{"https://a.example:443"}}),
			want: &model.CORS{Origins: []string{"https://a.example"}}},
		{name: "headers *", spec: cors(nicv1.CORS{AllowOrigin: []string{"https://a.example"}, AllowHeaders: []string{"*"}}),
			want: &model.CORS{Origins: []string{"https://a.example"}, Headers: []string{"*"}}},
		{name: "no origin", spec: cors(nicv1.CORS{}), err: "allowOrigin is required"},
		{name: "* with others", spec: cors(nicv1.CORS{AllowOrigin: []string{"*", "https://a.example"}}), err: "stand alone"},
		{name: "* with credentials", spec: cors(nicv1.CORS{AllowOrigin: []string{"*"}, AllowCredentials: ptr.To(true)}), err: "allowCredentials"},
		{name: "origin with a path", spec: cors(nicv1.CORS{AllowOrigin: []string{"https://a.example/x"}}), err: "allowOrigin[0]"},
		{name: "origin that would inject", spec: cors(nicv1.CORS{AllowOrigin: []string{`https://a.example"; return 200; #`}}), err: "allowOrigin[0]"},
		{name: "a method NGINX Ingress Controller refuses", spec: cors(nicv1.CORS{AllowOrigin: []string{"*"}, AllowMethods: []string{"TRACE"}}), err: "allowMethods[0]"},
		{name: "a header that would inject", spec: cors(nicv1.CORS{AllowOrigin: []string{"*"}, ExposeHeaders: []string{"X;y"}}), err: "exposeHeaders[0]"},
		{name: "* among headers", spec: cors(nicv1.CORS{AllowOrigin: []string{"*"}, AllowHeaders: []string{"X", "*"}}), err: "stand alone"},
		{name: "max age over a year", spec: cors(nicv1.CORS{AllowOrigin: []string{"*"}, MaxAge: ptr.To(maxCORSMaxAge + 1)}), err: "maxAge"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := translatePolicyCase(t, tc.spec, tc.err, nil)
			if out == nil {
				return
			}
			if out.Kind != "cors" || !reflect.DeepEqual(out.CORS, tc.want) {
				t.Errorf("policy %s %+v, want %+v", out.Kind, out.CORS, tc.want)
			}
		})
	}
}

// TestHSTSPolicy: hsts, a row per rule.
func TestHSTSPolicy(t *testing.T) {
	h := func(maxAge *int, sub, preload, proxy bool) nicv1.PolicySpec {
		return nicv1.PolicySpec{HSTS: &nicv1.HSTS{MaxAge: maxAge, IncludeSubDomains: sub, Preload: preload, BehindProxy: proxy}}
	}
	for _, tc := range []struct {
		name string
		spec nicv1.PolicySpec
		want *model.ServerHSTS
		err  string
	}{
		{name: "max age only", spec: h(ptr.To(300), false, false, false),
			want: &model.ServerHSTS{HSTS: model.HSTS{Enabled: true, MaxAge: 300}}},
		{name: "zero: browsers forget the host", spec: h(ptr.To(0), false, false, false),
			want: &model.ServerHSTS{HSTS: model.HSTS{Enabled: true}}},
		{name: "everything", spec: h(ptr.To(63072000), true, true, true),
			want: &model.ServerHSTS{HSTS: model.HSTS{Enabled: true, MaxAge: 63072000, IncludeSubdomains: true, Preload: true}, BehindProxy: true}},
		{name: "no max age", spec: h(nil, false, false, false), err: "maxAge is required"},
		{name: "negative", spec: h(ptr.To(-1), false, false, false), err: "maxAge -1"},
		{name: "preload without subdomains", spec: h(ptr.To(63072000), false, true, false), err: "preload"},
		{name: "preload under a year", spec: h(ptr.To(600), true, true, false), err: "preload"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := translatePolicyCase(t, tc.spec, tc.err, nil)
			if out == nil {
				return
			}
			if out.Kind != "hsts" || !reflect.DeepEqual(out.HSTS, tc.want) {
				t.Errorf("policy %s %+v, want %+v", out.Kind, out.HSTS, tc.want)
			}
		})
	}
}
