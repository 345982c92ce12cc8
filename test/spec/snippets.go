package spec

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// Snippet rows: configuration-snippet and server-snippet, refused unless
// the ConfigMap's allow-snippet-annotations is true, and then applied as
// far as package snippet reads them.

var (
	allowSnippets = map[string]string{"allow-snippet-annotations": "true"}
	snip          = func(s string) map[string]string { return ann("configuration-snippet", s) }
	snipGet       = func(path string) Request { return get("snip.test", path) }
)

// botMap is an http-snippet map: bots by User-Agent, a friendly one let
// through by its exact name, nothing by default.
const botMap = "map $http_user_agent $is_bot {\n  friendly-crawler 0;\n  ~*(bot|crawl|spider) 1;\n}"

// SnippetTable is one row per snippet behaviour.
var SnippetTable = []AnnotationCase{
	{Name: "snippets: add_header",
		Ingresses: one("snip.test", "/", "Prefix", "app", snip(`add_header X-Frame-Options "SAMEORIGIN";`)), Config: allowSnippets,
		Request: snipGet("/"), Want: Response{Status: 200, Service: "app", Header: map[string]string{"X-Frame-Options": "SAMEORIGIN"}}},
	{Name: "snippets: add_header beside enable-cors (any origin)",
		Ingresses: one("snip.test", "/", "Prefix", "app", ann("configuration-snippet", `add_header X-Frame-Options "SAMEORIGIN";`, "enable-cors", "true")), Config: allowSnippets,
		Request: Request{Host: "snip.test", Path: "/", Header: map[string]string{"Origin": "https://app.example.com"}},
		Want:    Response{Status: 200, Service: "app", Header: map[string]string{"X-Frame-Options": "SAMEORIGIN", "Access-Control-Allow-Origin": "*"}}},
	{Name: "snippets: add_header beside enable-cors (a listed origin)",
		Ingresses: one("snip.test", "/", "Prefix", "app", ann("configuration-snippet", `add_header X-Frame-Options "SAMEORIGIN";`, "enable-cors", "true",
			"cors-allow-origin", "https://app.example.com")), Config: allowSnippets,
		Request: Request{Host: "snip.test", Path: "/", Header: map[string]string{"Origin": "https://app.example.com"}},
		Want:    Response{Status: 200, Service: "app", Header: map[string]string{"X-Frame-Options": "SAMEORIGIN", "Access-Control-Allow-Origin": "https://app.example.com"}}},
	{Name: "snippets: add_header on enable-cors's preflight (any origin)",
		Ingresses: one("snip.test", "/", "Prefix", "app", ann("configuration-snippet", `add_header X-Frame-Options "SAMEORIGIN";`, "enable-cors", "true")), Config: allowSnippets,
		Request: Request{Method: "OPTIONS", Host: "snip.test", Path: "/", Header: map[string]string{"Origin": "https://app.example.com", "Access-Control-Request-Method": "PUT"}},
		Want:    Response{Status: 204, Header: map[string]string{"X-Frame-Options": "SAMEORIGIN", "Access-Control-Allow-Origin": "*"}}},
	{Name: "snippets: add_header on enable-cors's preflight (a listed origin)",
		Ingresses: one("snip.test", "/", "Prefix", "app", ann("configuration-snippet", `add_header X-Frame-Options "SAMEORIGIN";`, "enable-cors", "true",
			"cors-allow-origin", "https://app.example.com")), Config: allowSnippets,
		Request: Request{Method: "OPTIONS", Host: "snip.test", Path: "/", Header: map[string]string{"Origin": "https://app.example.com", "Access-Control-Request-Method": "PUT"}},
		Want:    Response{Status: 204, Header: map[string]string{"X-Frame-Options": "SAMEORIGIN", "Access-Control-Allow-Origin": "https://app.example.com"}}},
	{Name: "snippets: add_header with variables",
		Ingresses: one("snip.test", "/", "Prefix", "app", snip(`add_header X-Where "$scheme|$request_uri|${request_method}|$arg_b!";`)), Config: allowSnippets,
		Request: snipGet("/a?b=1"), Want: Response{Status: 200, Service: "app", Header: map[string]string{"X-Where": "http|/a?b=1|GET|1!"}}},
	{Name: "snippets: add_header skips errors unless always",
		Ingresses: one("snip.test", "/", "Prefix", "app", snip(`add_header X-A a; add_header X-B b always;`)), Config: allowSnippets,
		Request: snipGet("/_status/503/x"), Want: Response{Status: 503, Service: "app", Header: map[string]string{"X-B": "b"}, Absent: []string{"X-A"}}},
	{Name: "snippets: set a variable and use it",
		Ingresses: one("snip.test", "/", "Prefix", "app", snip("set $tenant \"t-$arg_t\";\nadd_header X-Tenant $tenant;")), Config: allowSnippets,
		Request: snipGet("/?t=acme"), Want: Response{Status: 200, Service: "app", Header: map[string]string{"X-Tenant": "t-acme"}}},
	{Name: "snippets: more_set_headers on every status",
		Ingresses: one("snip.test", "/", "Prefix", "app", snip(`more_set_headers "X-More: yes";`)), Config: allowSnippets,
		Request: snipGet("/_status/503/x"), Want: Response{Status: 503, Service: "app", Header: map[string]string{"X-More": "yes"}}},
	{Name: "snippets: more_clear_headers removes a backend's header",
		Ingresses: one("snip.test", "/", "Prefix", "app", snip(`more_clear_headers "X-Echo-*";`)), Config: allowSnippets,
		Request: snipGet("/"), Want: Response{Status: 200, Service: "app", Absent: []string{"X-Echo-Endpoint"}}},
	{Name: "snippets: proxy_hide_header hides a backend's header",
		Ingresses: one("snip.test", "/", "Prefix", "app", snip(`proxy_hide_header X-Echo-Endpoint;`)), Config: allowSnippets,
		Request: snipGet("/"), Want: Response{Status: 200, Service: "app", Absent: []string{"X-Echo-Endpoint"}}},
	{Name: "snippets: proxy_set_header reaches the backend",
		Ingresses: one("snip.test", "/", "Prefix", "app", snip(`proxy_set_header X-Tenant "acme-$http_x_tenant_id";`)), Config: allowSnippets,
		Request: Request{Host: "snip.test", Path: "/", Header: map[string]string{"X-Tenant-Id": "42"}},
		Want:    Response{Status: 200, Service: "app", Upstream: map[string]string{"X-Tenant": "acme-42"}}},
	{Name: "snippets: proxy_set_header Host",
		Ingresses: one("snip.test", "/", "Prefix", "app", snip(`proxy_set_header Host backend.internal;`)), Config: allowSnippets,
		Request: snipGet("/"), Want: Response{Status: 200, Service: "app", Host: "backend.internal"}},
	{Name: "snippets: return answers without the backend",
		Ingresses: one("snip.test", "/", "Prefix", "app", snip(`return 418;`)), Config: allowSnippets,
		Request: snipGet("/"), Want: Response{Status: 418}},
	{Name: "snippets: return a redirect",
		Ingresses: one("snip.test", "/", "Prefix", "app", snip(`return 301 https://$host/moved$request_uri;`)), Config: allowSnippets,
		Request: snipGet("/a?b=1"), Want: Response{Status: 301, Location: "https://snip.test/moved/a?b=1"}},
	{Name: "snippets: rewrite break changes the URI",
		Ingresses: one("snip.test", "/", "Prefix", "app", snip(`rewrite ^/old/(.*)$ /new/$1 break;`)), Config: allowSnippets,
		Request: snipGet("/old/page?x=1"), Want: Response{Status: 200, Service: "app", URI: "/new/page?x=1"}},
	{Name: "snippets: rewrite permanent redirects",
		Ingresses: one("snip.test", "/", "Prefix", "app", snip(`rewrite ^/old/(.*)$ https://new.test/$1 permanent;`)), Config: allowSnippets,
		Request: snipGet("/old/page"), Want: Response{Status: 301, Location: "https://new.test/page"}},
	{Name: "snippets: expires",
		Ingresses: one("snip.test", "/", "Prefix", "app", snip(`expires 1h;`)), Config: allowSnippets,
		Request: snipGet("/"), Want: Response{Status: 200, Service: "app", Header: map[string]string{"Cache-Control": "max-age=3600"}}},
	{Name: "snippets: include refuses the whole snippet",
		Ingresses: one("snip.test", "/", "Prefix", "app", snip("add_header X-Snippet on;\ninclude /etc/passwd;")), Config: allowSnippets,
		Request: snipGet("/"), Want: Response{Status: 200, Service: "app", Absent: []string{"X-Snippet"}},
		Problems: []string{model.ReasonInvalidAnnotation}},
	{Name: "snippets: a } that closes the location is refused",
		Ingresses: one("snip.test", "/", "Prefix", "app", snip("add_header X-Snippet on; }\nlocation /etc { alias /etc/; }\nlocation /x {")), Config: allowSnippets,
		Request: snipGet("/etc/passwd"), Want: Response{Status: 200, Service: "app", URI: "/etc/passwd", Absent: []string{"X-Snippet"}},
		Problems: []string{model.ReasonInvalidAnnotation}},
	{Name: "snippets: content_by_lua_block is refused",
		Ingresses: one("snip.test", "/", "Prefix", "app", snip(`content_by_lua_block { ngx.say("owned") }`)), Config: allowSnippets,
		Request: snipGet("/"), Want: Response{Status: 200, Service: "app"},
		Problems: []string{model.ReasonInvalidAnnotation}},
	{Name: "snippets: a variable outside the allowlist is refused",
		Ingresses: one("snip.test", "/", "Prefix", "app", snip(`add_header X-Root $document_root;`)), Config: allowSnippets,
		Request: snipGet("/"), Want: Response{Status: 200, Service: "app", Absent: []string{"X-Root"}},
		Problems: []string{model.ReasonInvalidAnnotation}},
	{Name: "snippets: a return cannot bypass basic auth",
		Ingresses: one("auth.test", "/", "Prefix", "app", withAuth("configuration-snippet", "return 200;")), Secrets: authSecret, Config: allowSnippets,
		Request: authFrom("", nil), Want: Response{Status: 401},
		Problems: []string{model.ReasonInvalidAnnotation}},
	{Name: "snippets: a header snippet beside basic auth applies",
		Ingresses: one("auth.test", "/", "Prefix", "app", withAuth("configuration-snippet", "add_header X-Snippet on;")), Secrets: authSecret, Config: allowSnippets,
		Request: authFrom("", BasicCredentials("bob", "builder")), Want: Response{Status: 200, Service: "app", Header: map[string]string{"X-Snippet": "on"}}},
	{Name: "snippets: if answers when its condition holds",
		Ingresses: one("snip.test", "/", "Prefix", "app", snip(`if ($http_x_block = "yes") { return 403; }`)), Config: allowSnippets,
		Request: Request{Host: "snip.test", Path: "/", Header: map[string]string{"X-Block": "yes"}}, Want: Response{Status: 403}},
	{Name: "snippets: if lets the request through otherwise",
		Ingresses: one("snip.test", "/", "Prefix", "app", snip(`if ($http_x_block = "yes") { return 403; }`)), Config: allowSnippets,
		Request: Request{Host: "snip.test", Path: "/", Header: map[string]string{"X-Block": "no"}}, Want: Response{Status: 200, Service: "app"}},
	{Name: "snippets: if with a case-insensitive regex",
		Ingresses: one("snip.test", "/", "Prefix", "app", snip(`if ($http_user_agent ~* "badbot") { return 429; }`)), Config: allowSnippets,
		Request: Request{Host: "snip.test", Path: "/", Header: map[string]string{"User-Agent": "Mozilla BadBot/2"}}, Want: Response{Status: 429}},
	{Name: "snippets: server-snippet if redirects plain HTTP",
		Ingresses: one("snip.test", "/", "Prefix", "app", ann("server-snippet", `if ($scheme = "http") { return 308 https://$host$request_uri; }`)), Config: allowSnippets,
		Request: snipGet("/a?b=1"), Want: Response{Status: 308, Location: "https://snip.test/a?b=1"}},
	{Name: "snippets: an if that answers cannot bypass basic auth; refused, it closes the paths",
		Ingresses: one("auth.test", "/", "Prefix", "app", withAuth("configuration-snippet", `if ($http_x_let_me_in) { return 200; }`)), Secrets: authSecret, Config: allowSnippets,
		Request: authFrom("", BasicCredentials("bob", "builder")), Want: Response{Status: 503},
		Problems: []string{model.ReasonInvalidAnnotation}},
	{Name: "snippets: a refused snippet that denies closes the paths",
		Ingresses: one("snip.test", "/", "Prefix", "app", snip("limit_req zone=one;\nadd_header X-Snippet on;")), Config: allowSnippets,
		Request: snipGet("/"), Want: Response{Status: 503},
		Problems: []string{model.ReasonInvalidAnnotation}},
	{Name: "snippets: deny refuses the address",
		Ingresses: one("snip.test", "/", "Prefix", "app", snip("deny 127.0.0.5;\nadd_header X-Snippet on;")), Config: allowSnippets,
		Request: Request{Host: "snip.test", Path: "/", From: "127.0.0.5"}, Want: Response{Status: 403}},
	{Name: "snippets: deny lets other addresses in",
		Ingresses: one("snip.test", "/", "Prefix", "app", snip("deny 127.0.0.5;\nadd_header X-Snippet on;")), Config: allowSnippets,
		Request: Request{Host: "snip.test", Path: "/", From: "127.0.0.6"}, Want: Response{Status: 200, Service: "app", Header: map[string]string{"X-Snippet": "on"}}},
	{Name: "snippets: allow then deny all lets a listed client in",
		Ingresses: one("snip.test", "/", "Prefix", "app", snip("allow 127.0.0.0/24;\ndeny all;")), Config: allowSnippets,
		Request: snipGet("/"), Want: Response{Status: 200, Service: "app"}},
	{Name: "snippets: allow then deny all refuses another client",
		Ingresses: one("snip.test", "/", "Prefix", "app", snip("allow 127.0.0.0/24;\ndeny all;")), Config: allowSnippets,
		Request: Request{Host: "snip.test", Path: "/", From: "127.0.1.5"}, Want: Response{Status: 403}},
	{Name: "snippets: a snippet's allow list narrows allowlist-source-range (both must let the client in)",
		Ingresses: one("snip.test", "/", "Prefix", "app", ann("configuration-snippet", "allow 127.0.0.0/16;\ndeny all;", "allowlist-source-range", "127.0.0.5, 127.0.1.0/24")),
		Config:    allowSnippets,
		Request:   Request{Host: "snip.test", Path: "/", From: "127.0.1.9"}, Want: Response{Status: 200, Service: "app"}},
	{Name: "snippets: a snippet's deny adds to allowlist-source-range",
		Ingresses: one("snip.test", "/", "Prefix", "app", ann("configuration-snippet", "deny 127.0.1.9;", "allowlist-source-range", "127.0.1.0/24")),
		Config:    allowSnippets,
		Request:   Request{Host: "snip.test", Path: "/", From: "127.0.1.9"}, Want: Response{Status: 403}},
	{Name: "snippets: server-snippet deny applies to every path of the host",
		Ingresses: one("snip.test", "/", "Prefix", "app", ann("server-snippet", "deny 127.0.0.5;")), Config: allowSnippets,
		Request: Request{Host: "snip.test", Path: "/any", From: "127.0.0.5"}, Want: Response{Status: 403}},
	{Name: "snippets: allow lines out of nginx's order are refused, and close the paths",
		Ingresses: one("snip.test", "/", "Prefix", "app", snip("allow 127.0.0.0/8;\ndeny 127.0.0.5;\ndeny all;")), Config: allowSnippets,
		Request: snipGet("/"), Want: Response{Status: 503},
		Problems: []string{model.ReasonInvalidAnnotation}},
	{Name: "snippets: server-snippet rewrite runs before the location",
		Ingresses: one("snip.test", "/", "Prefix", "app", ann("server-snippet", `rewrite ^/legacy/(.*)$ /v2/$1 last;`)), Config: allowSnippets,
		Request: snipGet("/legacy/x"), Want: Response{Status: 200, Service: "app", URI: "/v2/x"}},
	{Name: "snippets: server-snippet headers apply to every path",
		Ingresses: one("snip.test", "/", "Prefix", "app", ann("server-snippet", `add_header X-Host-Wide on;`)), Config: allowSnippets,
		Request: snipGet("/any"), Want: Response{Status: 200, Service: "app", Header: map[string]string{"X-Host-Wide": "on"}}},
	{Name: "snippets: server-snippet return is refused beside an allowlist",
		Ingresses: one("snip.test", "/", "Prefix", "app", ann("server-snippet", `return 200;`, "allowlist-source-range", "10.0.0.0/8")), Config: allowSnippets,
		Request: snipGet("/"), Want: Response{Status: 403},
		Problems: []string{model.ReasonInvalidAnnotation}},
}

