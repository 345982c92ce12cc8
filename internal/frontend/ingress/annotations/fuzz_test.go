package annotations

import (
	"reflect"
	"slices"
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
		if a.Status == AnnotationSupported && (a.Family == FamilyIngressNginx || a.Family == FamilyNIC) {
			names = append(names, a.Key(DefaultPrefix))
		}
	}
	for i, v := range testcorpus.Injection {
		f.Add(uint16(i), v)
	}
	f.Add(uint16(0), "/$1")
	f.Add(uint16(1), "https://a.example$request_uri")
	f.Add(uint16(2), "serviceName=svc rewrite=/x;serviceName=b rewrite=/")
	f.Fuzz(func(t *testing.T, which uint16, value string) {
		name := names[int(which)%len(names)]
		values := map[string]string{
			DefaultPrefix + "/enable-cors": "true",
			DefaultPrefix + "/use-regex":   "true",
			name:                           value,
		}
		res, _ := ParseIngress(testRef, values, DefaultPrefix, nil)
		if ms := res.Location.Mirrors; ms != nil {
			c := slices.Clone(ms)
			for i := range c {
				c[i].URL = strings.TrimSuffix(c[i].URL, "$request_uri")
			}
			res.Location.Mirrors = c
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

// FuzzParseDefaults reads two fuzzed ConfigMap keys of DefaultKeys (chosen
// by which) and then an Ingress that sets the first key's annotation to a
// third fuzzed value. Parsing must never panic; no string in the defaults
// or the Result may change nginx.conf's structure once quoted; and the
// buffers the Ingress ends with must be ones nginx accepts.
func FuzzParseDefaults(f *testing.F) {
	keys := DefaultKeys()
	for i, v := range testcorpus.Injection {
		f.Add(uint16(i), v, "8k", "16k")
	}
	f.Add(uint16(6), "8k", "12k", "16k")
	f.Add(uint16(13), "http://a.example/", "/b", "off")
	f.Fuzz(func(t *testing.T, which uint16, first, second, annotation string) {
		k1, k2 := keys[int(which)%len(keys)], keys[int(which>>8)%len(keys)]
		d := &model.Defaults{}
		_ = ParseDefault(d, k1.Name, first)
		_ = ParseDefault(d, k2.Name, second)
		if why := unsafeStrings(reflect.ValueOf(*d)); why != "" {
			t.Fatalf("%s=%q, %s=%q: the defaults %s", k1.Name, first, k2.Name, second, why)
		}
		res, _ := ParseIngress(testRef, map[string]string{DefaultPrefix + "/" + k1.Name: annotation}, DefaultPrefix, d)
		if why := unsafeStrings(reflect.ValueOf(res)); why != "" {
			t.Fatalf("%s=%q, %s=%q, annotation %q: the Result %s", k1.Name, first, k2.Name, second, annotation, why)
		}
		b := res.Location.Buffering
		if unfit := b.DropUnfit(); len(unfit) > 0 {
			t.Fatalf("%s=%q, %s=%q, annotation %q: buffers nginx refuses: %+v", k1.Name, first, k2.Name, second, annotation, res.Location.Buffering)
		}
	})
}
