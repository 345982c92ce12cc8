package render

import (
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

// TestServerHSTSHidesTheBackendsHeader: with the ConfigMap's HSTS off, a
// server with HSTS of its own hides the backend's Strict-Transport-Security
// itself, repeating the http level's hidden headers (nginx inherits none
// into a level that hides any), and so does a location of it that hides a
// header of its own; another server hides nothing of its own.
func TestServerHSTSHidesTheBackendsHeader(t *testing.T) {
	hide := &model.Snippet{ProxyHideHeaders: []string{"X-Internal"}}
	own := &model.Server{Host: "own.example.com", Policy: &model.ServerPolicy{HSTS: &model.ServerHSTS{HSTS: model.HSTS{Enabled: true, MaxAge: 600}}},
		Locations: []*model.Location{loc(model.StringPrefix, "/", nil), loc(model.StringPrefix, "/hide", &model.Policy{Snippet: hide})}}
	other := &model.Server{Host: "other.example.com", Locations: []*model.Location{loc(model.StringPrefix, "/", nil)}}
	m := policyModel(own, other)
	m.Config.HSTS.Enabled = false
	m.Config.HideHeaders = []string{"X-Powered-By"}
	res, err := Render(m, goldenParams)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range res.Files {
		s := string(data)
		switch {
		case strings.Contains(name, "own.example.com"):
			if strings.Count(s, `proxy_hide_header "Strict-Transport-Security";`) != 2 || strings.Count(s, `proxy_hide_header "X-Powered-By";`) != 2 ||
				!strings.Contains(s, `grpc_hide_header "Strict-Transport-Security";`) {
				t.Errorf("%s: want the server and /hide to hide Strict-Transport-Security and X-Powered-By:\n%s", name, s)
			}
		case strings.Contains(name, "other.example.com"):
			if strings.Contains(s, "hide_header") {
				t.Errorf("%s hides headers of its own:\n%s", name, s)
			}
		case name == "nginx.conf" && strings.Contains(s, `proxy_hide_header "Strict-Transport-Security";`):
			t.Errorf("the http level hides Strict-Transport-Security with HSTS off")
		}
	}
}

// TestServerGunzip: a server whose policy asks for gunzip turns the
// filter on; another does not.
func TestServerGunzip(t *testing.T) {
	on := &model.Server{Host: "gz.example.com", Policy: &model.ServerPolicy{Gunzip: true}, Locations: []*model.Location{loc(model.StringPrefix, "/", nil)}}
	off := &model.Server{Host: "plain.example.com", Locations: []*model.Location{loc(model.StringPrefix, "/", nil)}}
	res, err := Render(policyModel(on, off), goldenParams)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range res.Files {
		if got, want := strings.Contains(string(data), "gunzip on;"), strings.Contains(name, "gz.example.com"); got != want {
			t.Errorf("%s: gunzip on %v, want %v", name, got, want)
		}
	}
}
