package annotations

import (
	"errors"
	"fmt"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// proxyGroup is ingress-nginx's proxy parser: sizes, timeouts, retries,
// buffering and the rewriting of cookies and redirects from upstream.
var proxyGroup = Group{
	Name: "proxy",
	Annotations: supported("proxy",
		Annotation{Name: "proxy-body-size", Scope: ScopeLocation, Default: "1m (the ConfigMap's proxy-body-size)",
			Grammar:    sizeGrammar + "; 0 means unlimited",
			Difference: "the unit b is refused (ingress-nginx accepts 1b but then renders nothing)"},
		Annotation{Name: "client-body-buffer-size", Scope: ScopeLocation, Default: "8k",
			Grammar:    sizeGrammar + "; more than 0 and at most 1g",
			Difference: "an invalid value drops the setting instead of rejecting the Ingress; the unit g is accepted (ingress-nginx renders nothing for it)"},
		Annotation{Name: "proxy-connect-timeout", Scope: ScopeLocation, Default: "5 (the ConfigMap's proxy-connect-timeout)",
			Grammar:    timeoutGrammar,
			Difference: timeoutDifference},
		Annotation{Name: "proxy-send-timeout", Scope: ScopeLocation, Default: "60 (the ConfigMap's proxy-send-timeout)",
			Grammar:    timeoutGrammar,
			Difference: timeoutDifference},
		Annotation{Name: "proxy-read-timeout", Scope: ScopeLocation, Default: "60 (the ConfigMap's proxy-read-timeout)",
			Grammar:    timeoutGrammar,
			Difference: timeoutDifference},
		Annotation{Name: "proxy-next-upstream", Scope: ScopeLocation, Default: "error timeout",
			Grammar: fmt.Sprintf("at most %d of error, timeout, invalid_header, http_500, http_502, http_503, http_504, "+
				"http_403, http_404, http_429, non_idempotent, separated by spaces or commas; or off alone", len(model.NextUpstreamConditions)-1),
			Difference: "commas are accepted too, off must stand alone, and duplicates are dropped"},
		Annotation{Name: "proxy-next-upstream-timeout", Scope: ScopeLocation, Default: "0: no limit",
			Grammar:    "a number of seconds from 0 to 86400, or a duration with one unit ms, s, m or h up to 24h; 0 means no limit",
			Difference: "nginx units are accepted too; negative values and more than 24h are refused"},
		Annotation{Name: "proxy-next-upstream-tries", Scope: ScopeLocation, Default: "the backend's retries (causeway.io/proxy-next-upstream-tries on the Service, 1)",
			Grammar:    fmt.Sprintf("a whole number from 1 to %d", maxTries),
			Difference: fmt.Sprintf("0 (no limit) is refused, as are more than %d and negative numbers", maxTries)},
		Annotation{Name: "proxy-request-buffering", Scope: ScopeLocation, Default: "on",
			Grammar: "on or off"},
		Annotation{Name: "proxy-buffering", Scope: ScopeLocation, Default: "off",
			Grammar: "on or off"},
		Annotation{Name: "proxy-buffers-number", Scope: ScopeLocation, Default: "4",
			Grammar: fmt.Sprintf("a whole number from %d to %d", minBuffers, maxBuffers),
			Difference: fmt.Sprintf("1, 2 and more than %d are refused: with proxy_busy_buffers_size at its default of two buffers, "+
				"nginx refuses a configuration with fewer than 3", maxBuffers)},
		Annotation{Name: "proxy-buffer-size", Scope: ScopeLocation, Default: "4k",
			Grammar:    sizeGrammar + "; more than 0 and at most 1g; also the size of each of the proxy-buffers-number buffers",
			Difference: "0 and the unit b are refused"},
		Annotation{Name: "proxy-busy-buffers-size", Scope: ScopeLocation, Default: "twice proxy-buffer-size (nginx's default)",
			Grammar: sizeGrammar + "; at least proxy-buffer-size and at most all proxy-buffers-number buffers but one " +
				"(4k and 4 when they are not set), as nginx requires",
			Difference: "a value nginx would refuse is refused here instead of failing the reload"},
		Annotation{Name: "proxy-max-temp-file-size", Scope: ScopeLocation, Default: "1024m",
			Grammar: sizeGrammar + "; 0 turns temporary files off; anything else must be at least proxy-buffer-size " +
				"(4k when that is not set), as nginx requires",
			Difference: "a value nginx would refuse (more than 0 but less than the buffer size) is refused here instead of failing the reload"},
		Annotation{Name: "proxy-http-version", Scope: ScopeLocation, Default: "1.1",
			Grammar: "1.0 or 1.1"},
		Annotation{Name: "proxy-cookie-domain", Scope: ScopeLocation, Default: "off",
			Grammar: "off, or two domains separated by spaces: the Set-Cookie domain to replace and its replacement; each a lower-case " +
				"DNS name, optionally after one leading .",
			Difference: "regular expressions (~), variables, IP addresses and upper-case letters are refused"},
		Annotation{Name: "proxy-cookie-path", Scope: ScopeLocation, Default: "off",
			Grammar: "off, or two paths separated by spaces: the Set-Cookie path to replace and its replacement; each as an Ingress " +
				"path is written (starts with /, letters, digits and - . _ ~ ! * ( ) + , = : @ & /, no // or . and .. segments)",
			Difference: "exactly two paths are required; regular expressions (~), variables, ? and & are refused"},
		Annotation{Name: "proxy-redirect-from", Scope: ScopeLocation, Default: "nginx's proxy_redirect default",
			Grammar: "off, default, or the start of upstream Location and Refresh headers to replace: an absolute http or https URL " +
				"(as permanent-redirect) or a path as an Ingress path is written; default keeps nginx's own rewriting and sets nothing; " +
				"a URL or path needs proxy-redirect-to",
			Difference: "bare host names such as example.com, variables and regular expressions are refused"},
		Annotation{Name: "proxy-redirect-to", Scope: ScopeLocation, Default: "off",
			Grammar: "off, or the replacement for proxy-redirect-from: an absolute http or https URL (as permanent-redirect) or a path " +
				"as an Ingress path is written; only used with a URL or path in proxy-redirect-from",
			Difference: "bare host names such as example.com and variables are refused; set without proxy-redirect-from it is reported as ignored"},
		Annotation{Name: "service-upstream", Scope: ScopeLocation, Default: "false",
			Grammar:    "a boolean: true, false, 1, 0, t, f (any case); proxies to the Service's cluster IP instead of its endpoints",
			Difference: "applies to the Ingress's own paths; ingress-nginx lets the first Ingress of a Service decide for every Ingress using it"},
	),
	Parse: parseProxy,
}

const (
	sizeGrammar = "a size in nginx's syntax: 1 to 9 digits and an optional unit k, m or g (either case), such as 512k or 8m"
	// timeoutGrammar and timeoutDifference document the three timeouts.
	timeoutGrammar    = "a number of seconds from 1 to 86400, or a duration with one unit ms, s, m or h from 1ms to 24h, such as 60, 5s or 500ms"
	timeoutDifference = "nginx units are accepted too (ingress-nginx takes bare seconds only); 0, negative values and more than 24h are refused"
)

// Bounds on proxy settings. proxy-next-upstream-tries starts at 1: the
// model reads 0 as not set, which would be the ConfigMap's 3, not
// ingress-nginx's "no limit".
const (
	maxTries      = 100
	minBuffers    = 3
	maxBuffers    = 64
	maxBufferSize = 1 << 30
)

func parseProxy(r *Reader, res *Result) {
	p := &res.Location
	b := &p.Buffering
	SetPtr(r, "proxy-body-size", &b.BodySize, parseSize(0, -1))
	SetPtr(r, "client-body-buffer-size", &b.ClientBodyBuffer, parseSize(1, maxBufferSize))
	Set(r, "proxy-connect-timeout", &p.Timeouts.Connect, model.ParseTimeout)
	Set(r, "proxy-send-timeout", &p.Timeouts.Send, model.ParseTimeout)
	Set(r, "proxy-read-timeout", &p.Timeouts.Read, model.ParseTimeout)

	Set(r, "proxy-next-upstream", &p.Retry.On, model.ParseNextUpstream)
	Set(r, "proxy-next-upstream-timeout", &p.Retry.Timeout, model.ParseSeconds)
	Set(r, "proxy-next-upstream-tries", &p.Retry.Tries, func(s string) (int, error) { return parseInt(s, 1, maxTries) })

	SetPtr(r, "proxy-request-buffering", &b.Request, parseOnOff)
	SetPtr(r, "proxy-buffering", &b.Response, parseOnOff)
	Set(r, "proxy-buffers-number", &b.Buffers, func(s string) (int, error) { return parseInt(s, minBuffers, maxBuffers) })
	SetPtr(r, "proxy-buffer-size", &b.BufferSize, parseSize(1, maxBufferSize))
	bufSize := model.DefaultProxyBufferSize
	if b.BufferSize != nil {
		bufSize = *b.BufferSize
	}
	SetPtr(r, "proxy-busy-buffers-size", &b.BusyBuffers, func(s string) (model.Size, error) {
		n, err := parseSize(1, maxBufferSize)(s)
		if err == nil {
			err = model.BusyBuffersFit(n, b.Buffers, bufSize)
		}
		return n, err
	})
	SetPtr(r, "proxy-max-temp-file-size", &b.MaxTempFile, func(s string) (model.Size, error) {
		n, err := parseSize(0, -1)(s)
		if err == nil && n != 0 && n < bufSize {
			return 0, fmt.Errorf("want 0 or at least the proxy buffer size, %s", model.FormatSize(int64(bufSize)))
		}
		return n, err
	})

	Set(r, "proxy-http-version", &p.HTTPVersion, func(s string) (string, error) {
		if s != "1.0" && s != "1.1" {
			return "", errors.New("want 1.0 or 1.1")
		}
		return s, nil
	})
	SetPtr(r, "proxy-cookie-domain", &p.CookieDomain, parseCookieDomain)
	SetPtr(r, "proxy-cookie-path", &p.CookiePath, parseCookiePath)
	parseProxyRedirect(r, res)

	if v, ok := Parse(r, "service-upstream", model.ParseBool); ok {
		res.ServiceUpstream = v
	}
}

// parseSize returns a parser of sizes from lo to hi bytes (hi < 0: no
// bound beyond model.ParseSize's).
func parseSize(lo, hi int64) func(string) (model.Size, error) {
	return func(s string) (model.Size, error) {
		n, err := model.ParseSize(s)
		if err != nil {
			return 0, err
		}
		if n < lo || (hi >= 0 && n > hi) {
			if hi < 0 {
				return 0, fmt.Errorf("want a size of at least %s", model.FormatSize(lo))
			}
			return 0, fmt.Errorf("want a size from %s to %s", model.FormatSize(lo), model.FormatSize(hi))
		}
		return model.Size(n), nil
	}
}

// parseOnOff parses nginx's on and off.
func parseOnOff(s string) (bool, error) {
	switch s {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, errors.New("want on or off")
}

// parsePair splits "off" or exactly two fields separated by spaces or
// tabs, each checked by check.
func parsePair(s, what string, check func(string) error) (model.Replace, error) {
	if s == "off" {
		return model.Replace{Off: true}, nil
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < ' ' && c != '\t') || c >= 0x7f {
			return model.Replace{}, fmt.Errorf("want off or two %s separated by spaces, not a value with control or non-ASCII bytes", what)
		}
	}
	f := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' })
	if len(f) != 2 {
		return model.Replace{}, fmt.Errorf("want off or two %s separated by spaces", what)
	}
	for _, x := range f {
		if err := check(x); err != nil {
			return model.Replace{}, err
		}
	}
	return model.Replace{From: f[0], To: f[1]}, nil
}

// parseCookieDomain parses proxy-cookie-domain.
func parseCookieDomain(s string) (model.Replace, error) {
	return parsePair(s, "domains", func(d string) error {
		name := strings.TrimPrefix(d, ".")
		if strings.HasPrefix(name, "*") {
			return fmt.Errorf("cookie domain %q must not be a wildcard", model.Truncate(d))
		}
		return model.ValidateHost(name)
	})
}

// parseCookiePath parses proxy-cookie-path.
func parseCookiePath(s string) (model.Replace, error) {
	return parsePair(s, "paths", model.ValidatePath)
}

// parseRedirectPlace checks one side of proxy_redirect: an absolute URL,
// returned as ParseRedirectURL rebuilds it, or a path.
func parseRedirectPlace(s string) (string, error) {
	if strings.HasPrefix(s, "/") {
		if err := model.ValidatePath(s); err != nil {
			return "", err
		}
		return s, nil
	}
	u, err := model.ParseRedirectURL(s)
	if err != nil {
		return "", fmt.Errorf("want off, an absolute http or https URL or a path: %w", err)
	}
	return u, nil
}

// parseProxyRedirect reads proxy-redirect-from and proxy-redirect-to as
// ingress-nginx combines them: from off or default stands alone; a URL
// or path needs a to that is not off.
func parseProxyRedirect(r *Reader, res *Result) {
	from, hasFrom := r.Get("proxy-redirect-from")
	to, hasTo := r.Get("proxy-redirect-to")
	if !hasFrom {
		if hasTo {
			r.Ignored("proxy-redirect-to", "only applies together with proxy-redirect-from")
		}
		return
	}
	switch from {
	case "off":
		res.Location.RedirectRewrite = &model.Replace{Off: true}
		if hasTo {
			r.Ignored("proxy-redirect-to", "has no effect when proxy-redirect-from is off")
		}
		return
	case "default":
		// nginx's own default rewriting: nothing to set.
		if hasTo {
			r.Ignored("proxy-redirect-to", "has no effect when proxy-redirect-from is default")
		}
		return
	}
	f, fromOK := Parse(r, "proxy-redirect-from", parseRedirectPlace)
	var t string
	toOK := false
	if hasTo && to != "off" {
		t, toOK = Parse(r, "proxy-redirect-to", parseRedirectPlace)
	}
	switch {
	case !fromOK || hasTo && to != "off" && !toOK:
		// Reported by Parse.
	case !hasTo || to == "off":
		r.Ignored("proxy-redirect-from", "only applies together with a proxy-redirect-to that is not off")
	default:
		res.Location.RedirectRewrite = &model.Replace{From: f, To: t}
	}
}
