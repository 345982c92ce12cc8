package render

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/snippet"
)

// mustSnippet parses a snippet for a test Model.
func mustSnippet(t testing.TB, src string, ctx snippet.Context) *model.Snippet {
	t.Helper()
	s, err := snippet.Parse(src, ctx)
	if err != nil {
		t.Fatalf("snippet %q: %v", src, err)
	}
	return s
}

// snippetModel has the ConfigMap's server and location snippets, a host
// with a server snippet and locations with configuration snippets: one beside the ConfigMap's add-headers,
// proxy-set-headers and hide-headers (which a location that sets its own
// must repeat), one that answers, one gRPC.
func snippetModel(t testing.TB) *model.Model {
	loc2 := func(path string, src string) *model.Location {
		return loc(model.Prefix, path, &model.Policy{Snippet: mustSnippet(t, src, snippet.Location)})
	}
	grpc := loc2("/grpc", `proxy_set_header X-Tenant "acme"; proxy_hide_header X-Internal;`)
	grpc.Policy.Protocol = model.ProtocolGRPC
	grpc.Action = model.ProxyTo("shop/grpc/grpc")
	m := policyModel(&model.Server{Host: "snippets.example.com", Policy: &model.ServerPolicy{
		Snippet: mustSnippet(t, "if ($http_x_forwarded_proto = \"http\") { return 301 https://$host$request_uri; }\n"+
			"rewrite ^/old/(.*)$ /new/$1 permanent;\nadd_header X-Server \"s\";\nmore_clear_headers X-Powered-*;", snippet.Server)},
		Locations: []*model.Location{
			loc2("/", "add_header X-Frame-Options \"SAMEORIGIN\" always;\n"+
				"add_header X-Where \"$host${request_uri}\\\"q\\\" {;#}\";\n"+
				"more_set_headers -s \"404 500\" -t text/html \"X-Err: $status\";\n"+
				"proxy_set_header Host \"backend.internal\";\nproxy_set_header X-Tenant $http_x_tenant;\n"+
				"proxy_hide_header X-Powered-By;\nexpires modified 1h;"),
			loc2("/api", "set $tenant \"t-$arg_t\";\nif ($http_x_block = \"yes\") { return 403 \"blocked\"; }\n"+
				"if ($http_user_agent ~* \"(bot|crawl)\") { set $robot 1; rewrite ^/(.*) /robots/$1 last; }\n"+
				"rewrite ^/api/v1/(.*)$ /v2/$1 break;\nadd_header X-Tenant $tenant;"),
			loc2("/health", "return 200 \"ok: $host\";"),
			// $request_id reads as in ingress-nginx: the ID sent upstream
			// when the client sent none (requestIDAlias).
			loc2("/id", "if ($request_id = \"x\") { return 404; }\nadd_header X-Id \"id-$request_id\";"),
			grpc,
			loc(model.Prefix, "/plain", nil),
			// The http-snippet's map variable, read by a location.
			loc(model.Prefix, "/bots", &model.Policy{Snippet: mustSnippetReading(t, "if ($is_bot) { return 403; }\nadd_header X-Bot $is_bot;", "is_bot")}),
		}})
	m.Config.AddHeaders = []model.Header{{Name: "X-Global", Value: "g"}}
	m.Config.ProxySetHeaders = []model.Header{{Name: "X-Tenant", Value: "default"}, {Name: "X-Env", Value: "prod"}}
	m.Config.HideHeaders = []string{"X-Debug"}
	// The ConfigMap's snippets apply to every server and location, ahead
	// of the Ingresses' own.
	m.Config.ServerSnippet = mustSnippet(t, "rewrite ^/legacy$ /api last;\nproxy_hide_header X-Backend;", snippet.Server)
	m.Config.LocationSnippet = mustSnippet(t, "add_header X-Config \"c\";", snippet.Location)
	// A refused server-snippet's deny-only locations: one of its own, and
	// two that nginx would read as duplicates of /plain's, which close
	// those instead.
	srv := m.Servers[len(m.Servers)-1]
	srv.Closed = []model.ClosedLocation{{Modifier: "~", Path: `/\.git`}, {Modifier: "=", Path: "/plain"}, {Modifier: "^~", Path: "/plain/"},
		{Modifier: "~*", Path: `\.(bak|sql)$`}}
	m.Config.HTTPSnippet = mustSnippet(t, "map \"$http_user_agent:$arg_bot\" $is_bot {\n  default 0;\n  \"\" 0;\n  \"curl/8.0:\" \"curl ${host}\";\n"+
		"  ~*(bot|crawl) 1;\n  ~:yes 1;\n}", snippet.HTTP)
	return m
}