// SnippetDefaultTable are the rows without allow-snippet-annotations,
// which need a controller of their own.
var SnippetDefaultTable = []AnnotationCase{
	{Name: "snippets: refused by default, the Ingress is served without it",
		Ingresses: one("snip.test", "/", "Prefix", "app", ann("configuration-snippet", `add_header X-Snippet on;`, "server-snippet", `add_header X-Server on;`)),
		Request:   snipGet("/"), Want: Response{Status: 200, Service: "app", Absent: []string{"X-Snippet", "X-Server"}},
		Problems: []string{model.ReasonUnsupportedAnnotation, model.ReasonUnsupportedAnnotation}},
}

// SnippetConfigTable are the rows of the ConfigMap's server-snippet and
// location-snippet, which apply to every Ingress: a controller of their
// own.
var SnippetConfigTable = []AnnotationCase{
	{Name: "snippets: the ConfigMap's location-snippet and server-snippet apply to every path, ahead of the Ingress's",
		Ingresses: one("snip.test", "/", "Prefix", "app", snip(`add_header X-Own own; proxy_set_header X-Tenant own;`)),
		Config: map[string]string{"allow-snippet-annotations": "true", "server-snippet": "rewrite ^/legacy/(.*)$ /v2/$1 last;\nadd_header X-Srv srv;",
			"location-snippet": "add_header X-Loc loc;\nproxy_set_header X-Tenant config;"},
		Request: snipGet("/legacy/x"), Want: Response{Status: 200, Service: "app", URI: "/v2/x",
			Header: map[string]string{"X-Own": "own", "X-Srv": "srv", "X-Loc": "loc"}, Upstream: map[string]string{"X-Tenant": "own"}}},
	{Name: "snippets: the ConfigMap's snippets need allow-snippet-annotations",
		Ingresses: one("snip.test", "/", "Prefix", "app", nil),
		Config:    map[string]string{"location-snippet": "add_header X-Loc loc;"},
		Request:   snipGet("/"), Want: Response{Status: 200, Service: "app", Absent: []string{"X-Loc"}},
		Problems: []string{model.ReasonInvalidConfig}},
	{Name: "snippets: the ConfigMap's http-snippet deny applies to every path",
		Ingresses: one("snip.test", "/", "Prefix", "app", ann("allowlist-source-range", "127.0.0.0/8")),
		Config:    map[string]string{"allow-snippet-annotations": "true", "http-snippet": "deny 127.0.0.5;"},
		Request:   Request{Host: "snip.test", Path: "/", From: "127.0.0.5"}, Want: Response{Status: 403}},
	{Name: "snippets: the ConfigMap's http-snippet deny lets other clients in",
		Ingresses: one("snip.test", "/", "Prefix", "app", nil),
		Config:    map[string]string{"allow-snippet-annotations": "true", "http-snippet": "deny 127.0.0.5;"},
		Request:   Request{Host: "snip.test", Path: "/", From: "127.0.0.6"}, Want: Response{Status: 200, Service: "app"}},
	{Name: "snippets: a path whose snippet answers closes under a server-snippet allow list",
		Ingresses: []Ingress{
			{Name: "web", Host: "snip.test", Paths: []Route{{"/", "Prefix", "app"}}, Annotations: map[string]string{"server-snippet": "allow 127.0.0.0/24;\ndeny all;"}},
			{Name: "ok", Host: "snip.test", Paths: []Route{{"/ok", "Prefix", "app"}}, Annotations: map[string]string{"configuration-snippet": `return 200 "ok";`}},
		},
		Config:  allowSnippets,
		Request: snipGet("/ok"), Want: Response{Status: 503},
		Problems: []string{model.ReasonInvalidAnnotation}},
	{Name: "snippets: an http-snippet map read by a configuration-snippet (a regex key)",
		Ingresses: one("snip.test", "/", "Prefix", "app", snip("if ($is_bot) { return 429; }")),
		Config:    map[string]string{"allow-snippet-annotations": "true", "http-snippet": botMap},
		Request:   Request{Host: "snip.test", Path: "/", Header: map[string]string{"User-Agent": "Mozilla/5.0 Googlebot/2.1"}}, Want: Response{Status: 429}},
	{Name: "snippets: an http-snippet map read by a configuration-snippet (a literal key)",
		Ingresses: one("snip.test", "/", "Prefix", "app", snip("if ($is_bot) { return 429; }\nadd_header X-Bot \"b=$is_bot\";")),
		Config:    map[string]string{"allow-snippet-annotations": "true", "http-snippet": botMap},
		Request:   Request{Host: "snip.test", Path: "/", Header: map[string]string{"User-Agent": "friendly-crawler"}},
		Want:      Response{Status: 200, Service: "app", Header: map[string]string{"X-Bot": "b=0"}}},
	{Name: "snippets: an http-snippet map's default",
		Ingresses: one("snip.test", "/", "Prefix", "app", snip("add_header X-Bot \"b=$is_bot\";")),
		Config:    map[string]string{"allow-snippet-annotations": "true", "http-snippet": botMap},
		Request:   snipGet("/"), Want: Response{Status: 200, Service: "app", Header: map[string]string{"X-Bot": "b="}}},
	{Name: "snippets: a snippet reading a variable no map defines is refused",
		Ingresses: one("snip.test", "/", "Prefix", "app", snip("add_header X-Bot $is_bot;")),
		Config:    allowSnippets,
		Request:   snipGet("/"), Want: Response{Status: 200, Service: "app", Absent: []string{"X-Bot"}},
		Problems: []string{model.ReasonInvalidAnnotation}},
	{Name: "snippets: the ConfigMap's location-snippet may not answer",
		Ingresses: one("snip.test", "/", "Prefix", "app", nil),
		Config:    map[string]string{"allow-snippet-annotations": "true", "location-snippet": "return 200;"},
		Request:   snipGet("/"), Want: Response{Status: 200, Service: "app"},
		Problems: []string{model.ReasonInvalidConfig}},
}

