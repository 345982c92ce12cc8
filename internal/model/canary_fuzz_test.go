package model

import (
	"regexp"
	"testing"
)

// luaCanaryAlphabet is what causeway/validate.lua checks of each field
// of a canary rule, as its split's conditions (it leaves the pattern's
// syntax to the controller): whatever Validate accepts must pass it, or
// nginx would refuse the push.
var luaCanaryAlphabet = map[string]*regexp.Regexp{
	"header":  regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`),
	"value":   regexp.MustCompile(`^[A-Za-z0-9._~/:-]{1,256}$`),
	"pattern": regexp.MustCompile(`^[A-Za-z0-9/._~!*()+,=:@&?|\[\]^\\{} -]{1,256}$`),
	"cookie":  regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`),
}

// FuzzCanaryRule: a rule Validate accepts holds only what the Lua side
// accepts, its pattern compiles (in Go; the grammar is shared with PCRE)
// without "$", its weight lies within its total, and its split
// validates. Run with
//
//	go test ./internal/model -run=XXX -fuzz=FuzzCanaryRule -fuzztime=60s
func FuzzCanaryRule(f *testing.F) {
	for _, e := range injectionCorpus {
		f.Add("X-Canary", e, "", "c", 10, 100)
		f.Add("X-Canary", "", e, "c", 10, 100)
		f.Add(e, "", "", e, 0, 1)
	}
	f.Add("X-Canary", "v2", "", "canary", 20, 100)
	f.Add("h", "", `^(v2|v3)-\d{1,3}`, "", 1000000, 1000000)
	f.Fuzz(func(t *testing.T, header, value, pattern, cookie string, weight, total int) {
		r := CanaryRule{Header: header, HeaderValue: value, HeaderPattern: pattern, Cookie: cookie, Weight: weight, WeightTotal: total}
		if r.Validate() != nil {
			return
		}
		for field, v := range map[string]string{"header": header, "value": value, "pattern": pattern, "cookie": cookie} {
			if v != "" && !luaCanaryAlphabet[field].MatchString(v) {
				t.Fatalf("Validate accepted %s %q, which validate.lua refuses", field, v)
			}
		}
		if pattern != "" {
			if _, err := regexp.Compile(pattern); err != nil || regexp.MustCompile(`\$`).MatchString(pattern) {
				t.Fatalf("Validate accepted the pattern %q", pattern)
			}
		}
		if weight < 0 || weight > total || total < 1 || total > MaxCanaryWeightTotal {
			t.Fatalf("Validate accepted weight %d of %d", weight, total)
		}
		if err := r.Split(ObjectRef{Namespace: "ns", Name: "c"}, "ns/main/80", "ns/canary/80").Validate(); err != nil {
			t.Fatalf("rule %+v is valid, its split is not: %v", r, err)
		}
	})
}