// mustSnippetReading parses a location snippet that may read known.
func mustSnippetReading(t testing.TB, src string, known ...string) *model.Snippet {
	t.Helper()
	s, err := snippet.ParseReading(src, snippet.Location, known)
	if err != nil {
		t.Fatalf("snippet %q: %v", src, err)
	}
	return s
}

// TestSnippetGolden renders snippets into testdata/policy-snippets
// (plain) and testdata/lua-policy-snippets, with headers-more loaded.
func TestSnippetGolden(t *testing.T) {
	for _, plane := range []string{"plain", "lua"} {
		dir := "policy-snippets"
		params := goldenParams
		params.HeadersMoreModule = "/usr/lib/nginx/modules/ngx_http_headers_more_filter_module.so"
		if plane == "lua" {
			dir = "lua-" + dir
			params.Dynamic = &Dynamic{Modules: []string{"/usr/lib/nginx/modules/ndk_http_module.so", "/usr/lib/nginx/modules/ngx_http_lua_module.so"}}
		}
		t.Run(dir, func(t *testing.T) {
			out, err := Render(snippetModel(t), params)
			if err != nil {
				t.Fatal(err)
			}
			compareGolden(t, filepath.Join("testdata", dir, "golden"), out.Files)
		})
	}
}

// TestSnippetNeedsHeadersMore: more_* directives without the module are
// an error (the build refuses such snippets first), never a config that
// nginx would reject.
func TestSnippetNeedsHeadersMore(t *testing.T) {
	if _, err := Render(snippetModel(t), goldenParams); err == nil || !strings.Contains(err.Error(), "headers-more") {
		t.Fatalf("Render without headers-more: %v, want an error naming it", err)
	}
}

