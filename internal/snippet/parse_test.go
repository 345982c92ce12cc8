package snippet

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/model"
)

func lit(s string) model.TemplatePart { return model.TemplatePart{Literal: s} }
func vr(s string) model.TemplatePart  { return model.TemplatePart{Variable: s} }
func tpl(parts ...model.TemplatePart) model.Template {
	return model.Template(parts)
}

// TestParse: a row per directive grammar of the location allowlist.
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      model.Snippet
	}{
		{"add_header", `add_header X-Frame-Options "SAMEORIGIN";`,
			model.Snippet{AddHeaders: []model.TemplateHeader{{Name: "X-Frame-Options", Value: tpl(lit("SAMEORIGIN"))}}}},
		{"add_header always", `add_header Cache-Control "no-store" always;`,
			model.Snippet{AddHeaders: []model.TemplateHeader{{Name: "Cache-Control", Value: tpl(lit("no-store")), Always: true}}}},
		{"add_header with variables", `add_header X-Where "$host${request_uri}x";`,
			model.Snippet{AddHeaders: []model.TemplateHeader{{Name: "X-Where", Value: tpl(vr("host"), vr("request_uri"), lit("x"))}}}},
		{"a request header, cookie and argument", `add_header X "$http_x_user $cookie_session $arg_page";`,
			model.Snippet{AddHeaders: []model.TemplateHeader{{Name: "X", Value: tpl(vr("http_x_user"), lit(" "), vr("cookie_session"), lit(" "), vr("arg_page"))}}}},
		{"more_set_headers", `more_set_headers "Server: web" 'X-A: b';`,
			model.Snippet{MoreSet: []model.MoreHeaders{{Headers: []model.TemplateHeader{{Name: "Server", Value: tpl(lit("web"))}, {Name: "X-A", Value: tpl(lit("b"))}}}}}},
		{"more_set_headers with -s and -t", `more_set_headers -s "404 500" -t text/html "X-Err: $status";`,
			model.Snippet{MoreSet: []model.MoreHeaders{{Statuses: []int{404, 500}, Types: []string{"text/html"},
				Headers: []model.TemplateHeader{{Name: "X-Err", Value: tpl(vr("status"))}}}}}},
		{"more_set_headers name alone", `more_set_headers "X-Gone:";`,
			model.Snippet{MoreSet: []model.MoreHeaders{{Headers: []model.TemplateHeader{{Name: "X-Gone"}}}}}},
		{"more_clear_headers with a wildcard", `more_clear_headers Server "X-Powered-*";`,
			model.Snippet{MoreClear: []model.MoreHeaders{{Headers: []model.TemplateHeader{{Name: "Server"}, {Name: "X-Powered-*"}}}}}},
		{"proxy_set_header", `proxy_set_header X-Tenant "acme";`,
			model.Snippet{ProxySetHeaders: []model.TemplateHeader{{Name: "X-Tenant", Value: tpl(lit("acme"))}}}},
		{"proxy_set_header Host", `proxy_set_header Host $host;`,
			model.Snippet{ProxySetHeaders: []model.TemplateHeader{{Name: "Host", Value: tpl(vr("host"))}}}},
		{"proxy_hide_header", `proxy_hide_header X-Powered-By;`, model.Snippet{ProxyHideHeaders: []string{"X-Powered-By"}}},
		{"return a status", `return 403;`, model.Snippet{Steps: []model.SnippetStep{{Return: &model.SnippetReturn{Code: 403}}}}},
		{"return a text", `return 200 "ok\n";`, model.Snippet{}}, // refused below: \n
		{"return a body", `return 200 'healthy';`,
			model.Snippet{Steps: []model.SnippetStep{{Return: &model.SnippetReturn{Code: 200, Text: tpl(lit("healthy")), HasText: true}}}}},
		{"return a redirect", `return 301 https://$host$request_uri;`,
			model.Snippet{Steps: []model.SnippetStep{{Return: &model.SnippetReturn{Code: 301, Text: tpl(lit("https://"), vr("host"), vr("request_uri")), HasText: true}}}}},
		{"return a URL alone is a 302", `return https://example.com/;`,
			model.Snippet{Steps: []model.SnippetStep{{Return: &model.SnippetReturn{Code: 302, Text: tpl(lit("https://example.com/")), HasText: true}}}}},
		{"return 444", `return 444;`, model.Snippet{Steps: []model.SnippetStep{{Return: &model.SnippetReturn{Code: 444}}}}},
		{"rewrite", `rewrite ^/old/(.*)$ /new/$1 break;`,
			model.Snippet{Steps: []model.SnippetStep{{Rewrite: &model.SnippetRewrite{Regex: "^/old/(.*)$", Replacement: tpl(lit("/new/"), vr("1")), Flag: model.RewriteBreak}}}}},
		{"rewrite permanent to a URL", `rewrite ^/(.*) https://www.example.com/$1 permanent;`,
			model.Snippet{Steps: []model.SnippetStep{{Rewrite: &model.SnippetRewrite{Regex: "^/(.*)", Replacement: tpl(lit("https://www.example.com/"), vr("1")), Flag: model.RewritePermanent}}}}},
		{"rewrite without a flag", `rewrite "^/a\.html$" /b.html;`,
			model.Snippet{Steps: []model.SnippetStep{{Rewrite: &model.SnippetRewrite{Regex: `^/a\.html$`, Replacement: tpl(lit("/b.html"))}}}}},
		{"expires", `expires 1h30m;`, model.Snippet{Expires: &model.Expires{Time: 90 * time.Minute}}},
		{"expires negative", `expires -1;`, model.Snippet{Expires: &model.Expires{Time: -time.Second}}},
		{"expires modified", `expires modified 7d;`, model.Snippet{Expires: &model.Expires{Time: 7 * 24 * time.Hour, Modified: true}}},
		{"expires off", `expires off;`, model.Snippet{Expires: &model.Expires{Mode: "off"}}},
		{"set then use", "set $tenant \"acme-$host\";\nadd_header X-Tenant $tenant;",
			model.Snippet{Steps: []model.SnippetStep{{Set: &model.SetVariable{Name: "tenant", Value: tpl(lit("acme-"), vr("host"))}}},
				AddHeaders: []model.TemplateHeader{{Name: "X-Tenant", Value: tpl(vr("tenant"))}}}},
		{"an escaped quote stays inside the value (inert)", `add_header X "a\"; include /etc/passwd; #";`,
			model.Snippet{AddHeaders: []model.TemplateHeader{{Name: "X", Value: tpl(lit(`a"; include /etc/passwd; #`))}}}},
		{"if on a variable", "if ($http_x_block) { return 403; }",
			model.Snippet{Steps: []model.SnippetStep{{If: &model.SnippetIf{Variable: "http_x_block", Then: []model.SnippetStep{{Return: &model.SnippetReturn{Code: 403}}}}}}}},
		{"if =, a quote glued to )", `if ($http_x_forwarded_proto = "http") { return 301 https://$host$request_uri; }`,
			model.Snippet{Steps: []model.SnippetStep{{If: &model.SnippetIf{Variable: "http_x_forwarded_proto", Op: "=", Value: "http",
				Then: []model.SnippetStep{{Return: &model.SnippetReturn{Code: 301, Text: tpl(lit("https://"), vr("host"), vr("request_uri")), HasText: true}}}}}}}},
		{"if ~* with spaces around the parentheses", "if ( $http_user_agent ~* \"(bot|crawler)\" ) {\n  set $robot 1;\n  rewrite ^/(.*) /robots/$1 last;\n}",
			model.Snippet{Steps: []model.SnippetStep{{If: &model.SnippetIf{Variable: "http_user_agent", Op: "~*", Value: "(bot|crawler)",
				Then: []model.SnippetStep{{Set: &model.SetVariable{Name: "robot", Value: tpl(lit("1"))}},
					{Rewrite: &model.SnippetRewrite{Regex: "^/(.*)", Replacement: tpl(lit("/robots/"), vr("1")), Flag: model.RewriteLast}}}}}}}},
		{"comments and blank lines", "# security headers\n\nadd_header X-A a; # trailing\n",
			model.Snippet{AddHeaders: []model.TemplateHeader{{Name: "X-A", Value: tpl(lit("a"))}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.src, Location)
			if reflect.DeepEqual(tc.want, model.Snippet{}) {
				if err == nil {
					t.Fatalf("Parse(%q) = %+v, want an error", tc.src, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.src, err)
			}
			if !reflect.DeepEqual(*got, tc.want) {
				t.Fatalf("Parse(%q) =\n %+v\nwant\n %+v", tc.src, *got, tc.want)
			}
		})
	}
}

