package annotations

import (
	"errors"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// mirrorGroup copies every request of the Ingress's paths to another URL
// and ignores the answers. Its target was how CVE-2025-1098 injected
// configuration into ingress-nginx, so only $request_uri, at the end, may
// reach nginx as a variable.
var mirrorGroup = Group{
	Name: "mirror",
	Annotations: supported("mirror",
		Annotation{Name: "mirror-target", Scope: ScopeLocation, Default: "none: no mirroring",
			Grammar: "an absolute http or https URL of up to 2048 bytes, host a DNS name or IP address, optionally ending in " +
				"$request_uri (with no query and no trailing / before it); no other $, no user information, no fragment",
			Difference: "nginx variables other than a final $request_uri are refused, as is a / right before it (the request URI " +
				"starts with one); an invalid target turns mirroring off " +
				"(ingress-nginx still renders a mirror directive with no location behind it)"},
		Annotation{Name: "mirror-host", Scope: ScopeLocation, Default: "the host of mirror-target",
			Grammar:    "a lower-case DNS name",
			Difference: "nginx variables, ports, wildcards and IP addresses are refused"},
		Annotation{Name: "mirror-request-body", Scope: ScopeLocation, Default: "on",
			Grammar:    "on or off (any case)",
			Difference: "values other than on and off are refused (ingress-nginx reads them as on)"},
	),
	Parse: parseMirror,
}

func parseMirror(r *Reader, res *Result) {
	m := &model.Mirror{RequestBody: true, Percent: 100}
	_, hasTarget := r.Get("mirror-target")
	if !hasTarget {
		for _, n := range []string{"mirror-host", "mirror-request-body"} {
			if r.Has(n) {
				r.Ignored(n, "only applies with mirror-target")
			}
		}
		return
	}
	ok := Set(r, "mirror-target", &m.URL, model.ParseMirrorURL)
	Set(r, "mirror-host", &m.Host, parseMirrorHost)
	Set(r, "mirror-request-body", &m.RequestBody, parseNginxSwitch)
	if ok {
		res.Location.Mirrors = []model.Mirror{*m}
	}
}

// parseMirrorHost checks the Host header of mirrored requests: a DNS name.
func parseMirrorHost(s string) (model.HeaderValue, error) {
	if strings.HasPrefix(s, "*.") {
		return "", errors.New("want a DNS name, not a wildcard")
	}
	if err := model.ValidateHost(s); err != nil {
		return "", err
	}
	return model.ParseHeaderValue(s)
}