// snippetState is what a request's snippets read and change: nginx's
// variables, the URI and the variables the snippet set.
type snippetState struct {
	r           Request
	host        string
	path, query string
	set         map[string]string
	groups      []string
	// rewritten says that a rewrite changed the URI.
	rewritten bool
	// maps are the http-snippet's, read when their variable is.
	maps []model.SnippetMap
}

func newSnippetState(r Request, host, path, query string) *snippetState {
	return &snippetState{r: r, host: host, path: path, query: query, set: map[string]string{}}
}

func (s *snippetState) variable(name string) string {
	switch name {
	case "host", "server_name":
		return s.host
	case "request_uri":
		return s.r.Path
	case "uri", "document_uri":
		return s.path
	case "args", "query_string":
		return s.query
	case "is_args":
		if s.query != "" {
			return "?"
		}
		return ""
	case "scheme":
		return s.r.Scheme
	case "request_method":
		return s.r.Method
	}
	if len(name) == 1 && name[0] >= '1' && name[0] <= '9' {
		if n := int(name[0] - '0'); n < len(s.groups) {
			return s.groups[n]
		}
		return ""
	}
	if v, ok := s.set[name]; ok {
		return v
	}
	for _, m := range s.maps {
		if m.Variable == name {
			return s.mapped(m)
		}
	}
	if h, ok := strings.CutPrefix(name, "http_"); ok {
		for k, v := range s.r.Header {
			if strings.EqualFold(strings.ReplaceAll(k, "-", "_"), h) {
				return v
			}
		}
	}
	if a, ok := strings.CutPrefix(name, "arg_"); ok {
		for _, kv := range strings.Split(s.query, "&") {
			if k, v, _ := strings.Cut(kv, "="); k == a {
				return v
			}
		}
	}
	return ""
}

