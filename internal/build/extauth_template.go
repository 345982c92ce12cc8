package build

import (
	"github.com/causeway/causeway/internal/frontend/ingress"
	"github.com/causeway/causeway/internal/model"
)

// External authentication URLs with variables (model.URLTemplate): what
// the build checks that the grammar alone cannot.
//   - $escaped_request_uri is computed by the Lua data plane; without it
//     an auth-url naming it closes the paths and a sign-in URL naming it
//     is dropped.
//   - An auth-url whose host is $host sends the subrequest back to this
//     nginx, to the server of the request's host. In a rule without host
//     (the catch-all server) that host is whatever the client sent, so the
//     client would pick which of the servers decides: those paths answer
//     503.

// authTemplate returns the template of an auth URL with variables.
func authTemplate(url string) (model.URLTemplate, bool) {
	if url == "" {
		return model.URLTemplate{}, false
	}
	t, err := model.AuthURLTemplate(url)
	return t, err == nil && t.HasVars()
}

// signinTemplate returns the template of a sign-in URL with variables.
func signinTemplate(url string) (model.URLTemplate, bool) {
	if url == "" {
		return model.URLTemplate{}, false
	}
	t, err := model.ParseURLTemplate(url)
	return t, err == nil && t.HasVars()
}

// selfAuth reports whether a location's external authentication asks the
// request's own host.
func selfAuth(p *model.Policy) bool {
	if p == nil || p.ExternalAuth == nil {
		return false
	}
	t, ok := authTemplate(p.ExternalAuth.URL)
	return ok && t.SelfHost()
}

// escapedAuth reports whether the auth URL and the sign-in URL name
// $escaped_request_uri.
func escapedAuth(a *model.ExternalAuth) (url, signin bool) {
	if t, ok := authTemplate(a.URL); ok {
		url = t.Uses(model.URLVarEscapedRequestURI)
	}
	if t, ok := signinTemplate(a.SigninURL); ok {
		signin = t.Uses(model.URLVarEscapedRequestURI)
	}
	return url, signin
}

// luaAuthTemplates checks an Ingress's own external authentication
// against the data plane: it returns the policy without a sign-in URL
// the data plane cannot print, and closed when the auth URL cannot be
// asked.
func (b *builder) luaAuthTemplates(t *ingress.Translation, pol *model.Policy) (closed bool) {
	a := pol.ExternalAuth
	if a == nil || b.opts.LuaAvailable {
		return false
	}
	url, signin := escapedAuth(a)
	if url {
		b.problem(t.Ref, model.ReasonUnsupportedAnnotation, false,
			"annotation %s/auth-url: $escaped_request_uri is computed by the Lua data plane, which this nginx cannot run; "+
				"every path of this Ingress answers 503 rather than being served without authentication", b.opts.AnnotationsPrefix)
		return true
	}
	if signin {
		b.problem(t.Ref, model.ReasonUnsupportedAnnotation, false,
			"annotation %s/auth-signin: $escaped_request_uri is computed by the Lua data plane, which this nginx cannot run; "+
				"ignored: a 401 is answered as is", b.opts.AnnotationsPrefix)
		ext := *a
		ext.SigninURL = ""
		pol.ExternalAuth = &ext
	}
	return false
}

// luaGlobalAuth is luaAuthTemplates for the ConfigMap's global-auth-url
// and global-auth-signin.
func (b *builder) luaGlobalAuth(ref model.ObjectRef) {
	a := b.model.Config.GlobalAuth
	if a == nil || b.opts.LuaAvailable {
		return
	}
	url, signin := escapedAuth(a)
	if url {
		b.model.Config.FailClosed = append(b.model.Config.FailClosed, "global-auth-url")
		b.problem(ref, model.ReasonUnsupported, false, `key "global-auth-url": $escaped_request_uri is computed by the Lua data plane, `+
			"which this nginx cannot run; every path of every Ingress answers 503 rather than being served without authentication")
		return
	}
	if signin {
		b.problem(ref, model.ReasonUnsupported, false, `key "global-auth-signin": $escaped_request_uri is computed by the Lua data plane, `+
			"which this nginx cannot run; ignored: a 401 is answered as is")
		g := *a
		g.SigninURL = ""
		b.model.Config.GlobalAuth = &g
	}
}

// catchAllSelfAuth reports, with a Problem once per Ingress, a location
// of a rule without host whose authentication asks the request's own
// host; the caller closes it.
func (b *builder) catchAllSelfAuth(t *ingress.Translation, pol *model.Policy, reported *bool) bool {
	if !selfAuth(pol) {
		return false
	}
	if !*reported {
		*reported = true
		what := "annotation " + b.opts.AnnotationsPrefix + "/auth-url"
		if pol.ExternalAuth == b.model.Config.GlobalAuth {
			what = "the ConfigMap's global-auth-url"
		}
		b.problem(t.Ref, model.ReasonInvalidAnnotation, false,
			"%s names $host, which in a rule without host (or a defaultBackend) is whatever host the client sends, so the client "+
				"would choose which server decides; those paths answer 503: give the rule a host, or name the service", what)
	}
	return true
}
