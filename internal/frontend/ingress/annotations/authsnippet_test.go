package annotations

import (
	"strings"
	"testing"
)

// TestAuthSnippet: auth-snippet joins auth-url's subrequest when the
// ConfigMap allows snippets, with the auth context's allowlist; a row per
// rule.
func TestAuthSnippet(t *testing.T) {
	const url = "http://127.0.0.1:9/auth"
	for _, tc := range []struct {
		name    string
		ann     map[string]string
		allow   bool
		kept    bool
		problem string // "" for none
	}{
		{"set and headers", map[string]string{"auth-url": url, "auth-snippet": "set $tenant \"blue\";\nproxy_set_header X-Tenant $tenant;\nproxy_hide_header X-Debug;"}, true, true, ""},
		{"refused while snippets are not allowed", map[string]string{"auth-url": url, "auth-snippet": "proxy_set_header X-Tenant blue;"}, false, false, "allow-snippet-annotations is false"},
		{"without auth-url", map[string]string{"auth-snippet": "proxy_set_header X-Tenant blue;"}, true, false, "has no effect without"},
		{"a header the subrequest sets", map[string]string{"auth-url": url, "auth-snippet": "proxy_set_header X-Original-URL https://evil.test/;"}, true, false, "sets itself"},
		{"the Host header", map[string]string{"auth-url": url, "auth-snippet": "proxy_set_header host evil.test;"}, true, false, "sets itself"},
		{"return is not in the auth allowlist", map[string]string{"auth-url": url, "auth-snippet": "return 200;"}, true, false, "not allowed in a auth snippet"},
		{"add_header is not either", map[string]string{"auth-url": url, "auth-snippet": "add_header X y;"}, true, false, "not allowed"},
		{"an injected block", map[string]string{"auth-url": url, "auth-snippet": "proxy_set_header X y; } location /x { return 200;"}, true, false, "would close"},
		{"lua", map[string]string{"auth-url": url, "auth-snippet": "access_by_lua_block { ngx.exit(200) }"}, true, false, "access_by_lua_block"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, _ := parseNames(tc.ann)
			problems := res.GateSnippets(testRef, tc.allow)
			var found []string
			for _, p := range problems {
				if strings.Contains(p.Message, "auth-snippet") {
					found = append(found, p.Message)
				}
			}
			switch {
			case tc.problem == "" && len(found) > 0:
				t.Fatalf("problems %q, want none", found)
			case tc.problem != "" && (len(found) == 0 || !strings.Contains(strings.Join(found, "\n"), tc.problem)):
				t.Fatalf("problems %q, want one containing %q", found, tc.problem)
			}
			a := res.Location.ExternalAuth
			if kept := a != nil && a.Snippet != nil; kept != tc.kept {
				t.Fatalf("auth snippet kept %v, want %v", kept, tc.kept)
			}
			if tc.kept && (len(a.Snippet.Steps) != 1 || len(a.Snippet.ProxySetHeaders) != 1 || len(a.Snippet.ProxyHideHeaders) != 1) {
				t.Fatalf("snippet %+v", a.Snippet)
			}
			if tc.ann["auth-url"] != "" && a == nil {
				t.Fatal("auth-url itself was dropped")
			}
		})
	}
}