// TestParseRefuses: a row per thing a snippet may not hold; each refuses
// the whole snippet and the error names why. Many come from the CVE record
// of ingress-nginx's snippets.
func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, src, err string
	}{
		{"empty", "  # nothing\n", "holds no directive"},
		{"include", "include /etc/passwd;", `directive "include" is not allowed`},
		{"load_module", "load_module /tmp/evil.so;", `directive "load_module" is not allowed`},
		{"ssl_engine", "ssl_engine pkcs11;", `directive "ssl_engine" is not allowed`},
		{"content_by_lua_block", `content_by_lua_block { ngx.say(1) }`, `directive "content_by_lua_block" opens a block`},
		{"content_by_lua_block with quotes", `content_by_lua_block { os.execute("id") }`, `directive "content_by_lua_block"`},
		{"access_by_lua", `access_by_lua 'ngx.exit(200)';`, `directive "access_by_lua" is not allowed`},
		{"alias", "alias /etc/;", `directive "alias" is not allowed`},
		{"root", "root /;", `directive "root" is not allowed`},
		{"proxy_pass", "proxy_pass http://169.254.169.254/;", `directive "proxy_pass" is not allowed`},
		{"a good directive, then a bad one: all refused", "add_header X a;\ninclude /etc/passwd;", `line 2: directive "include"`},
		{"a } that closes the location, then a new location", "add_header X a; }\nlocation /x { alias /etc/; }\nlocation /y {", `would close the enclosing`},
		{"a block", "limit_except GET { deny all; }", `opens a block`},
		{"if in if", "if ($http_x) { if ($http_y) { return 403; } }", `opens a block`},
		{"add_header in if", "if ($http_x) { add_header X y; }", `not allowed in an if block`},
		{"proxy_pass in if", "if ($http_x) { proxy_pass http://evil; }", `not allowed in an if block`},
		{"rewrite break in if", "if ($http_x) { rewrite ^/a /b break; }", `want the flag last`},
		{"empty if", "if ($http_x) { }", `must end with return or rewrite`},
		{"if that only sets", "if ($http_x) { set $a b; }", `must end with return or rewrite`},
		{"unclosed if", "if ($http_x) { return 403;", `not closed`},
		{"if on a variable outside the allowlist", "if ($document_root) { return 403; }", `not one a snippet may read`},
		{"if with -f", "if (-f /etc/passwd) { return 200; }", `want ($variable)`},
		{"if on a literal", `if (abc) { return 200; }`, `want a variable first`},
		{"if with a regex holding $", `if ($uri ~ "^/a$") { return 403; }`, `regex`},
		{"if with an unknown operator", `if ($uri <> "a") { return 403; }`, `operator`},
		{"if without parentheses", `if $uri { return 403; }`, `want ($variable)`},
		{"location block", "location /secret { return 200; }", `opens a block`},
		{"a comment hides the semicolon", "add_header X a # ;\n", `does not end with ";"`},
		{"no semicolon", "add_header X a", `does not end with ";"`},
		{"an escaped quote does not end the word", `add_header X "a\"; include /etc/passwd;`, `unterminated quote`},
		{"a variable outside the allowlist", `add_header X $document_root;`, `variable $document_root is not one a snippet may read`},
		{"the upstream's address", `add_header X $upstream_addr;`, `not one a snippet may read`},
		{"Causeway's backend variable", `add_header X $causeway_backend;`, `not one a snippet may read`},
		{"a TLS variable", `add_header X $ssl_client_raw_cert;`, `not one a snippet may read`},
		{"a ${ trick", `add_header X "${host";`, `unterminated ${`},
		{"${ with a space", `add_header X "${ host}";`, `starts no variable name`},
		{"a lone $", `add_header X "a$";`, `starts no variable name`},
		{"an upper-case variable", `add_header X $HOST;`, `starts no variable name`},
		{"a group outside a rewrite", `add_header X $1;`, `regex group`},
		{"a newline in a value", "add_header X \"a\nb\";", `newline inside a quoted word`},
		{"CR", "add_header X a;\r\n", `control character`},
		{"NUL", "add_header X \"a\x00\";", `control character`},
		{"a tab in a value", "add_header X \"a\tb\";", `tab`},
		{"header name with a space", `add_header "X Y" a;`, `header name`},
		{"header name with a colon", `add_header "X:" a;`, `header name`},
		{"add_header Content-Length", `add_header Content-Length 0;`, `frames the message`},
		{"more_set_headers Transfer-Encoding", `more_set_headers "Transfer-Encoding: chunked";`, `frames the message`},
		{"proxy_set_header Content-Length", `proxy_set_header Content-Length 5;`, `frames the message`},
		{"proxy_set_header Connection", `proxy_set_header Connection close;`, `frames the message`},
		{"add_header with a bad fourth", `add_header X a never;`, `want "always"`},
		{"set of nginx's variable", `set $args "x";`, `nginx's own`},
		{"set of a limit variable", `set $limit_rate 0;`, `family`},
		{"set of Causeway's variable", `set $causeway_backend "default/other/80";`, `family`},
		{"set without $", `set tenant a;`, `want $name`},
		{"set reading its own later variable", "add_header X $later;\nset $later a;", `not one a snippet may read`},
		{"proxy_set_header X-Forwarded-For", `proxy_set_header X-Forwarded-For 1.2.3.4;`, `set by Causeway`},
		{"return 100", `return 100;`, `want a code`},
		{"return 1000", `return 1000;`, `want a code`},
		{"redirect to a relative URL", `return 301 example.com;`, `want a URL`},
		{"redirect to a protocol-relative URL", `return 301 //evil.example/;`, `want a URL`},
		{"rewrite without ^", `rewrite /a /b;`, `anchored at the start`},
		{"rewrite with lookahead", `rewrite ^/(?=a) /b;`, `regex`},
		{"rewrite to a file path", `rewrite ^/ file:///etc/passwd;`, `want a path`},
		{"rewrite naming a missing group", `rewrite ^/(a) /$2;`, `names group $2`},
		{"rewrite bad flag", `rewrite ^/a /b forever;`, `flag`},
		{"expires twice", `expires 1h; expires 2h;`, `set twice`},
		{"expires in ms", `expires 10ms;`, `want a number`},
		{"expires too far", `expires 11y;`, `at most ten years`},
		{"more_set_headers bad option", `more_set_headers -x a "X: y";`, `want -s or -t`},
		{"more_set_headers bad status", `more_set_headers -s 99 "X: y";`, `status`},
		{"more_set_headers bad type", `more_set_headers -t "text html" "X: y";`, `content type`},
		{"directive name quoted", `"add_header" X a;`, `not a directive name`},
		{"very long input", strings.Repeat("add_header X a;\n", 2000), `longer than`},
		{"too many directives", strings.Repeat("add_header X a;", MaxDirectives+1), `more than 100 directives`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.src, Location)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("Parse(%q) = %+v, %v; want an error containing %q", tc.src, got, err, tc.err)
			}
		})
	}
}

