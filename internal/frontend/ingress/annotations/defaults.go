package annotations

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// This file is the one layer of defaults for per-location annotations:
// the controller's ConfigMap may set ingress-nginx's per-location keys
// (proxy-buffering, custom-http-errors, force-ssl-redirect, ...) for every
// Ingress, and an annotation of the same name overrides its key alone, as
// in ingress-nginx. The ConfigMap front-end reads each key with
// ParseDefault, through the annotation's own parser, into model.Defaults;
// ParseIngress starts every Ingress's Result from those.

// DefaultKey is a ConfigMap key that sets the default of the annotation of
// the same name.
type DefaultKey struct {
	Name string
	// Builtin is the value that applies where neither is set: what the
	// http level of the configuration, or nginx, applies. A ConfigMap value
	// that means the same is left unset ("" when no value does).
	Builtin string
	// Example is a value that sets something, for the documentation.
	Example string
	// VirtualServers says that the key applies to the routes of
	// VirtualServers and VirtualServerRoutes too (model.Defaults.
	// UpstreamProxy).
	VirtualServers bool
	// DefaultBackend says that the key applies to the location of the
	// --default-backend-service too, as to ingress-nginx's default server.
	DefaultBackend bool
	// Scope is where the annotation, and so the key, applies.
	Scope Scope
	set   func(d *model.Defaults, v string) error
}

// defaultKeys are the keys, each read with its annotation's grammar.
var defaultKeys = func() []DefaultKey {
	var out []DefaultKey
	for _, k := range policyKeys {
		out = append(out, DefaultKey{Name: k.name, Builtin: k.builtin, Example: k.example, VirtualServers: k.upstream, DefaultBackend: true, Scope: ScopeLocation,
			set: func(d *model.Defaults, v string) error { return k.set(&d.Proxy, v) }})
	}
	return append(out,
		DefaultKey{Name: "proxy-redirect-from", Builtin: "default", Example: "http://svc.internal/", DefaultBackend: true, Scope: ScopeLocation, set: func(d *model.Defaults, v string) (err error) {
			if d.RedirectFrom, err = parseRedirectFrom(v); err == nil {
				d.Proxy.RedirectRewrite, _, _ = combineRedirect(d.RedirectFrom, d.RedirectTo)
			}
			return err
		}},
		DefaultKey{Name: "proxy-redirect-to", Builtin: "off", Example: "https://example.com/", DefaultBackend: true, Scope: ScopeLocation, set: func(d *model.Defaults, v string) (err error) {
			if d.RedirectTo, err = parseRedirectTo(v); err == nil {
				d.Proxy.RedirectRewrite, _, _ = combineRedirect(d.RedirectFrom, d.RedirectTo)
			}
			return err
		}},
		DefaultKey{Name: "custom-http-errors", Example: "404,503", DefaultBackend: true, Scope: ScopeLocation, set: func(d *model.Defaults, v string) (err error) {
			d.ErrorCodes, err = model.ParseStatusCodes(v)
			return err
		}},
		DefaultKey{Name: "service-upstream", Builtin: "false", Example: "true", Scope: ScopeLocation, set: func(d *model.Defaults, v string) (err error) {
			d.ServiceUpstream, err = model.ParseBool(v)
			return err
		}},
		DefaultKey{Name: "force-ssl-redirect", Builtin: "false", Example: "true", Scope: ScopeServer, set: func(d *model.Defaults, v string) (err error) {
			d.ForceSSLRedirect, err = model.ParseBool(v)
			return err
		}},
		DefaultKey{Name: "preserve-trailing-slash", Builtin: "false", Example: "true", Scope: ScopeServer, set: func(d *model.Defaults, v string) (err error) {
			d.PreserveTrailingSlash, err = model.ParseBool(v)
			return err
		}},
	)
}()

// DefaultKeys returns the keys, sorted by name.
func DefaultKeys() []DefaultKey {
	out := slices.Clone(defaultKeys)
	slices.SortFunc(out, func(a, b DefaultKey) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// ParseDefault reads the ConfigMap's value of key, one of DefaultKeys,
// into d with the grammar of the annotation of the same name. Sizes are
// checked against the buffers d sets so far, so the buffer keys must be
// read first: the ConfigMap front-end reads keys sorted by name, and
// proxy-buffer-size and proxy-buffers-number sort before
// proxy-busy-buffers-size and proxy-max-temp-file-size. An invalid value
// leaves d unchanged.
func ParseDefault(d *model.Defaults, key, value string) error {
	i := slices.IndexFunc(defaultKeys, func(k DefaultKey) bool { return k.Name == key })
	if i < 0 {
		return fmt.Errorf("%q is not a default of an annotation", model.Truncate(key))
	}
	k := defaultKeys[i]
	before := *d
	if err := k.set(d, value); err != nil {
		*d = before
		return err
	}
	if k.Builtin != "" {
		builtin := before
		if err := k.set(&builtin, k.Builtin); err != nil {
			panic("annotations: builtin default of " + key + ": " + err.Error())
		}
		if reflect.DeepEqual(*d, builtin) {
			// What applies anyway: nothing to print.
			*d = before
			return nil
		}
	}
	d.Keys = append(slices.Clone(d.Keys), key)
	return nil
}

// UnusedDefaults explains the keys of d that apply to no Ingress as they
// stand: a proxy-redirect-from or proxy-redirect-to whose other half is
// missing applies only where an annotation supplies it.
func UnusedDefaults(d *model.Defaults) []string {
	_, unused, why := combineRedirect(d.RedirectFrom, d.RedirectTo)
	if unused == "" {
		return nil
	}
	other := "proxy-redirect-from"
	if unused == other {
		other = "proxy-redirect-to"
	}
	return []string{fmt.Sprintf("key %q %s; it applies only to Ingresses that set the %s annotation", unused, why, other)}
}

// startFrom sets res to what the ConfigMap's defaults say before an
// Ingress's annotations are read.
func (res *Result) startFrom(d *model.Defaults) {
	if d == nil {
		return
	}
	res.Location = d.Proxy
	if len(d.ErrorCodes) > 0 {
		res.Location.Errors = &model.ErrorPages{Codes: d.ErrorCodes}
	}
	res.ServiceUpstream = d.ServiceUpstream
}

// defaulted lists the keys of d whose value the Ingress uses: those it
// sets no valid annotation of the same name for.
func (r *Reader) defaulted(d *model.Defaults) []string {
	if d == nil {
		return nil
	}
	var out []string
	for _, k := range d.Keys {
		if !r.Has(k) || slices.Contains(r.refused, k) {
			out = append(out, k)
		}
	}
	return out
}

// dropUnfit reports and removes the ConfigMap's busy buffers size or
// largest temporary file when the Ingress's own buffers no longer fit
// them (model.Buffering.DropUnfit).
func (r *Reader) dropUnfit(b *model.Buffering) {
	for _, what := range b.DropUnfit() {
		r.problems = append(r.problems, model.Problem{Object: r.ref, Reason: model.ReasonUnsupportedAnnotation,
			Message: fmt.Sprintf("the ConfigMap's %s does not fit the proxy buffers this Ingress's annotations set; nginx's default applies to its paths", what)})
	}
}
