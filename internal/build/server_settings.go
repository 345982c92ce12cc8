package build

import (
	"reflect"
	"slices"
	"strings"

	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/model"
)

// hostSettings collects the server-level annotations offered for one
// host. Each setting belongs to the oldest Ingress that sets it; a younger
// Ingress that asks for a different value gets a Problem and is ignored
// for that setting only.
type hostSettings struct {
	set annotations.ServerSettings
	// owners are the Ingresses that set each annotation: a few at most,
	// so a slice (a map each was 8 MiB of a build at 10,000 hosts).
	owners []settingOwner
}

// settingOwner is the Ingress that set an annotation of a host.
type settingOwner struct {
	annotation string
	ref        model.ObjectRef
}

// ownerRef is owner's ref alone.
func (hs *hostSettings) ownerRef(annotation string) model.ObjectRef {
	ref, _ := hs.owner(annotation)
	return ref
}

// owner is the Ingress that set annotation, the zero ref if none did.
func (hs *hostSettings) owner(annotation string) (model.ObjectRef, bool) {
	for _, o := range hs.owners {
		if o.annotation == annotation {
			return o.ref, true
		}
	}
	return model.ObjectRef{}, false
}

// serverSetting is one field of annotations.ServerSettings with the
// annotation that sets it.
type serverSetting struct {
	annotation string
	field      func(*annotations.ServerSettings) any
}

// serverSettings lists the fields, each read and written through reflect
// on a pointer so one loop arbitrates them all.
var serverSettings = []serverSetting{
	{"server-alias", func(s *annotations.ServerSettings) any { return &s.Aliases }},
	{"from-to-www-redirect", func(s *annotations.ServerSettings) any { return &s.WWWRedirect }},
	{"app-root", func(s *annotations.ServerSettings) any { return &s.AppRoot }},
	{"ssl-redirect", func(s *annotations.ServerSettings) any { return &s.SSLRedirect }},
	{"force-ssl-redirect", func(s *annotations.ServerSettings) any { return &s.ForceSSLRedirect }},
	{"preserve-trailing-slash", func(s *annotations.ServerSettings) any { return &s.PreserveTrailingSlash }},
	// The auth-tls annotations are one setting: a host verifies clients
	// against one CA, as one Ingress configured it.
	{"auth-tls-*", func(s *annotations.ServerSettings) any { return &s.ClientTLS }},
	{"server-snippet", func(s *annotations.ServerSettings) any { return &s.Snippet }},
	{"ssl-ciphers", func(s *annotations.ServerSettings) any { return &s.SSLCiphers }},
	{"ssl-prefer-server-ciphers", func(s *annotations.ServerSettings) any { return &s.PreferServerCiphers }},
	// NGINX Ingress Controller's, named by their full keys.
	{"nginx.org/redirect-to-https", func(s *annotations.ServerSettings) any { return &s.HTTPSRedirect }},
	{"nginx.org/server-tokens", func(s *annotations.ServerSettings) any { return &s.ServerTokens }},
	{"nginx.org/hsts", func(s *annotations.ServerSettings) any { return &s.HSTS }},
}

// settingKey is the full key of a serverSettings annotation.
func (b *builder) settingKey(annotation string) string {
	if strings.Contains(annotation, "/") {
		return annotation
	}
	return b.opts.AnnotationsPrefix + "/" + annotation
}

// offerServerSettings applies an Ingress's server-level annotations to
// host, oldest Ingress first.
func (b *ingressProcessor) offerServerSettings(host string, ref model.ObjectRef, offered *annotations.ServerSettings) {
	if b.hostSettings == nil {
		b.hostSettings = map[string]*hostSettings{}
	}
	hs := b.hostSettings[host]
	if hs == nil {
		hs = &hostSettings{}
		b.hostSettings[host] = hs
	}
	for _, s := range serverSettings {
		want := reflect.ValueOf(s.field(offered)).Elem()
		if want.IsZero() {
			continue
		}
		have := reflect.ValueOf(s.field(&hs.set)).Elem()
		owner, owned := hs.owner(s.annotation)
		switch {
		case !owned:
			have.Set(want)
			hs.owners = append(hs.owners, settingOwner{s.annotation, ref})
		case owner != ref && !reflect.DeepEqual(have.Interface(), want.Interface()):
			b.problem(ref, model.ReasonCollision, false, "annotation %s for host %q is already set differently by %s, %s; ignored here",
				b.settingKey(s.annotation), displayHost(host), owner, b.whyFirst(owner, ref))
		}
	}
}

