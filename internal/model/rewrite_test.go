package model

import "testing"

func TestRewritten(t *testing.T) {
	for _, tc := range []struct {
		name        string
		loc         Location
		regex       bool
		path, query string
		want        string
	}{
		{"no rewrite keeps the URI", Location{Match: Match{Prefix, "/a"}}, false, "/a/b", "x=1", "/a/b?x=1"},
		{"captures", Location{Match: Match{Regex, "/api(/|$)(.*)"}, Policy: &Policy{Rewrite: &Rewrite{Target: "/$2"}}}, true, "/API/items", "", "/items"},
		{"captures with a query", Location{Match: Match{Regex, "/api/(.*)"}, Policy: &Policy{Rewrite: &Rewrite{Target: "/v2/$1?k=v"}}}, true, "/api/x", "q=1", "/v2/x?k=v&q=1"},
		{"the whole path of a quoted prefix", Location{Match: Match{Prefix, "/a.b"}, Policy: &Policy{Rewrite: &Rewrite{Target: "/t"}}}, false, "/a.b/c", "", "/t"},
		{"no match leaves the path", Location{Match: Match{Regex, "/x"}, Policy: &Policy{Rewrite: &Rewrite{Target: "/t"}}}, true, "/y", "", "/y"},
		{"prefix", Location{Match: Match{Prefix, "/api"}, Policy: &Policy{Rewrite: &Rewrite{Target: "/v2", Prefix: true}}}, false, "/api/x", "q=1", "/v2/x?q=1"},
		{"prefix stripped by elements", Location{Match: Match{Prefix, "/api"}, Policy: &Policy{Rewrite: &Rewrite{Target: "/", Prefix: true, Strip: true}}}, false, "/api", "", "/"},
	} {
		if got := tc.loc.Rewritten(tc.regex, tc.path, tc.query); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
