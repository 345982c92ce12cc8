package model

import (
	"reflect"
	"testing"
	"time"
)

// TestSnippetJoin: a row per rule of Join and of the snippet predicates.
func TestSnippetJoin(t *testing.T) {
	a := &Snippet{AddHeaders: []TemplateHeader{{Name: "A"}}, Expires: &Expires{Time: time.Hour},
		Steps: []SnippetStep{{Set: &SetVariable{Name: "a"}}}}
	b := &Snippet{AddHeaders: []TemplateHeader{{Name: "B"}}, MoreSet: []MoreHeaders{{}},
		Steps: []SnippetStep{{Return: &SnippetReturn{Code: 200}}}}
	if Join(nil, nil) != nil || Join(a, nil) != a || Join(nil, b) != b {
		t.Fatal("Join with nil must return the other side")
	}
	j := Join(a, b)
	if !reflect.DeepEqual(j.AddHeaders, []TemplateHeader{{Name: "A"}, {Name: "B"}}) || len(j.Steps) != 2 || j.Steps[0].Set == nil {
		t.Fatalf("Join(a, b) = %+v, want a's directives, then b's", j)
	}
	if j.Expires != a.Expires || Join(a, &Snippet{Expires: &Expires{Mode: "off"}}).Expires.Mode != "off" {
		t.Fatal("b's expires must win, a's stay when b has none")
	}
	if len(a.AddHeaders) != 1 || len(a.Steps) != 1 {
		t.Fatal("Join changed its argument")
	}
	if !j.UsesHeadersMore() || a.UsesHeadersMore() || !j.Answers() || a.Answers() {
		t.Fatal("UsesHeadersMore or Answers is wrong")
	}
	for _, tc := range []struct {
		r    SnippetRewrite
		want bool
	}{
		{SnippetRewrite{Replacement: Template{{Literal: "/b"}}}, false},
		{SnippetRewrite{Replacement: Template{{Literal: "/b"}}, Flag: RewriteLast}, false},
		{SnippetRewrite{Replacement: Template{{Literal: "/b"}}, Flag: RewriteRedirect}, true},
		{SnippetRewrite{Replacement: Template{{Literal: "/b"}}, Flag: RewritePermanent}, true},
		{SnippetRewrite{Replacement: Template{{Literal: "https://b.test/"}}}, true},
		{SnippetRewrite{Replacement: Template{{Variable: "scheme"}, {Literal: "://b.test/"}}, Flag: RewriteBreak}, true},
	} {
		if got := tc.r.Redirects(); got != tc.want {
			t.Errorf("%+v.Redirects() = %v, want %v", tc.r, got, tc.want)
		}
	}
}