// serverPolicy turns the settings won for a host into the server's
// policy, and decides its HTTPS redirect. Aliases that name another
// server, or that an older host already aliases, are left out.
func (b *ingressProcessor) serverPolicy(srv *model.Server, aliased map[string]string) {
	srv.SSLRedirect = b.model.Config.SSLRedirect && srv.TLS != nil
	hs := b.hostSettings[srv.Host]
	if hs != nil && hs.set.ClientTLS != nil {
		// The catch-all server too: it answers Ingress rules without a
		// host, as ingress-nginx's "_" server does.
		b.clientTLS(srv, hs.set.ClientTLS, hs.ownerRef("auth-tls-*"))
	}
	if srv.Host == "" {
		return
	}
	if hs == nil {
		// A host of spec.tls alone: no annotations, but the defaults.
		hs = &hostSettings{}
	}
	s := hs.set
	// The ConfigMap's force-ssl-redirect and preserve-trailing-slash are
	// what a host's annotations start from.
	d := b.model.Config.Defaults
	p := &model.ServerPolicy{ForceSSLRedirect: d.ForceSSLRedirect, PreserveTrailingSlash: d.PreserveTrailingSlash}
	if s.SSLRedirect != nil {
		srv.SSLRedirect = *s.SSLRedirect && srv.TLS != nil
	}
	if s.ForceSSLRedirect != nil {
		p.ForceSSLRedirect = *s.ForceSSLRedirect
	}
	if p.ForceSSLRedirect {
		srv.SSLRedirect = true
	}
	if r := s.HTTPSRedirect; r != nil {
		// nginx.org/redirect-to-https: NIC's redirect, TLS or not.
		cp := *r
		srv.SSLRedirect, srv.HTTPSRedirect = true, &cp
	}
	p.HSTS = s.HSTS
	if v := s.ServerTokens; v != nil && *v && !b.model.Config.ServerTokens {
		b.problem(hs.ownerRef("nginx.org/server-tokens"), model.ReasonUnsupportedAnnotation, false,
			"annotation nginx.org/server-tokens for host %q: the ConfigMap's server-tokens is false, which removes the Server header "+
				"on every host; ignored", srv.Host)
	} else {
		p.ServerTokens = v
	}
	if s.PreserveTrailingSlash != nil {
		p.PreserveTrailingSlash = *s.PreserveTrailingSlash
	}
	if s.WWWRedirect != nil {
		p.WWWRedirect = *s.WWWRedirect
		if p.WWWRedirect && srv.Wildcard() {
			b.problem(hs.ownerRef("from-to-www-redirect"), model.ReasonUnsupportedAnnotation, false,
				"annotation %s/from-to-www-redirect has no effect on the wildcard host %q; ignored", b.opts.AnnotationsPrefix, srv.Host)
			p.WWWRedirect = false
		}
		if twin := wwwTwin(srv.Host); p.WWWRedirect && b.servers[twin] != nil {
			b.problem(hs.ownerRef("from-to-www-redirect"), model.ReasonCollision, false,
				"annotation %s/from-to-www-redirect for host %q: %q is a host of its own and keeps its routes; the redirect is not set up",
				b.opts.AnnotationsPrefix, srv.Host, twin)
			p.WWWRedirect = false
		}
		if twin := wwwTwin(srv.Host); p.WWWRedirect {
			if other := aliased[twin]; other != "" && other != srv.Host {
				b.problem(hs.ownerRef("from-to-www-redirect"), model.ReasonCollision, false,
					"annotation %s/from-to-www-redirect for host %q: %q already names host %q; the redirect is not set up",
					b.opts.AnnotationsPrefix, srv.Host, twin, other)
				p.WWWRedirect = false
			} else {
				aliased[twin] = srv.Host
			}
		}
	}
	if s.AppRoot != nil {
		p.AppRoot = *s.AppRoot
	}
	for _, a := range s.Aliases {
		owner := hs.ownerRef("server-alias")
		switch {
		case b.servers[a] != nil:
			b.problem(owner, model.ReasonCollision, false, "alias %q of host %q is a host of its own; the alias is left out", a, srv.Host)
		case aliased[a] != "" && aliased[a] != srv.Host:
			b.problem(owner, model.ReasonCollision, false, "alias %q of host %q already names host %q (an alias or www twin); left out", a, srv.Host, aliased[a])
		default:
			aliased[a] = srv.Host
			p.Aliases = append(p.Aliases, a)
		}
	}
	slices.Sort(p.Aliases)
	p.SSLCiphers, p.PreferServerCiphers = s.SSLCiphers, s.PreferServerCiphers
	p.Snippet = b.serverSnippet(srv, s.Snippet, hs.ownerRef("server-snippet"), "annotation "+b.opts.AnnotationsPrefix+"/server-snippet", model.ReasonInvalidAnnotation)
	if p.Snippet != nil {
		b.restrictServer(srv, p.Snippet.Access, "the host's server-snippet")
	}
	if !reflect.DeepEqual(*p, model.ServerPolicy{}) {
		p.Source = hs.ownerRef(firstOwned(hs))
		srv.Policy = p
	}
}

