package render

import (
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

func TestPassthroughKey(t *testing.T) {
	for _, tc := range []struct{ host, want string }{
		{"app.example.com", `"app.example.com"`},
		{"*.example.com", `"~*^[^.]+\\.example\\.com\\z"`},
		{"", ""},
		{"a.com;}", ""},
		{"A.example.com", ""},
		{"a.com unix:/x", ""},
	} {
		got, err := passthroughKey(tc.host)
		if got != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("passthroughKey(%q) = %q, %v; want %q", tc.host, got, err, tc.want)
		}
	}
}

// TestPassthroughRefusesHeaderRealIP: the builder never hands render
// passthrough with a header-based client address, which the HTTPS
// socket could not honour; render refuses it rather than trust "unix:".
func TestPassthroughRefusesHeaderRealIP(t *testing.T) {
	m := &model.Model{Config: model.DefaultConfig(), Passthrough: &model.Passthrough{}}
	m.Config.RealIP.UseForwardedHeaders = true
	if _, err := Render(m, goldenParams); err == nil || !strings.Contains(err.Error(), "client address from a header") {
		t.Errorf("err %v", err)
	}
}