// mapped is a map's value as nginx finds it: a literal key equal to the
// source, else the first regex that matches, else the default.
func (s *snippetState) mapped(m model.SnippetMap) string {
	src := s.expand(m.Source)
	for _, e := range m.Entries {
		if e.Op == "" && e.Key == src {
			return s.expand(e.Value)
		}
	}
	for _, e := range m.Entries {
		re := e.Key
		if e.Op == "~*" {
			re = "(?i)" + re
		}
		if e.Op != "" && regexp.MustCompile(re).MatchString(src) {
			return s.expand(e.Value)
		}
	}
	return s.expand(m.Default)
}

func (s *snippetState) expand(t model.Template) string {
	var b strings.Builder
	for _, p := range t {
		if p.Variable != "" {
			b.WriteString(s.variable(p.Variable))
		} else {
			b.WriteString(p.Literal)
		}
	}
	return b.String()
}

// run runs rewrite-module steps as nginx does; it returns the answer of a
// return or a redirecting rewrite, or nil. "last" is read as "break": the
// rows do not change location with it.
func (s *snippetState) run(sn *model.Snippet) *Response {
	if sn == nil {
		return nil
	}
	for _, st := range sn.Steps {
		switch {
		case st.If != nil:
			if s.holds(st.If) {
				if ans := s.run(&model.Snippet{Steps: st.If.Then}); ans != nil || s.rewritten {
					return ans
				}
			}
		case st.Set != nil:
			s.set[st.Set.Name] = s.expand(st.Set.Value)
		case st.Return != nil:
			r := &Response{Status: st.Return.Code, Header: map[string]string{}}
			if st.Return.Code >= 301 && st.Return.Code <= 308 {
				r.Location = s.expand(st.Return.Text)
			}
			return r
		case st.Rewrite != nil:
			rw := st.Rewrite
			m := regexp.MustCompile(rw.Regex).FindStringSubmatch(s.path)
			if m == nil {
				continue
			}
			s.groups = m
			target := s.expand(rw.Replacement)
			if rw.Redirects() {
				code := 302
				if rw.Flag == model.RewritePermanent {
					code = 301
				}
				if s.query != "" {
					target += "?" + s.query
				}
				return &Response{Status: code, Location: target, Header: map[string]string{}}
			}
			s.path, s.rewritten = target, true
			if rw.Flag != model.RewriteNone {
				return nil
			}
		}
	}
	return nil
}