// TestSnippetRenderRefuses: values the model should never hold are
// refused by the renderer's own checks.
func TestSnippetRenderRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    model.Snippet
	}{
		{"a literal with $", model.Snippet{AddHeaders: []model.TemplateHeader{{Name: "X", Value: model.Template{{Literal: "$host"}}}}}},
		{"a bad variable name", model.Snippet{AddHeaders: []model.TemplateHeader{{Name: "X", Value: model.Template{{Variable: "a}b"}}}}}},
		{"Causeway's variable", model.Snippet{Steps: []model.SnippetStep{{Set: &model.SetVariable{Name: "causeway_backend"}}}}},
		{"a header name with a space", model.Snippet{AddHeaders: []model.TemplateHeader{{Name: "X Y"}}}},
		{"a control character", model.Snippet{AddHeaders: []model.TemplateHeader{{Name: "X", Value: model.Template{{Literal: "a\nb"}}}}}},
		{"an unanchored rewrite", model.Snippet{Steps: []model.SnippetStep{{Rewrite: &model.SnippetRewrite{Regex: "/a", Replacement: model.Template{{Literal: "/b"}}}}}}},
		{"a rewrite regex with a quote", model.Snippet{Steps: []model.SnippetStep{{Rewrite: &model.SnippetRewrite{Regex: `^/a"`, Replacement: model.Template{{Literal: "/b"}}}}}}},
		{"a bad flag", model.Snippet{Steps: []model.SnippetStep{{Rewrite: &model.SnippetRewrite{Regex: "^/a", Replacement: model.Template{{Literal: "/b"}}, Flag: "last; include x"}}}}},
		{"a bad return code", model.Snippet{Steps: []model.SnippetStep{{Return: &model.SnippetReturn{Code: 1000}}}}},
		{"an empty step", model.Snippet{Steps: []model.SnippetStep{{}}}},
		{"if on a bad variable", model.Snippet{Steps: []model.SnippetStep{{If: &model.SnippetIf{Variable: "a b", Then: []model.SnippetStep{{Return: &model.SnippetReturn{Code: 200}}}}}}}},
		{"if with a bad operator", model.Snippet{Steps: []model.SnippetStep{{If: &model.SnippetIf{Variable: "a", Op: "==", Value: "b", Then: []model.SnippetStep{{Return: &model.SnippetReturn{Code: 200}}}}}}}},
		{"if with a quote in its text", model.Snippet{Steps: []model.SnippetStep{{If: &model.SnippetIf{Variable: "a", Op: "=", Value: `b"`, Then: []model.SnippetStep{{Return: &model.SnippetReturn{Code: 200}}}}}}}},
		{"if with a $ in its regex", model.Snippet{Steps: []model.SnippetStep{{If: &model.SnippetIf{Variable: "a", Op: "~", Value: `b$`, Then: []model.SnippetStep{{Return: &model.SnippetReturn{Code: 200}}}}}}}},
		{"if in if", model.Snippet{Steps: []model.SnippetStep{{If: &model.SnippetIf{Variable: "a", Then: []model.SnippetStep{{If: &model.SnippetIf{Variable: "a"}}}}}}}},
		{"empty if", model.Snippet{Steps: []model.SnippetStep{{If: &model.SnippetIf{Variable: "a"}}}}},
		{"a bad expires mode", model.Snippet{Expires: &model.Expires{Mode: "forever"}}},
		{"a bad content type", model.Snippet{MoreSet: []model.MoreHeaders{{Types: []string{`a/b"`}, Headers: []model.TemplateHeader{{Name: "X"}}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.s
			if _, err := planSnippet(nil, &s, nil); err == nil {
				t.Fatal("planSnippet accepted it")
			}
		})
	}
	src := model.Template{{Variable: "http_user_agent"}}
	one := model.Template{{Literal: "1"}}
	for _, tc := range []struct {
		name string
		m    model.SnippetMap
	}{
		{"Causeway's variable", model.SnippetMap{Source: src, Variable: "causeway_backend"}},
		{"a bad variable name", model.SnippetMap{Source: src, Variable: "a b"}},
		{"a literal key with ~", model.SnippetMap{Source: src, Variable: "v", Entries: []model.MapEntry{{Key: "~x", Value: one}}}},
		{"a literal key with \\", model.SnippetMap{Source: src, Variable: "v", Entries: []model.MapEntry{{Key: `\x`, Value: one}}}},
		{"a literal key default", model.SnippetMap{Source: src, Variable: "v", Entries: []model.MapEntry{{Key: "default", Value: one}}}},
		{"a regex key with $", model.SnippetMap{Source: src, Variable: "v", Entries: []model.MapEntry{{Op: "~", Key: "a$", Value: one}}}},
		{"a bad operator", model.SnippetMap{Source: src, Variable: "v", Entries: []model.MapEntry{{Op: "=", Key: "a", Value: one}}}},
		{"a value with $ in a literal", model.SnippetMap{Source: src, Variable: "v", Entries: []model.MapEntry{{Key: "a", Value: model.Template{{Literal: "$x"}}}}}},
	} {
		t.Run("map: "+tc.name, func(t *testing.T) {
			if _, err := planSnippetMaps(&model.Snippet{Maps: []model.SnippetMap{tc.m}}); err == nil {
				t.Fatal("planSnippetMaps accepted it")
			}
		})
	}
}

// renderSnippet prints a snippet's directives as a location would, in
// the order nginx runs them, for the round-trip check.
func renderSnippet(s *model.Snippet) (string, error) {
	v, err := planSnippet(nil, s, nil)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	var steps func([]stepView)
	steps = func(sv []stepView) {
		for _, st := range sv {
			switch {
			case st.If != nil:
				b.WriteString("if (" + st.If.Cond + ") {\n")
				steps(st.If.Then)
				b.WriteString("}\n")
			case st.Set != "":
				b.WriteString("set $" + st.Set + " " + st.Value + ";\n")
			case st.Regex != "":
				// The renderer prints end anchors as \z, which the grammar
				// (model.ParseRegex) writes "$"; no other \z can occur.
				b.WriteString("rewrite " + strings.ReplaceAll(st.Regex, `\\z`, "$") + " " + st.Replacement + " " + st.Flag + ";\n")
			default:
				b.WriteString("return " + strconv.Itoa(st.Code) + " " + st.Text + ";\n")
			}
		}
	}
	steps(v.Steps)
	if a := s.Access; a != nil {
		// Printed by the location's policy (templates/server.conf.tmpl,
		// "The access module"), in its order.
		for _, d := range accessLines(a.Deny) {
			b.WriteString("deny " + d + ";\n")
		}
		for _, d := range accessLines(a.Allow) {
			b.WriteString("allow " + d + ";\n")
		}
		if len(a.Allow) > 0 {
			b.WriteString("deny all;\n")
		}
	}
	for _, h := range v.AddHeaders {
		always := ""
		if h.Always {
			always = " always"
		}
		b.WriteString("add_header " + h.Name + " " + h.Value + always + ";\n")
	}
	for _, m := range v.More {
		b.WriteString(m.Directive)
		if m.Status != "" {
			b.WriteString(" -s " + m.Status)
		}
		if m.Types != "" {
			b.WriteString(" -t " + m.Types)
		}
		b.WriteString(" " + strings.Join(m.Args, " ") + ";\n")
	}
	for _, h := range s.ProxySetHeaders {
		hv, err := templateHeaders([]model.TemplateHeader{h})
		if err != nil {
			return "", err
		}
		b.WriteString("proxy_set_header " + hv[0].Name + " " + hv[0].Value + ";\n")
	}
	for _, h := range v.Hide {
		b.WriteString("proxy_hide_header " + h + ";\n")
	}
	if v.Expires != "" {
		b.WriteString("expires " + v.Expires + ";\n")
	}
	return b.String(), nil
}

// normalize drops what printing changes: a return's empty text, an
// empty more_set_headers value, and repeated proxy_hide_header names
// (printed once).
func normalize(s *model.Snippet) {
	seen := map[string]bool{}
	var hide []string
	for _, n := range s.ProxyHideHeaders {
		if k := strings.ToLower(n); !seen[k] {
			seen[k] = true
			hide = append(hide, n)
		}
	}
	s.ProxyHideHeaders = hide
	var steps func([]model.SnippetStep)
	steps = func(ss []model.SnippetStep) {
		for _, st := range ss {
			if r := st.Return; r != nil && r.HasText && len(r.Text) == 0 {
				r.HasText = false
			}
			if st.If != nil {
				steps(st.If.Then)
			}
		}
	}
	steps(s.Steps)
	for i := range s.MoreSet {
		for j := range s.MoreSet[i].Headers {
			if len(s.MoreSet[i].Headers[j].Value) == 0 {
				s.MoreSet[i].Headers[j].Value = nil
			}
		}
	}
}

// FuzzSnippetRender parses a fuzzed snippet and, whatever it accepts,
// renders and parses again: the directives must come back the same, so
// no accepted value can add, end or change a directive once printed (no
// injection), and the printed text holds no control character.
func FuzzSnippetRender(f *testing.F) {
	seeds, _ := filepath.Glob("../snippet/testdata/corpus/*.conf")
	if len(seeds) == 0 {
		f.Fatal("no seed corpus in ../snippet/testdata/corpus")
	}
	for _, p := range seeds {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	f.Add(`add_header X "a\"b\\c ;{}#" always;`)
	f.Fuzz(func(t *testing.T, src string) {
		s, err := snippet.Parse(src, snippet.Location)
		if err != nil {
			return
		}
		out, err := renderSnippet(s)
		if err != nil {
			// The renderer's second wall may refuse what the parser let
			// through only for lengths (quoting doubles a value).
			if strings.Contains(err.Error(), "longer than") {
				return
			}
			t.Fatalf("%q parsed to %+v, which does not render: %v", src, s, err)
		}
		for _, c := range []byte(out) {
			if c < ' ' && c != '\n' || c == 0x7f {
				t.Fatalf("%q rendered a control byte: %q", src, out)
			}
		}
		again, err := snippet.Parse(out, snippet.Location)
		if err != nil {
			t.Fatalf("%q rendered to %q, which does not parse: %v", src, out, err)
		}
		normalize(s)
		normalize(again)
		if !reflect.DeepEqual(mergeLiterals(s), mergeLiterals(again)) {
			t.Fatalf("%q rendered to %q, which parses to\n %+v\nnot\n %+v", src, out, again, s)
		}
	})
}

// mergeLiterals joins adjacent literal parts, which printing may split
// or join differently.
func mergeLiterals(s *model.Snippet) *model.Snippet {
	c := *s
	fix := func(t model.Template) model.Template {
		var out model.Template
		for _, p := range t {
			if n := len(out); n > 0 && p.Variable == "" && out[n-1].Variable == "" {
				out[n-1].Literal += p.Literal
				continue
			}
			out = append(out, p)
		}
		return out
	}
	var steps func([]model.SnippetStep)
	steps = func(ss []model.SnippetStep) {
		for _, st := range ss {
			switch {
			case st.If != nil:
				steps(st.If.Then)
			case st.Set != nil:
				st.Set.Value = fix(st.Set.Value)
			case st.Rewrite != nil:
				st.Rewrite.Replacement = fix(st.Rewrite.Replacement)
			case st.Return != nil:
				st.Return.Text = fix(st.Return.Text)
			}
		}
	}
	steps(c.Steps)
	return &c
}
