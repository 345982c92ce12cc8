package snippet

import (
	"reflect"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

// TestDenyingLocations: a refused server snippet whose refusals all sit
// in location blocks that only refuse closes just those; anything else
// that refuses, or a match that cannot be typed, keeps closing every path.
func TestDenyingLocations(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []model.ClosedLocation // nil: not narrowed
	}{
		{"a regex location that denies all", `location ~ /\.git { deny all; }`,
			[]model.ClosedLocation{{Modifier: "~", Path: `/\.git`}}},
		{"an unanchored regex", `location ~* \.(bak|sql)$ { deny all; }`,
			[]model.ClosedLocation{{Modifier: "~*", Path: `\.(bak|sql)$`}}},
		{"several, beside headers", "add_header X-A a;\nlocation = /metrics { return 404; }\nlocation ^~ /admin/ {\n  allow 10.0.0.0/8;\n  deny all;\n}\nlocation /debug { return 403 \"no\"; }",
			[]model.ClosedLocation{{Modifier: "=", Path: "/metrics"}, {Modifier: "^~", Path: "/admin/"}, {Path: "/debug"}}},
		{"a refusal outside the locations", "deny 192.0.2.1;\nlocation ~ /\\.git { deny all; }", nil},
		{"an if that refuses", "if ($http_x) { return 403; }\nlocation ~ /\\.git { deny all; }", nil},
		{"a location that does more", `location /x { deny all; proxy_pass http://evil; }`, nil},
		{"a location that lets some in but never refuses", `location /x { allow 10.0.0.0/8; }`, nil},
		{"a location that serves", `location /x { return 200; }`, nil},
		{"a nested block", `location /x { location /y { deny all; } }`, nil},
		{"a path outside the grammar", `location "/a b" { deny all; }`, nil},
		{"a path with ..", `location /a/../b { deny all; }`, nil},
		{"a regex with lookahead", `location ~ (?=x) { deny all; }`, nil},
		{"a named location", `location @x { deny all; }`, nil},
		{"an unknown modifier", `location ~~ /x { deny all; }`, nil},
		{"unclosed", `location /x { deny all;`, nil},
		{"no location", `deny all;`, nil},
		{"another block", "upstream x { server 1.2.3.4; }\nlocation /x { deny all; }", nil},
		{"tokenizer refuses", "location /x { deny all; }\x00", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := DenyingLocations(tc.src)
			if ok != (tc.want != nil) || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("DenyingLocations(%q) = %+v, %v; want %+v", tc.src, got, ok, tc.want)
			}
			if ok {
				if _, err := Parse(tc.src, Server); err == nil {
					t.Fatal("Parse accepted it; a narrowed snippet is a refused one")
				}
				if !Denies(tc.src) {
					t.Fatal("Denies does not see it")
				}
			}
		})
	}
}