// catchAllTLS refuses the cipher annotations of an Ingress's rules
// without a host: the catch-all server's ciphers would be those of every
// name no host serves.
func (b *builder) catchAllTLS(ref model.ObjectRef, s *annotations.ServerSettings) {
	for _, c := range []struct {
		name string
		set  bool
	}{{"ssl-ciphers", s.SSLCiphers != ""}, {"ssl-prefer-server-ciphers", s.PreferServerCiphers != nil}} {
		if name := c.name; c.set {
			b.problem(ref, model.ReasonUnsupportedAnnotation, false,
				"annotation %s/%s does not apply to Ingress rules without a host (the catch-all server); ignored there", b.opts.AnnotationsPrefix, name)
		}
	}
}

// clientTLS sets up client certificate authentication for a host, or,
// when the CA cannot be used, makes every path of the host answer 503:
// serving them without the check would fail open.
func (b *builder) clientTLS(srv *model.Server, c *annotations.ClientTLSSettings, owner model.ObjectRef) {
	if c.Closed {
		// The annotation Problem is the owner's already.
		b.problem(owner, model.ReasonInvalidAnnotation, false,
			"annotations %s/auth-tls-* cannot be used; every path of host %q answers 503", b.opts.AnnotationsPrefix, displayHost(srv.Host))
		closeServer(srv)
		return
	}
	key, err := b.clientCA(c.Secret)
	if err != nil {
		b.problem(owner, secretReason(err), false,
			"annotation %s/auth-tls-secret: %v; every path of host %q answers 503 rather than being served without client certificates",
			b.opts.AnnotationsPrefix, err, displayHost(srv.Host))
		closeServer(srv)
		return
	}
	srv.ClientTLS = &model.ClientTLS{Secret: key, Verify: c.Verify, Depth: c.Depth, ErrorPage: c.ErrorPage,
		PassCertificate: c.PassCertificate, MatchCN: c.MatchCN, Source: owner}
}

// closeServer makes every location of srv, and its default, answer 503.
func closeServer(srv *model.Server) {
	for i, l := range srv.Locations {
		srv.Locations[i] = &model.Location{Match: l.Match, Source: l.Source, Action: model.ReturnStatus(503)}
	}
	if srv.Default != nil {
		srv.Default = &model.Location{Match: srv.Default.Match, Source: srv.Default.Source, Action: model.ReturnStatus(503)}
	}
}

// firstOwned is the first setting of hs in table order that has an owner.
func firstOwned(hs *hostSettings) string {
	for _, s := range serverSettings {
		if _, ok := hs.owner(s.annotation); ok {
			return s.annotation
		}
	}
	return ""
}

// wwwTwin is the other half of a www redirect: "www.a.com" for "a.com"
// and the reverse.
func wwwTwin(host string) string {
	if rest, ok := strings.CutPrefix(host, "www."); ok && rest != "" {
		return rest
	}
	return "www." + host
}