// TestParseContexts: each context has its own allowlist.
func TestParseContexts(t *testing.T) {
	for _, tc := range []struct {
		ctx  Context
		src  string
		want bool
	}{
		{Server, `rewrite ^/old$ /new permanent;`, true},
		{Server, `add_header X a;`, true},
		{Auth, `proxy_set_header X-Auth-Tenant acme;`, true},
		{Auth, `set $a b;`, true},
		{Auth, `return 200;`, false},
		{Auth, `add_header X a;`, false},
		{Auth, `if ($http_x) { return 403; }`, false},
		{Server, `if ($host = "old.example.com") { return 301 https://new.example.com$request_uri; }`, true},
		{HTTP, `add_header X a; more_set_headers "Y: b"; more_clear_headers Z; proxy_set_header A b; proxy_hide_header C; expires 1h;`, true},
		{HTTP, `return 200;`, false},
		{HTTP, `rewrite ^/a /b;`, false},
		{HTTP, `set $a b;`, false},
		{HTTP, `if ($http_x) { add_header X a; }`, false},
		{HTTP, `map $http_x $y { default 1; }`, true},
		{Location, `map $http_x $y { default 1; }`, false},
		{Server, `map $http_x $y { default 1; }`, false},
		{HTTP, `upstream b { server 10.0.0.1; }`, false},
		{HTTP, `limit_req_zone $binary_remote_addr zone=a:10m rate=1r/s;`, false},
		{HTTP, `server { listen 8080; }`, false},
		{Context("stream"), `proxy_pass x;`, false},
		{Context("main"), `worker_processes 1;`, false},
	} {
		_, err := Parse(tc.src, tc.ctx)
		if (err == nil) != tc.want {
			t.Errorf("Parse(%q, %s): %v, want accepted %v", tc.src, tc.ctx, err, tc.want)
		}
	}
}

