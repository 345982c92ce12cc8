// Package flavour tells the data-plane binaries Causeway drives apart:
// nginx and Angie, its configuration-compatible fork. Everything that
// differs between them is decided here, from the binary's `-v` output, so
// the renderer and the runtime ask one small switch instead of comparing
// names. Paths are not among the differences: Causeway names the prefix,
// pid, temp and log paths in every configuration it writes, so the
// binaries' compiled-in defaults (which differ) are never used.
package flavour

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// Name is the data plane's family.
type Name string

// The families.
const (
	Nginx Name = "nginx"
	Angie Name = "angie"
)

// Flavour is one data-plane binary's family and version. The zero value
// is nginx of an unknown version, which gets the most conservative
// configuration (what nginx 1.22, Debian bookworm's, accepts).
type Flavour struct {
	Name Name
	// Version is the release, such as [1, 22, 1]; nil when unknown.
	Version []int
}

// versionLine matches the first line of `nginx -v` and `angie -v`:
// "nginx version: nginx/1.22.1", "Angie version: Angie/1.12.1",
// "nginx version: openresty/1.21.4.3", optionally followed by a
// distribution's note such as " (Ubuntu)".
var versionLine = regexp.MustCompile(`(?m)^(?:nginx|Angie) version: ([A-Za-z]+)/([0-9]+(?:\.[0-9]+){1,3})(?:\s.*)?$`)

// Parse reads the output of `BINARY -v`.
func Parse(out string) (Flavour, error) {
	m := versionLine.FindStringSubmatch(out)
	if m == nil {
		return Flavour{}, fmt.Errorf("not the version line of nginx or Angie: %q", firstLine(out))
	}
	var f Flavour
	switch strings.ToLower(m[1]) {
	case "nginx", "openresty":
		f.Name = Nginx
	case "angie":
		f.Name = Angie
	default:
		return Flavour{}, fmt.Errorf("unknown server %q in %q", m[1], firstLine(out))
	}
	for _, p := range strings.Split(m[2], ".") {
		n, err := strconv.Atoi(p)
		if err != nil || n > 100000 {
			return Flavour{}, fmt.Errorf("bad version %q", m[2])
		}
		f.Version = append(f.Version, n)
	}
	// OpenResty numbers its releases after the nginx core it bundles,
	// with a fourth component of its own.
	if len(f.Version) > 3 {
		f.Version = f.Version[:3]
	}
	return f, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// Detect runs `binary -v` and parses what it prints.
func Detect(ctx context.Context, binary string) (Flavour, error) {
	out, err := exec.CommandContext(ctx, binary, "-v").CombinedOutput()
	if err != nil {
		return Flavour{}, fmt.Errorf("%s -v: %v: %s", binary, err, firstLine(string(out)))
	}
	return Parse(string(out))
}

// String is "nginx 1.22.1" or "angie 1.12.1".
func (f Flavour) String() string {
	name := f.Name
	if name == "" {
		name = Nginx
	}
	if f.Version == nil {
		return string(name)
	}
	v := make([]string, len(f.Version))
	for i, n := range f.Version {
		v[i] = strconv.Itoa(n)
	}
	return string(name) + " " + strings.Join(v, ".")
}

// atLeast reports whether the version is known and not older than want.
func (f Flavour) atLeast(want ...int) bool {
	if f.Version == nil {
		return false
	}
	for i, w := range want {
		v := 0
		if i < len(f.Version) {
			v = f.Version[i]
		}
		if v != w {
			return v > w
		}
	}
	return true
}

// HTTP2Directive reports whether HTTP/2 is switched on with the server's
// `http2 on;` rather than the `http2` parameter of `listen`, which such
// binaries deprecate with a warning on every configuration test: nginx
// from 1.25.1, Angie from 1.3.0 (which merged that nginx).
func (f Flavour) HTTP2Directive() bool {
	if f.Name == Angie {
		return f.atLeast(1, 3, 0)
	}
	return f.atLeast(1, 25, 1)
}

// StreamPass reports whether the stream module has the pass directive,
// which hands an accepted connection to another listening socket of the
// same server within the worker, with no second connection: nginx from
// 1.25.5, Angie from 1.6.0 (which merged that nginx).
func (f Flavour) StreamPass() bool {
	if f.Name == Angie {
		return f.atLeast(1, 6, 0)
	}
	return f.atLeast(1, 25, 5)
}
