package nic

import (
	"reflect"
	"strings"
	"testing"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
)

// TestTranslateActions: a row per rule of redirect and return actions.
// dropped is a fragment of a Problem for a setting left out while the
// route is served.
func TestTranslateActions(t *testing.T) {
	lit := func(s string) model.TemplatePart { return model.TemplatePart{Literal: s} }
	v := func(s string) model.TemplatePart { return model.TemplatePart{Variable: s} }
	redirect := func(url string, code int) *nicv1.Action {
		return &nicv1.Action{Redirect: &nicv1.ActionRedirect{URL: url, Code: code}}
	}
	ret := func(r nicv1.ActionReturn) *nicv1.Action { return &nicv1.Action{Return: &r} }
	for _, tc := range []struct {
		name         string
		action       *nicv1.Action
		err, problem string
		want         Action
	}{
		{name: "a redirect with NGINX Ingress Controller's variables", action: redirect("${scheme}://${host}/new${request_uri}", 302),
			want: Action{Redirect: &model.Redirect{Code: 302, Template: model.Template{v("scheme"), lit("://"), v("host"), lit("/new"), v("request_uri")}}}},
		{name: "x-forwarded-proto", action: redirect("${http_x_forwarded_proto}://example.com/", 0),
			want: Action{Redirect: &model.Redirect{Code: 301, Template: model.Template{v("http_x_forwarded_proto"), lit("://example.com/")}}}},
		{name: "a plain URL stays a URL", action: redirect("https://example.com/x", 0),
			want: Action{Redirect: &model.Redirect{Code: 301, URL: "https://example.com/x"}}},
		{name: "another variable leaves the route out", action: redirect("https://${remote_addr}/", 0), problem: "${remote_addr}"},
		{name: "a bare $ leaves the route out", action: redirect("https://$host/", 0), problem: "${name}"},
		{name: "a variable cannot make the URL relative", action: redirect("${request_uri}", 0), problem: "redirect.url"},
		{name: "a redirect code", action: redirect("https://example.com/", 303), err: "want 301, 302, 307 or 308"},
		{name: "a return body with variables, NGINX escapes and a type", action: ret(nicv1.ActionReturn{Code: 404,
			Body: `\"${request_uri}\" is not here; ${http_X_User}\n`, Type: "application/json"}),
			want: Action{Return: &model.Return{Status: 404, Type: "application/json",
				Body: model.Template{lit(`"`), v("request_uri"), lit(`" is not here; `), v("http_x_user"), lit("\n")}}}},
		{name: "a body defaults to 200", action: ret(nicv1.ActionReturn{Body: "ok"}),
			want: Action{Return: &model.Return{Status: 200, Body: model.Template{lit("ok")}}}},
		{name: "a body with a variable outside the list", action: ret(nicv1.ActionReturn{Body: "${upstream_addr}"}), problem: "return.body"},
		{name: "a body with an unescaped quote", action: ret(nicv1.ActionReturn{Body: `a"b`}), problem: "return.body"},
		{name: "a body with a 3xx code", action: ret(nicv1.ActionReturn{Code: 302, Body: "x"}), err: "2xx, 4xx or 5xx"},
		{name: "headers", action: ret(nicv1.ActionReturn{Code: 204, Headers: []nicv1.Header{{Name: "X-Cafe", Value: "open"}}}),
			want: Action{Return: &model.Return{Status: 204}, Headers: []model.Header{{Name: "X-Cafe", Value: "open"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := translateRoute(t, nicv1.Route{Path: "/", Action: tc.action}, tc.err, tc.problem)
			if r != nil && !reflect.DeepEqual(r.Action, tc.want) {
				t.Errorf("action %+v, want %+v", r.Action, tc.want)
			}
		})
	}
	// A bad header or type drops only itself.
	s := baseSpec()
	s.Routes[0].Action = ret(nicv1.ActionReturn{Body: "x", Type: "text/html; charset=utf-8",
		Headers: []nicv1.Header{{Name: "X-Ok", Value: "1"}, {Name: "X-Bad", Value: "${host}"}}})
	out, problems, err := TranslateVirtualServer(vs(s), nil)
	if err != nil || len(problems) != 2 || len(out.Routes) != 1 {
		t.Fatalf("err %v problems %v routes %+v", err, problems, out.Routes)
	}
	if a := out.Routes[0].Action; a.Return.Type != "" || len(a.Headers) != 1 || a.Headers[0].Name != "X-Ok" {
		t.Errorf("action %+v", a)
	}
}

// TestTranslateProxy: a row per rule of a proxy action's rewritePath and
// headers.
func TestTranslateProxy(t *testing.T) {
	lit := func(s string) model.TemplatePart { return model.TemplatePart{Literal: s} }
	v := func(s string) model.TemplatePart { return model.TemplatePart{Variable: s} }
	for _, tc := range []struct {
		name, path   string
		proxy        nicv1.ActionProxy
		err, problem string
		dropped      int
		want         *model.Policy
	}{
		{name: "a prefix route's rewritePath replaces the prefix", path: "/tea", proxy: nicv1.ActionProxy{RewritePath: "/coffee"},
			want: &model.Policy{Rewrite: &model.Rewrite{Target: "/coffee", Prefix: true}}},
		{name: "an exact route's too", path: "=/tea", proxy: nicv1.ActionProxy{RewritePath: "/"},
			want: &model.Policy{Rewrite: &model.Rewrite{Target: "/", Prefix: true}}},
		{name: "a case-insensitive regex route", path: "~* ^/tea/(.*)$", proxy: nicv1.ActionProxy{RewritePath: "/v2/$1"},
			want: &model.Policy{Rewrite: &model.Rewrite{Target: "/v2/$1"}}},
		{name: "a group the regex lacks", path: "~* ^/tea/(.*)$", proxy: nicv1.ActionProxy{RewritePath: "/v2/$2"}, problem: "rewritePath"},
		{name: "a capture on a prefix route", path: "/tea", proxy: nicv1.ActionProxy{RewritePath: "/v2/$1"}, problem: "rewritePath"},
		{name: "a variable", path: "/tea", proxy: nicv1.ActionProxy{RewritePath: "/${host}"}, problem: "rewritePath"},
		{name: "request headers", path: "/tea", proxy: nicv1.ActionProxy{RequestHeaders: &nicv1.ProxyRequestHeaders{Pass: ptrBool(false),
			Set: []nicv1.Header{{Name: "X-User", Value: "${http_x_login} from ${remote_addr}"}, {Name: "X-Bad", Value: "${upstream_addr}"}}}},
			dropped: 1,
			want: &model.Policy{NoRequestHeaders: true, Snippet: &model.Snippet{ProxySetHeaders: []model.TemplateHeader{
				{Name: "X-User", Value: model.Template{v("http_x_login"), lit(" from "), v("remote_addr")}}}}}},
		{name: "response headers", path: "/tea", proxy: nicv1.ActionProxy{ResponseHeaders: &nicv1.ProxyResponseHeaders{
			Hide: []string{"X-Powered-By"}, Pass: []string{"Server"}, Ignore: []string{"Expires", "X-Other"},
			Add: []nicv1.AddHeader{{Header: nicv1.Header{Name: "X-Cafe", Value: "open"}, Always: true}, {Header: nicv1.Header{Name: "X-Host", Value: "${host}"}}}}},
			dropped: 1,
			want: &model.Policy{ProxyPassHeaders: []string{"Server"}, ProxyIgnoreHeaders: []string{"Expires"},
				Snippet: &model.Snippet{ProxyHideHeaders: []string{"X-Powered-By"}, AddHeaders: []model.TemplateHeader{
					{Name: "X-Cafe", Value: model.Template{lit("open")}, Always: true}, {Name: "X-Host", Value: model.Template{v("host")}}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.proxy
			p.Upstream = "a"
			if tc.dropped > 0 {
				s := baseSpec()
				s.Upstreams = []nicv1.Upstream{{Name: "a", Service: "a", Port: 80}}
				s.Routes = []nicv1.Route{{Path: tc.path, Action: &nicv1.Action{Proxy: &p}}}
				out, problems, err := TranslateVirtualServer(vs(s), nil)
				if err != nil || len(problems) != tc.dropped || len(out.Routes) != 1 || !reflect.DeepEqual(out.Routes[0].Action.Policy, tc.want) {
					t.Fatalf("err %v problems %v routes %+v", err, problems, out.Routes)
				}
				return
			}
			r := translateRoute(t, nicv1.Route{Path: tc.path, Action: &nicv1.Action{Proxy: &p}}, tc.err, tc.problem)
			if r != nil && (r.Action.Upstream != "a" || !reflect.DeepEqual(r.Action.Policy, tc.want)) {
				t.Errorf("action %+v policy %+v, want %+v", r.Action, r.Action.Policy, tc.want)
			}
		})
	}
}

func ptrBool(b bool) *bool { return &b }

// TestTranslateErrorPages: a row per rule of a route's errorPages.
func TestTranslateErrorPages(t *testing.T) {
	lit := func(s string) model.TemplatePart { return model.TemplatePart{Literal: s} }
	v := func(s string) model.TemplatePart { return model.TemplatePart{Variable: s} }
	redirect := func(url string, code int) *nicv1.ErrorPageRedirect {
		return &nicv1.ErrorPageRedirect{ActionRedirect: nicv1.ActionRedirect{URL: url, Code: code}}
	}
	ret := func(r nicv1.ActionReturn) *nicv1.ErrorPageReturn { return &nicv1.ErrorPageReturn{ActionReturn: r} }
	for _, tc := range []struct {
		name         string
		pages        []nicv1.ErrorPage
		err, problem string
		want         []model.ResponsePage
	}{
		{name: "a redirect", pages: []nicv1.ErrorPage{{Codes: []int{404}, Redirect: redirect("${scheme}://example.com/missing", 0)}},
			want: []model.ResponsePage{{Codes: []int{404}, Redirect: &model.Redirect{Code: 301, Template: model.Template{v("scheme"), lit("://example.com/missing")}}}}},
		{name: "a return with the upstream's status and a header", pages: []nicv1.ErrorPage{{Codes: []int{502, 503},
			Return: ret(nicv1.ActionReturn{Code: 200, Type: "application/json", Body: `{\"status\": ${upstream_status}}`,
				Headers: []nicv1.Header{{Name: "X-Status", Value: "${upstream_status}"}}})}},
			want: []model.ResponsePage{{Codes: []int{502, 503}, Return: &model.Return{Status: 200, Type: "application/json",
				Body: model.Template{lit(`{"status": `), v("upstream_status"), lit("}")}},
				Headers: []model.TemplateHeader{{Name: "X-Status", Value: model.Template{v("upstream_status")}}}}}},
		{name: "exactly one of redirect and return", pages: []nicv1.ErrorPage{{Codes: []int{404}}}, err: "exactly one of redirect and return"},
		{name: "codes are required", pages: []nicv1.ErrorPage{{Redirect: redirect("https://example.com/", 0)}}, err: "at least one status"},
		{name: "codes are 300 to 599", pages: []nicv1.ErrorPage{{Codes: []int{200}, Redirect: redirect("https://example.com/", 0)}}, err: "want 300 to 599"},
		{name: "a return needs a body", pages: []nicv1.ErrorPage{{Codes: []int{404}, Return: ret(nicv1.ActionReturn{Code: 200})}}, err: "body is required"},
		{name: "a return code is 2xx, 4xx or 5xx", pages: []nicv1.ErrorPage{{Codes: []int{404}, Return: ret(nicv1.ActionReturn{Code: 302, Body: "x"})}},
			err: "2xx, 4xx or 5xx"},
		{name: "a redirect may not use ${host}", pages: []nicv1.ErrorPage{{Codes: []int{404}, Redirect: redirect("https://${host}/", 0)}},
			problem: "redirect.url"},
		{name: "a body may use ${upstream_status} only", pages: []nicv1.ErrorPage{{Codes: []int{404}, Return: ret(nicv1.ActionReturn{Body: "${host}"})}},
			problem: "return.body"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := baseSpec()
			s.Routes[0].ErrorPages = tc.pages
			out, problems, err := TranslateVirtualServer(vs(s), nil)
			switch {
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one with %q", err, tc.err)
				}
			case err != nil:
				t.Fatal(err)
			case tc.problem != "":
				// The page is left out; the route is served (with
				// errorPages set, so a subroute takes none of its route's).
				if len(problems) != 1 || !strings.Contains(problems[0].Message, tc.problem) || len(out.Routes) != 1 ||
					out.Routes[0].ErrorPages == nil || len(out.Routes[0].ErrorPages) != 0 {
					t.Fatalf("problems %v routes %+v", problems, out.Routes)
				}
			case len(problems) != 0 || !reflect.DeepEqual(out.Routes[0].ErrorPages, tc.want):
				t.Errorf("problems %v pages %+v, want %+v", problems, out.Routes[0].ErrorPages, tc.want)
			}
		})
	}
}