// TestVariableName: a row per rule for the name of a variable a snippet
// sets.
func TestVariableName(t *testing.T) {
	for name, ok := range map[string]bool{
		"tenant": true, "my_var2": true, "": false, "1a": false, "Tenant": false, "a-b": false,
		strings.Repeat("a", 33): false, "host": false, "uri": false, "http_x": false, "arg_x": false,
		"cookie_x": false, "upstream_x": false, "causeway_backend": false, "limit_rate": false, "req_id": false,
	} {
		if err := VariableName(name); (err == nil) != ok {
			t.Errorf("VariableName(%q) = %v, want ok %v", name, err, ok)
		}
	}
}

// TestDenies: a row per thing that makes a snippet look meant to refuse
// requests.
func TestDenies(t *testing.T) {
	for src, want := range map[string]bool{
		`add_header X-Frame-Options DENY;`:                 false,
		`more_set_headers "X: y"; rewrite ^/a /b last;`:    false,
		`return 301 https://example.com;`:                  false,
		`return 403;`:                                      true,
		`if ($http_x) { return 200; }`:                     true,
		"deny all;":                                        true,
		"allow 10.0.0.0/8;\x00":                            true,
		`access_by_lua_block { ngx.exit(403) }`:            true,
		`auth_request /auth;`:                              true,
		`limit_req zone=one;`:                              true,
		"add_header X a;\n# a comment\nreturn 503 'down';": true,
	} {
		if got := Denies(src); got != want {
			t.Errorf("Denies(%q) = %v, want %v", src, got, want)
		}
	}
}
