package annotations

import (
	"reflect"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/testcorpus"
)

// FuzzParseIngress sets one supported annotation (chosen by which) to a
// fuzzed value, beside a fixed set of valid ones, and requires that no
// string in the Result could change nginx.conf's structure once quoted:
// no quote, backslash, brace, semicolon, hash, control byte or variable
// (a mirror URL's final $request_uri aside, which render prints through
// its own generator), and that parsing never panics.
func FuzzParseIngress(f *testing.F) {
	var names []string
	for _, a := range Known() {
		if a.Status == AnnotationSupported && a.Family == FamilyIngressNginx {
			names = append(names, a.Name)
		}
	}
	for i, v := range testcorpus.Injection {
		f.Add(uint16(i), v)
	}
	f.Add(uint16(0), "/$1")
	f.Add(uint16(1), "https://a.example$request_uri")
	f.Fuzz(func(t *testing.T, which uint16, value string) {
		name := names[int(which)%len(names)]
		values := map[string]string{
			DefaultPrefix + "/enable-cors": "true",
			DefaultPrefix + "/use-regex":   "true",
			DefaultPrefix + "/" + name:     value,
		}
		res, _ := ParseIngress(testRef, values, DefaultPrefix)
		if m := res.Location.Mirror; m != nil {
			c := *m
			c.URL = strings.TrimSuffix(c.URL, "$request_uri")
			res.Location.Mirror = &c
		}
		// Header values may hold spaces and ';', which are inert inside
		// quotes; check them on their own.
		if v := res.Location.XForwardedPrefix; v != nil && strings.ContainsAny(string(*v), "\"\\{}$\n\r") {
			t.Fatalf("%s=%q: X-Forwarded-Prefix %q", name, value, *v)
		}
		res.Location.XForwardedPrefix = nil
		// A hash key is nginx variables by design; it goes to the Lua
		// balancer as data and is never printed into nginx.conf.
		if b := res.Balance; b != nil && b.HashKey != "" {
			if err := model.ValidateHashKey(b.HashKey); err != nil {
				t.Fatalf("%s=%q: hash key %q: %v", name, value, b.HashKey, err)
			}
			c := *b
			c.HashKey = ""
			res.Balance = &c
		}
		// Snippets are templates of literals and variables, printed by
		// render's own generator and fuzzed there (FuzzSnippetRender);
		// their Problems quote the value.
		res.Location.Snippet, res.Server.Snippet, res.Snippets = nil, nil, SnippetSettings{}
		if why := unsafeStrings(reflect.ValueOf(res)); why != "" {
			t.Fatalf("%s=%q: the Result %s", name, value, why)
		}
	})
}
