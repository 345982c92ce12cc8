package model

import (
	"reflect"
	"strings"
	"testing"
)

// A rule's header edits, then a backendRef's: one edit per name, the
// backend's last, as Gateway API applies the two filters in that order.
func TestRequestHeadersThen(t *testing.T) {
	set := func(n, v string) HeaderEdit { return HeaderEdit{Name: n, Action: HeaderSet, Value: HeaderValue(v)} }
	add := func(n, v string) HeaderEdit { return HeaderEdit{Name: n, Action: HeaderAdd, Value: HeaderValue(v)} }
	rm := func(n string) HeaderEdit { return HeaderEdit{Name: n, Action: HeaderRemove} }
	for _, tc := range []struct {
		name       string
		rule, back RequestHeaders
		want       RequestHeaders
	}{
		{"backend only", nil, RequestHeaders{set("A", "1")}, RequestHeaders{set("A", "1")}},
		{"rule only", RequestHeaders{add("A", "1")}, nil, RequestHeaders{add("A", "1")}},
		{"other names", RequestHeaders{set("A", "1")}, RequestHeaders{rm("B")}, RequestHeaders{set("A", "1"), rm("B")}},
		{"set replaces set", RequestHeaders{set("A", "1")}, RequestHeaders{set("a", "2")}, RequestHeaders{set("a", "2")}},
		{"set replaces add", RequestHeaders{add("A", "1")}, RequestHeaders{set("A", "2")}, RequestHeaders{set("A", "2")}},
		{"remove replaces set", RequestHeaders{set("A", "1")}, RequestHeaders{rm("A")}, RequestHeaders{rm("A")}},
		{"add after set", RequestHeaders{set("A", "1")}, RequestHeaders{add("A", "2")}, RequestHeaders{set("A", "1,2")}},
		{"add after add", RequestHeaders{add("A", "1")}, RequestHeaders{add("A", "2")}, RequestHeaders{add("A", "1,2")}},
		{"add after remove", RequestHeaders{rm("A")}, RequestHeaders{add("A", "2")}, RequestHeaders{set("A", "2")}},
		{"add after empty set", RequestHeaders{set("A", "")}, RequestHeaders{add("A", "2")}, RequestHeaders{set("A", "2")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rule := append(RequestHeaders(nil), tc.rule...)
			got := tc.rule.Then(tc.back)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if !reflect.DeepEqual(tc.rule, rule) {
				t.Errorf("Then changed its receiver: %+v", tc.rule)
			}
		})
	}
}

func TestSplitHeadersValidate(t *testing.T) {
	ok := Split{Default: []Target{{Backend: "a", Weight: 1, Headers: 1}, {Backend: "b", Weight: 1}},
		Headers: []RequestHeaders{{{Name: "X", Action: HeaderSet, Value: "v"}}}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(*Split)
		want string
	}{
		{"index past the sets", func(s *Split) { s.Default[1].Headers = 2 }, "headers 2"},
		{"answer with headers", func(s *Split) {
			s.Answers = []Answer{{Return: &Return{Status: 500}}}
			s.Default[1] = Target{Answer: 1, Weight: 1, Headers: 1}
		}, "headers 1"},
		{"empty set", func(s *Split) { s.Headers = append(s.Headers, nil) }, "empty"},
		{"bad name", func(s *Split) { s.Headers[0][0].Name = "X$y" }, "header name"},
		{"bad value", func(s *Split) { s.Headers[0][0].Value = "a\r\nb: c" }, "X"},
		{"dollar", func(s *Split) { s.Headers[0][0].Value = "$remote_addr" }, "X"},
		{"unknown action", func(s *Split) { s.Headers[0][0].Action = "append" }, "unknown action"},
		{"removal with a value", func(s *Split) { s.Headers[0][0].Action = HeaderRemove }, "no value"},
		{"a name twice", func(s *Split) {
			s.Headers[0] = append(s.Headers[0], HeaderEdit{Name: "x", Action: HeaderRemove})
		}, "one edit per name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ok
			s.Default = append([]Target(nil), ok.Default...)
			s.Headers = []RequestHeaders{append(RequestHeaders(nil), ok.Headers[0]...)}
			tc.edit(&s)
			err := s.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// TestRequestHeadersSnippetDottedAdd: an add to a name with a "." is a
// set: nginx drops such client headers, and no $http_ variable can name
// one (render refused the location before).
func TestRequestHeadersSnippetDottedAdd(t *testing.T) {
	sn := RequestHeaders{{Name: "X.Y", Action: HeaderAdd, Value: "v"}, {Name: "X-Z", Action: HeaderAdd, Value: "w"}}.Snippet()
	if len(sn.ProxySetHeaders) != 2 || sn.ProxySetHeaders[0].Name != "X.Y" || !reflect.DeepEqual(sn.ProxySetHeaders[0].Value, Template{{Literal: "v"}}) {
		t.Errorf("X.Y: %+v, want a set of v", sn.ProxySetHeaders)
	}
	for _, st := range sn.Steps {
		if st.Set != nil {
			for _, p := range st.Set.Value {
				if strings.Contains(p.Variable, ".") {
					t.Errorf("step reads variable %q", p.Variable)
				}
			}
		}
	}
	if len(sn.Steps) != 2 {
		t.Errorf("%d steps, want X-Z's two", len(sn.Steps))
	}
}
