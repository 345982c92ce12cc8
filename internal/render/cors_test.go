package render

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

// TestCORSOriginLines: listed origins become lines of alternatives of at
// most corsOriginsLine bytes, every origin on exactly one, in order, for
// one server variable per list; one "*" among them allows any origin.
func TestCORSOriginLines(t *testing.T) {
	var origins []string
	for i := range 60 {
		origins = append(origins, fmt.Sprintf("https://frontend-%d.tenant-%d.example.net", i, i))
	}
	sp := &serverPlan{v: &serverView{}, cors: map[string]int{}}
	v, err := sp.planCORS(&model.CORS{Origins: origins})
	if err != nil {
		t.Fatal(err)
	}
	if again, err := sp.planCORS(&model.CORS{Origins: origins}); err != nil || again.Check != v.Check || len(sp.v.CORSChecks) != 1 {
		t.Fatalf("the same list twice: %d variables (%v)", len(sp.v.CORSChecks), err)
	}
	lines := sp.v.CORSChecks[v.Check].Origins
	if v.Any || len(lines) < 3 {
		t.Fatalf("%d lines (any %v) for 60 origins of about 50 bytes each, want 3 or more", len(lines), v.Any)
	}
	var all []string
	for _, line := range lines {
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
	if err != nil || !v.Any || len(sp.v.CORSChecks) != 1 {
		t.Errorf("with \"*\" listed: %+v, %v, %d variables; want any origin, and no variable", v, err, len(sp.v.CORSChecks))
	}
}

// TestCORSVariableInHopServer: the hop server of a shared shape with
// listed origins sets the CORS variable its locations read, as the
// shared server does: it is another server block, which the shared
// server's server-level ifs do not reach.
func TestCORSVariableInHopServer(t *testing.T) {
	var extra strings.Builder
	for _, name := range []string{"x1", "x2"} {
		fmt.Fprintf(&extra, `---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: %[1]s
  namespace: team
  annotations: {nginx.ingress.kubernetes.io/enable-cors: "true", nginx.ingress.kubernetes.io/cors-allow-origin: "https://app.example.net"}
spec:
  ingressClassName: causeway
  rules:
    - host: %[1]s.example.com
      http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: a, port: {number: 80}}}}
`, name)
	}
	run := hopRender(t, extra.String(), nil)
	var text string
	for _, name := range run.Files.Names() {
		if strings.HasPrefix(name, "servers/_shared-") && strings.Contains(string(run.Files[name]), `"x1.example.com"`) {
			text = string(run.Files[name])
		}
	}
	if text == "" {
		t.Fatalf("x1 and x2 share no server: %v", run.Files.Names())
	}
	servers := strings.Count(text, "\nserver {")
	if !strings.Contains(text, "listen unix:") || servers != 2 {
		t.Fatalf("want the shared server and its hop server, got %d server blocks:\n%s", servers, text)
	}
	set := regexp.MustCompile(`(?m)^    set \$(causeway_cors_s[0-9a-f]+_0) "";$`)
	sets := set.FindAllStringSubmatch(text, -1)
	if len(sets) != 2 || sets[0][1] != sets[1][1] || !strings.Contains(text, `        set $causeway_cors "${`+sets[0][1]+`}$request_method";`) ||
		!strings.Contains(text, "        add_header Access-Control-Allow-Origin $"+sets[0][1]+"_origin always;") {
		t.Fatalf("the CORS variable is not set in both server blocks and read by the location:\n%s", text)
	}
	// The header values too, and they are what the location sends.
	for _, suffix := range []string{"_origin", "_credentials"} {
		if n := strings.Count(text, "    set $"+sets[0][1]+suffix+` "";`); n != 2 {
			t.Errorf("$%s%s is set in %d server blocks, want 2:\n%s", sets[0][1], suffix, n, text)
		}
	}
	if checks, preflights := strings.Count(text, "if ($http_origin"), strings.Count(text, "if ($causeway_cors"); checks != 2 || preflights != 2 {
		t.Errorf("%d origin checks and %d ifs of the locations, want one of each in each server block:\n%s", checks, preflights, text)
	}
}

// TestCORSIfsRepeatTheLocationsHeaders: add_header lines inside an if
// replace the location's, so every CORS if that adds headers must add
// each header the location adds (3841788: auth-url's Set-Cookie was
// missing). Checked on every golden server file and on a render that
// puts CORS, with listed and any origins, beside auth-url.
func TestCORSIfsRepeatTheLocationsHeaders(t *testing.T) {
	texts := map[string]string{}
	goldens, err := filepath.Glob(filepath.Join("testdata", "*", "golden", "servers", "*.conf"))
	if err != nil || len(goldens) == 0 {
		t.Fatalf("golden server files: %v (%d)", err, len(goldens))
	}
	for _, path := range goldens {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		texts[path] = string(b)
	}
	var extra strings.Builder
	for i, origin := range []string{"*", "https://app.example.net"} {
		fmt.Fprintf(&extra, `---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: corsauth%[1]d
  namespace: team
  annotations:
    nginx.ingress.kubernetes.io/enable-cors: "true"
    nginx.ingress.kubernetes.io/cors-allow-origin: %[2]q
    nginx.ingress.kubernetes.io/cors-expose-headers: "X-Total"
    nginx.ingress.kubernetes.io/auth-url: "http://auth.team.svc.cluster.local/check"
spec:
  ingressClassName: causeway
  rules:
    - host: corsauth%[1]d.example.com
      http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: a, port: {number: 80}}}}
`, i, origin)
	}
	run := hopRender(t, extra.String(), nil)
	for _, name := range run.Files.Names() {
		if text := string(run.Files[name]); strings.Contains(text, "corsauth") {
			texts[name] = text
		}
	}
	header := regexp.MustCompile(`^add_header "?([A-Za-z0-9-]+)"? `)
	name := func(line string) string {
		if m := header.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			return m[1]
		}
		return ""
	}
	ifs := 0
	cookies := 0
	for file, text := range texts {
		// A location's lines are indented by 8 spaces, an if's in it by 12.
		var own []string
		var corsIfs [][]string
		var body []string
		inLocation, inIf := false, false
		for _, line := range strings.Split(text, "\n") {
			switch {
			case strings.HasPrefix(line, "    location "):
				inLocation, own, corsIfs = true, nil, nil
			case inLocation && line == "    }":
				inLocation = false
				for _, got := range corsIfs {
					ifs++
					for _, h := range own {
						if !slices.Contains(got, h) {
							t.Errorf("%s: a CORS if adds %v but not the location's %s", file, got, h)
						}
						if h == "Set-Cookie" {
							cookies++
						}
					}
				}
			case inLocation && strings.HasPrefix(line, "        if ("):
				inIf, body = true, nil
			case inIf && line == "        }":
				inIf = false
				if slices.Contains(body, "Access-Control-Allow-Origin") {
					corsIfs = append(corsIfs, body)
				}
			case inIf:
				if h := name(line); h != "" {
					body = append(body, h)
				}
			case inLocation && strings.HasPrefix(line, "        add_header "):
				own = append(own, name(line))
			}
		}
	}
	if ifs == 0 || cookies == 0 {
		t.Errorf("%d CORS ifs checked, %d of them in a location with auth-url's Set-Cookie; want some of each", ifs, cookies)
	}
}
