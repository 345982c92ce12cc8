package render

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

// TestCORSOriginLines: listed origins become lines of alternatives of at
// most corsOriginsLine bytes, every origin on exactly one, in order; one
// "*" among them allows any origin.
func TestCORSOriginLines(t *testing.T) {
	var origins []string
	for i := range 60 {
		origins = append(origins, fmt.Sprintf("https://frontend-%d.tenant-%d.example.net", i, i))
	}
	sp := &serverPlan{}
	v, err := sp.planCORS(&model.CORS{Origins: origins})
	if err != nil {
		t.Fatal(err)
	}
	if v.Any || len(v.Origins) < 3 {
		t.Fatalf("%d lines (any %v) for 60 origins of about 50 bytes each, want 3 or more", len(v.Origins), v.Any)
	}
	var all []string
	for _, line := range v.Origins {
		body, err := strconv.Unquote(line)
		if err != nil {
			t.Fatalf("line %s: %v", line, err)
		}
		if len(body) > corsOriginsLine {
			t.Errorf("a line of %d bytes, want at most %d", len(body), corsOriginsLine)
		}
		all = append(all, strings.Split(body, "|")...)
	}
	if len(all) != len(origins) {
		t.Fatalf("%d alternatives, want %d", len(all), len(origins))
	}
	for i, re := range all {
		r := regexp.MustCompile(strings.ReplaceAll(re, `\z`, `$`))
		if !r.MatchString(origins[i]) || r.MatchString(origins[(i+1)%len(origins)]) {
			t.Errorf("alternative %d, %s, does not match only %s", i, re, origins[i])
		}
	}
	v, err = sp.planCORS(&model.CORS{Origins: []string{"https://a.test", "*"}})
	if err != nil || !v.Any || v.Origins != nil {
		t.Errorf("with \"*\" listed: %+v, %v; want any origin", v, err)
	}
}
