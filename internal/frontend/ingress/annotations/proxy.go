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
		Annotation{Name: "client-body-buffer-size", Scope: ScopeLocation, Default: "8k (the ConfigMap's client-body-buffer-size)",
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
		Annotation{Name: "proxy-next-upstream", Scope: ScopeLocation, Default: "error timeout (the ConfigMap's proxy-next-upstream)",
			Grammar: fmt.Sprintf("at most %d of error, timeout, invalid_header, http_500, http_502, http_503, http_504, "+
				"http_403, http_404, http_429, non_idempotent, separated by spaces or commas; or off alone", len(model.NextUpstreamConditions)-1),
			Difference: "commas are accepted too, off must stand alone, and duplicates are dropped"},
		Annotation{Name: "proxy-next-upstream-timeout", Scope: ScopeLocation, Default: "0: no limit (the ConfigMap's proxy-next-upstream-timeout)",
			Grammar:    "a number of seconds from 0 to 86400, or a duration with one unit ms, s, m or h up to 24h; 0 means no limit",
			Difference: "nginx units are accepted too; negative values and more than 24h are refused"},
		Annotation{Name: "proxy-next-upstream-tries", Scope: ScopeLocation, Default: "the backend's retries (causeway.io/proxy-next-upstream-tries on the Service, 1)",
			Grammar:    fmt.Sprintf("a whole number from 1 to %d", maxTries),
			Difference: fmt.Sprintf("0 (no limit) is refused, as are more than %d and negative numbers", maxTries)},
		Annotation{Name: "proxy-request-buffering", Scope: ScopeLocation, Default: "on (the ConfigMap's proxy-request-buffering)",
			Grammar: "on or off"},
		Annotation{Name: "proxy-buffering", Scope: ScopeLocation, Default: "off (the ConfigMap's proxy-buffering)",
			Grammar: "on or off"},
		Annotation{Name: "proxy-buffers-number", Scope: ScopeLocation, Default: "4 (the ConfigMap's proxy-buffers-number)",
			Grammar: fmt.Sprintf("a whole number from %d to %d", minBuffers, maxBuffers),
			Difference: fmt.Sprintf("1, 2 and more than %d are refused: with proxy_busy_buffers_size at its default of two buffers, "+
				"nginx refuses a configuration with fewer than 3", maxBuffers)},
		Annotation{Name: "proxy-buffer-size", Scope: ScopeLocation, Default: "4k (the ConfigMap's proxy-buffer-size)",
			Grammar:    sizeGrammar + "; more than 0 and at most 1g; also the size of each of the proxy-buffers-number buffers",
			Difference: "0 and the unit b are refused"},
		Annotation{Name: "proxy-busy-buffers-size", Scope: ScopeLocation, Default: "the ConfigMap's proxy-busy-buffers-size, else twice proxy-buffer-size (nginx's default)",
			Grammar: sizeGrammar + "; at least proxy-buffer-size and at most all proxy-buffers-number buffers but one " +
				"(4k and 4 when they are not set), as nginx requires",
			Difference: "a value nginx would refuse is refused here instead of failing the reload"},
		Annotation{Name: "proxy-max-temp-file-size", Scope: ScopeLocation, Default: "1024m (the ConfigMap's proxy-max-temp-file-size)",
			Grammar: sizeGrammar + "; 0 turns temporary files off; anything else must be at least proxy-buffer-size " +
				"(4k when that is not set), as nginx requires",
			Difference: "a value nginx would refuse (more than 0 but less than the buffer size) is refused here instead of failing the reload"},
		Annotation{Name: "proxy-http-version", Scope: ScopeLocation, Default: "1.1 (the ConfigMap's proxy-http-version)",
			Grammar: "1.0 or 1.1"},
		Annotation{Name: "proxy-cookie-domain", Scope: ScopeLocation, Default: "off (the ConfigMap's proxy-cookie-domain)",
			Grammar: "off, or two domains separated by spaces: the Set-Cookie domain to replace and its replacement; each a lower-case " +
				"DNS name, optionally after one leading .",
			Difference: "regular expressions (~), variables, IP addresses and upper-case letters are refused"},
		Annotation{Name: "proxy-cookie-path", Scope: ScopeLocation, Default: "off (the ConfigMap's proxy-cookie-path)",
			Grammar: "off, or two paths separated by spaces: the Set-Cookie path to replace and its replacement; each as an Ingress " +
				"path is written (starts with /, letters, digits and - . _ ~ ! * ( ) + , = : @ & /, no // or . and .. segments)",
			Difference: "exactly two paths are required; regular expressions (~), variables, ? and & are refused"},
		Annotation{Name: "proxy-redirect-from", Scope: ScopeLocation, Default: "the ConfigMap's proxy-redirect-from, else nginx's proxy_redirect default",
			Grammar: "off, default, or the start of upstream Location and Refresh headers to replace: an absolute http or https URL " +
				"(as permanent-redirect) or a path as an Ingress path is written; default keeps nginx's own rewriting and sets nothing; " +
				"a URL or path needs proxy-redirect-to",
			Difference: "bare host names such as example.com, variables and regular expressions are refused"},
		Annotation{Name: "proxy-redirect-to", Scope: ScopeLocation, Default: "off (the ConfigMap's proxy-redirect-to)",
			Grammar: "off, or the replacement for proxy-redirect-from: an absolute http or https URL (as permanent-redirect) or a path " +
				"as an Ingress path is written; only used with a URL or path in proxy-redirect-from",
			Difference: "bare host names such as example.com and variables are refused; set without proxy-redirect-from it is reported as ignored"},
		Annotation{Name: "service-upstream", Scope: ScopeLocation, Default: "false (the ConfigMap's service-upstream)",
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
	Set(r, "proxy-connect-timeout", &p.Timeouts.Connect, model.ParseTimeout)
	Set(r, "proxy-send-timeout", &p.Timeouts.Send, model.ParseTimeout)
	Set(r, "proxy-read-timeout", &p.Timeouts.Read, model.ParseTimeout)
	Set(r, "proxy-next-upstream-tries", &p.Retry.Tries, func(s string) (int, error) { return parseInt(s, 1, maxTries) })
	for _, k := range policyKeys {
		if v, ok := r.Get(k.name); ok {
			if err := k.set(p, v); err != nil {
				r.Invalid(k.name, v, err)
			}
		}
	}
	r.dropUnfit(b)
	parseProxyRedirect(r, res)

	if v, ok := Parse(r, "service-upstream", model.ParseBool); ok {
		res.ServiceUpstream = v
	}
}

// policyKey is an annotation of the proxy group that sets a field of a
// location's policy, and whose ConfigMap key of the same name sets its
// default (defaults.go).
type policyKey struct {
	name string
	// set reads v into p, an Ingress's policy (which starts from the
	// ConfigMap's defaults) or the defaults themselves. Sizes are checked
	// against the buffers p sets so far; an invalid v leaves p unchanged.
	set func(p *model.Policy, v string) error
	// builtin is the value that applies where neither sets one; example
	// another, for the documentation.
	builtin, example string
	// upstream: the ConfigMap's key applies to VirtualServer upstreams
	// too (model.Defaults.UpstreamProxy).
	upstream bool
}

// policyKeys are read in this order: the buffers before the sizes that
// must fit them.
var policyKeys = []policyKey{
	{"client-body-buffer-size", sizeField(func(p *model.Policy) **model.Size { return &p.Buffering.ClientBodyBuffer }, 1, maxBufferSize), "8k", "64k", true},
	{"proxy-request-buffering", boolField(func(p *model.Policy) **bool { return &p.Buffering.Request }), "on", "off", false},
	{"proxy-buffering", boolField(func(p *model.Policy) **bool { return &p.Buffering.Response }), "off", "on", true},
	{"proxy-buffers-number", func(p *model.Policy, v string) error {
		n, err := parseInt(v, minBuffers, maxBuffers)
		if err == nil {
			p.Buffering.Buffers = n
		}
		return err
	}, "4", "8", true},
	{"proxy-buffer-size", sizeField(func(p *model.Policy) **model.Size { return &p.Buffering.BufferSize }, 1, maxBufferSize), "4k", "16k", true},
	{"proxy-busy-buffers-size", func(p *model.Policy, v string) error {
		b := &p.Buffering
		n, err := parseSize(1, maxBufferSize)(v)
		if err == nil {
			err = model.BusyBuffersFit(n, b.Buffers, bufferSize(b))
		}
		if err == nil {
			b.BusyBuffers = &n
		}
		return err
	}, "", "8k", true},
	{"proxy-max-temp-file-size", func(p *model.Policy, v string) error {
		b := &p.Buffering
		n, err := parseSize(0, -1)(v)
		if size := bufferSize(b); err == nil && n != 0 && n < size {
			err = fmt.Errorf("want 0 or at least the proxy buffer size, %s", model.FormatSize(int64(size)))
		}
		if err == nil {
			b.MaxTempFile = &n
		}
		return err
	}, "1024m", "0", true},
	{"proxy-http-version", func(p *model.Policy, v string) error {
		if v != "1.0" && v != "1.1" {
			return errors.New("want 1.0 or 1.1")
		}
		p.HTTPVersion = v
		return nil
	}, "1.1", "1.0", false},
	{"proxy-next-upstream", func(p *model.Policy, v string) error {
		on, err := model.ParseNextUpstream(v)
		if err == nil {
			p.Retry.On = on
		}
		return err
	}, "error timeout", "error timeout http_502", true},
	{"proxy-next-upstream-timeout", func(p *model.Policy, v string) error {
		d, err := model.ParseSeconds(v)
		if err == nil {
			p.Retry.Timeout = d
		}
		return err
	}, "0", "10s", true},
	{"proxy-cookie-domain", replaceField(func(p *model.Policy) **model.Replace { return &p.CookieDomain }, parseCookieDomain), "off", "svc.internal example.com", false},
	{"proxy-cookie-path", replaceField(func(p *model.Policy) **model.Replace { return &p.CookiePath }, parseCookiePath), "off", "/app/ /", false},
}

// sizeField, boolField and replaceField are policyKey setters of one
// field.
func sizeField(field func(*model.Policy) **model.Size, lo, hi int64) func(*model.Policy, string) error {
	return func(p *model.Policy, v string) error {
		n, err := parseSize(lo, hi)(v)
		if err == nil {
			*field(p) = &n
		}
		return err
	}
}

func boolField(field func(*model.Policy) **bool) func(*model.Policy, string) error {
	return func(p *model.Policy, v string) error {
		on, err := parseOnOff(v)
		if err == nil {
			*field(p) = &on
		}
		return err
	}
}

func replaceField(field func(*model.Policy) **model.Replace, parse func(string) (model.Replace, error)) func(*model.Policy, string) error {
	return func(p *model.Policy, v string) error {
		r, err := parse(v)
		if err == nil {
			*field(p) = &r
		}
		return err
	}
}

// bufferSize is the size of each proxy buffer b sets, or the http level's.
func bufferSize(b *model.Buffering) model.Size {
	if b.BufferSize != nil {
		return *b.BufferSize
	}
	return model.DefaultProxyBufferSize
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

// parseRedirectFrom parses proxy-redirect-from: off, default, or a
// place (parseRedirectPlace).
func parseRedirectFrom(s string) (string, error) {
	if s == "off" || s == "default" {
		return s, nil
	}
	return parseRedirectPlace(s)
}

// parseRedirectTo parses proxy-redirect-to: off or a place.
func parseRedirectTo(s string) (string, error) {
	if s == "off" {
		return s, nil
	}
	return parseRedirectPlace(s)
}

// combineRedirect is what proxy-redirect-from and proxy-redirect-to (each
// "" when not set) make together, as ingress-nginx combines them: from off
// stands alone (proxy_redirect off), from default or unset keeps nginx's
// default (nil), and a URL or path needs a to that is not off. unused
// names the one of the two that has no effect, with why.
func combineRedirect(from, to string) (rw *model.Replace, unused, why string) {
	switch from {
	case "":
		if to != "" {
			return nil, "proxy-redirect-to", "only applies together with proxy-redirect-from"
		}
		return nil, "", ""
	case "default", "off":
		if from == "off" {
			rw = &model.Replace{Off: true}
		}
		if to != "" {
			return rw, "proxy-redirect-to", "has no effect when proxy-redirect-from is " + from
		}
		return rw, "", ""
	}
	if to == "" || to == "off" {
		return nil, "proxy-redirect-from", "only applies together with a proxy-redirect-to that is not off"
	}
	return &model.Replace{From: from, To: to}, "", ""
}

// parseProxyRedirect reads proxy-redirect-from and proxy-redirect-to. Each
// replaces the ConfigMap's key of the same name alone, as in ingress-nginx;
// what has no effect is reported only when an annotation set it.
func parseProxyRedirect(r *Reader, res *Result) {
	hasFrom := r.Has("proxy-redirect-from")
	rawTo, hasTo := r.Get("proxy-redirect-to")
	if !hasFrom && !hasTo {
		return // the ConfigMap's, if any, stands
	}
	d := r.defaults
	if d == nil {
		d = &model.Defaults{}
	}
	from, fromOK := d.RedirectFrom, true
	if hasFrom {
		var f string
		if f, fromOK = Parse(r, "proxy-redirect-from", parseRedirectFrom); fromOK {
			from = f
		}
	}
	to, toOK := d.RedirectTo, true
	switch {
	case !hasTo:
	case from == "" || from == "off" || from == "default":
		if !hasFrom || fromOK {
			// Not used: reported below without checking it.
			to = rawTo
			break
		}
		fallthrough
	default:
		var t string
		if t, toOK = Parse(r, "proxy-redirect-to", parseRedirectTo); toOK {
			to = t
		}
	}
	rw, unused, why := combineRedirect(from, to)
	res.Location.RedirectRewrite = rw
	switch {
	case !fromOK || !toOK:
		// Reported by Parse.
	case unused == "proxy-redirect-from" && hasFrom, unused == "proxy-redirect-to" && hasTo:
		r.Ignored(unused, why)
	}
}
