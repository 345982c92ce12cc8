package flavour

import (
	"slices"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		out     string
		name    Name
		version []int
		http2   bool
		pass    bool
	}{
		// Debian bookworm's nginx prints to stderr, one line.
		{"nginx version: nginx/1.22.1\n", Nginx, []int{1, 22, 1}, false, false},
		{"nginx version: nginx/1.25.1\n", Nginx, []int{1, 25, 1}, true, false},
		{"nginx version: nginx/1.25.5\n", Nginx, []int{1, 25, 5}, true, true},
		// Debian trixie's.
		{"nginx version: nginx/1.26.3\n", Nginx, []int{1, 26, 3}, true, true},
		{"nginx version: nginx/1.24.0 (Ubuntu)\n", Nginx, []int{1, 24, 0}, false, false},
		{"nginx version: nginx/1.27.4\nbuilt by gcc 12.2.0\n", Nginx, []int{1, 27, 4}, true, true},
		{"nginx version: openresty/1.21.4.3\n", Nginx, []int{1, 21, 4}, false, false},
		// Angie's -v, as the vendored 1.12.1 prints it.
		{"Angie version: Angie/1.12.1\n", Angie, []int{1, 12, 1}, true, true},
		{"Angie version: Angie/1.2.0\n", Angie, []int{1, 2, 0}, false, false},
		{"Angie version: Angie/1.3.0\n", Angie, []int{1, 3, 0}, true, false},
		{"Angie version: Angie/1.6.0\n", Angie, []int{1, 6, 0}, true, true},
		// -V prints more lines after the version.
		{"Angie version: Angie/1.12.1\nbuilt by gcc 12.2.0 (Debian 12.2.0-14+deb12u1)\nconfigure arguments: --with-compat\n", Angie, []int{1, 12, 1}, true, true},
	} {
		f, err := Parse(tc.out)
		if err != nil {
			t.Errorf("%q: %v", tc.out, err)
			continue
		}
		if f.Name != tc.name || !slices.Equal(f.Version, tc.version) || f.HTTP2Directive() != tc.http2 || f.StreamPass() != tc.pass {
			t.Errorf("%q: got %s (http2 directive %v, stream pass %v), want %s %v (%v, %v)", tc.out, f, f.HTTP2Directive(), f.StreamPass(),
				tc.name, tc.version, tc.http2, tc.pass)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, out := range []string{
		"",
		"Usage: nginx [-?hvVtTq]\n",
		"bash: angie: command not found\n",
		"nginx version: caddy/2.0.0\n",
		"nginx version: nginx/\n",
		"nginx version: nginx/1\n",
		"nginx version: nginx/1.22.1; rm -rf /\n",
	} {
		if f, err := Parse(out); err == nil {
			t.Errorf("%q: parsed as %s", out, f)
		}
	}
}

func TestZeroIsConservative(t *testing.T) {
	var f Flavour
	if f.HTTP2Directive() || f.StreamPass() || f.String() != "nginx" {
		t.Errorf("zero flavour: %s, http2 directive %v", f, f.HTTP2Directive())
	}
}