// holds evaluates an if condition as nginx does.
func (s *snippetState) holds(c *model.SnippetIf) bool {
	v := s.variable(c.Variable)
	switch c.Op {
	case "":
		return v != "" && v != "0"
	case "=":
		return v == c.Value
	case "!=":
		return v != c.Value
	}
	re := c.Value
	if strings.HasSuffix(c.Op, "*") {
		re = "(?i)" + re
	}
	return regexp.MustCompile(re).MatchString(v) != strings.HasPrefix(c.Op, "!")
}

// addHeaderStatuses are the statuses add_header applies to without
// always.
var addHeaderStatuses = []int{200, 201, 204, 206, 301, 302, 303, 304, 307, 308}

// applySnippetHeaders adds the response and upstream headers of the
// location's snippets (the server's, then its own) to out.
func (s *snippetState) applyHeaders(out *Response, sns ...*model.Snippet) {
	for _, sn := range sns {
		if sn == nil {
			continue
		}
		if out.Header == nil {
			out.Header = map[string]string{}
		}
		for _, h := range sn.AddHeaders {
			if h.Always || slices.Contains(addHeaderStatuses, out.Status) {
				out.Header[h.Name] = s.expand(h.Value)
			}
		}
		for _, m := range sn.MoreSet {
			if len(m.Types) == 0 && (len(m.Statuses) == 0 || slices.Contains(m.Statuses, out.Status)) {
				for _, h := range m.Headers {
					out.Header[h.Name] = s.expand(h.Value)
				}
			}
		}
		for _, m := range sn.MoreClear {
			for _, h := range m.Headers {
				prefix, wild := strings.CutSuffix(h.Name, "*")
				for k := range out.Header {
					if strings.EqualFold(k, h.Name) || wild && len(k) >= len(prefix) && strings.EqualFold(k[:len(prefix)], prefix) {
						delete(out.Header, k)
					}
				}
			}
		}
		if e := sn.Expires; e != nil && e.Mode == "" && e.Time > 0 && slices.Contains(addHeaderStatuses, out.Status) {
			out.Header["Cache-Control"] = "max-age=" + strconv.Itoa(int(e.Time.Seconds()))
		}
		if out.Service == "" {
			continue
		}
		for _, h := range sn.ProxySetHeaders {
			if strings.EqualFold(h.Name, "Host") {
				out.Host = s.expand(h.Value)
				continue
			}
			if out.Upstream == nil {
				out.Upstream = map[string]string{}
			}
			out.Upstream[h.Name] = s.expand(h.Value)
		}
	}
}

// uri is the request URI the backend gets after the snippets' rewrites.
func (s *snippetState) uri() string {
	if s.query != "" {
		return s.path + "?" + s.query
	}
	return s.path
}
