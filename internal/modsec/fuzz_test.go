package modsec_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/modsec"
	"github.com/causeway/causeway/internal/render"
)

var seeds = []string{
	"SecRuleEngine On\nSecRequestBodyAccess On\nSecAuditLog /dev/stdout",
	"SecRuleRemoveById 942100 920300-920350",
	`SecRuleUpdateTargetById 942100 "!ARGS:password"`,
	"SecRule REQUEST_HEADERS:Content-Type \"application/json\" \\\n \"id:200001,phase:1,t:none,t:lowercase,pass,nolog,ctl:requestBodyProcessor=JSON\"",
	`SecRule ARGS:id "!@rx ^[0-9]+$" "id:1001,phase:2,deny,status:403,log,msg:'id must be numeric, nothing else'"`,
	"SecRule REQUEST_METHOD \"@streq POST\" \"id:1002,phase:2,deny,chain\"\nSecRule &ARGS:token \"@eq 0\"",
	`SecAction "id:1003,phase:1,pass,nolog,setvar:'tx.paranoia_level=2',skipAfter:END"` + "\nSecMarker END",
	"Include /etc/nginx/owasp-modsecurity-crs/nginx-modsecurity.conf",
	`SecRule ARGS "@rx x" "id:1,phase:2,exec:/bin/sh"`,
	"SecDebugLog /tmp/x\n",
}

// FuzzParse: the parser never panics; everything it accepts passes the
// model's grammar, and what the renderer prints of it reads back as the
// same directives (an Include prints as nothing), so no value can become
// two or spill into another directive.
func FuzzParse(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	for _, s := range corpus(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		r, err := modsec.Parse(src, modsec.Options{})
		if err != nil {
			return
		}
		var kept []model.SecDirective
		for _, d := range r.Directives {
			if err := model.CheckSecDirective(d); err != nil {
				t.Fatalf("%q: accepted %+v: %v", src, d, err)
			}
			if d.Include == model.SecIncludeNone {
				kept = append(kept, d)
			}
		}
		lines, err := render.SecRulesText(r)
		if err != nil {
			t.Fatalf("%q: print: %v", src, err)
		}
		if len(kept) == 0 {
			return
		}
		again, err := modsec.Parse(strings.Join(lines, "\n"), modsec.Options{})
		if err != nil {
			t.Fatalf("%q printed as %q, which reads as: %v", src, lines, err)
		}
		if !reflect.DeepEqual(again.Directives, kept) {
			t.Fatalf("%q printed as %q reads as\n%+v, want\n%+v", src, lines, again.Directives, kept)
		}
	})
}

// corpus reads testdata/corpus: snippets people write, each of which must
// be accepted (the integration tier has nginx load each with ModSecurity).
func corpus(t testing.TB) map[string]string {
	paths, err := filepath.Glob("testdata/corpus/*.conf")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no corpus in testdata/corpus: %v", err)
	}
	out := map[string]string{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = string(data)
	}
	return out
}

// TestCorpus: every snippet of the corpus is accepted.
func TestCorpus(t *testing.T) {
	for name, src := range corpus(t) {
		if _, err := modsec.Parse(src, modsec.Options{}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
