package build

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"hash/maphash"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/causeway/causeway/internal/digest"
	"github.com/causeway/causeway/internal/frontend/ingress"
	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/model"
)

// This file resolves what annotations name in other objects: the
// default-backend Service, the custom-headers ConfigMap and the
// proxy-ssl-secret Secret. A reference that cannot be used drops the
// setting with a Problem, except the TLS secret for backends, which is
// security-relevant: its paths answer 503 instead.

// resolvePolicy completes an Ingress's location policy with the objects
// its annotations name. It returns nil when the Ingress sets no policy,
// and closed when its paths must answer 503.
func (b *builder) resolvePolicy(t *ingress.Translation) (p *model.Policy, fallback string, closed bool) {
	a := &t.Annotations
	pol := a.Location
	pol.Access = defaultAccess(pol.Access, b.model.Config.DefaultAccess)
	withSnippetAccess(&pol)
	if d := a.DefaultBackend; d != nil {
		fallback = b.serviceBackend(t.Ref, t.Namespace, d, "default-backend")
	}
	if pol.Errors != nil {
		errs := *pol.Errors
		switch {
		case fallback != "":
			errs.Backend = fallback
		case b.globalDefault != "":
			errs.Backend = b.globalDefault
		case slices.Contains(a.Defaulted, "custom-http-errors"):
			// The ConfigMap's, reported there once (defaultErrorsProblem).
		default:
			b.problem(t.Ref, model.ReasonUnsupportedAnnotation, false,
				"annotation %s/custom-http-errors needs a default backend (the default-backend annotation or the --default-backend-service flag); ignored",
				b.opts.AnnotationsPrefix)
		}
		if errs.Backend != "" {
			pol.Errors = &errs
		} else {
			pol.Errors = nil
		}
	}
	if n := a.CustomHeaders; n != nil {
		pol.ResponseHeaders = b.customHeaders(t.Ref, *n)
	}
	if n := a.UpstreamTLSSecret; n != nil {
		key, err := b.proxySecret(*n)
		if err != nil {
			b.problem(t.Ref, secretReason(err), false,
				"annotation %s/proxy-ssl-secret: %v; every path of this Ingress answers 503 rather than talking to its backends without it",
				b.opts.AnnotationsPrefix, err)
			return nil, "", true
		}
		tlsPol := model.UpstreamTLS{}
		if pol.UpstreamTLS != nil {
			tlsPol = *pol.UpstreamTLS
		}
		tlsPol.Secret = key
		pol.UpstreamTLS = &tlsPol
	}
	if n := a.BasicAuthSecret; n != nil && pol.BasicAuth != nil {
		if n.Digest && !b.opts.LuaAvailable {
			b.problem(t.Ref, model.ReasonUnsupportedAnnotation, false,
				"annotation %s/auth-type: digest authentication is checked by the Lua data plane, which this nginx cannot run; "+
					"every path of this Ingress answers 503 rather than being served without authentication", b.opts.AnnotationsPrefix)
			return nil, "", true
		}
		key, err := b.authFile(*n, pol.BasicAuth.Realm)
		if err != nil {
			b.problem(t.Ref, secretReason(err), false,
				"annotation %s/auth-secret: %v; every path of this Ingress answers 503 rather than being served without authentication",
				b.opts.AnnotationsPrefix, err)
			return nil, "", true
		}
		auth := *pol.BasicAuth
		auth.File = key
		pol.BasicAuth = &auth
	}
	if n := a.AuthProxySetHeaders; n != nil && pol.ExternalAuth != nil {
		headers, err := b.authProxyHeaders(*n)
		if err != nil {
			reason := model.ReasonInvalidAnnotation
			if errors.Is(err, errNotFound) {
				reason = model.ReasonMissingConfigMap
			}
			b.problem(t.Ref, reason, false,
				"annotation %s/auth-proxy-set-headers: %v; every path of this Ingress answers 503 rather than asking the authentication service without them",
				b.opts.AnnotationsPrefix, err)
			return nil, "", true
		}
		ext := *pol.ExternalAuth
		ext.ProxySetHeaders = headers
		pol.ExternalAuth = &ext
	}
	if b.luaAuthTemplates(t, &pol) {
		return nil, "", true
	}
	if pol.UpstreamTLS != nil && pol.UpstreamTLS.Verify && !b.hasCA(pol.UpstreamTLS.Secret) {
		b.problem(t.Ref, model.ReasonInvalidSecret, false,
			"annotation %s/proxy-ssl-verify is on but proxy-ssl-secret holds no ca.crt to verify against; every path of this Ingress answers 503",
			b.opts.AnnotationsPrefix)
		return nil, "", true
	}
	ms, closed := b.modSecurity(t)
	if closed {
		return nil, "", true
	}
	pol.ModSecurity = ms
	if isZeroPolicy(&pol) {
		return nil, fallback, false
	}
	return b.internPolicy(&pol), fallback, false
}

// internPolicy is p, or the equal policy an Ingress resolved before it in
// this build. Ingresses with the same annotations resolve equal policies:
// at 10,000 Ingresses in 100 layouts, 10,000 policies of 480 bytes each
// were a third of the model, which is live through the render and sets
// the collector's goal with it. A policy is shared by every location of
// its Ingress already, and nothing changes one once resolved (globalAuth,
// servicePolicy and the render change copies), so one more sharer
// changes nothing.
//
// Equal is two digests of the policy under two seeds drawn for this
// build (package digest, which tells apart what reflect.DeepEqual does):
// 128 bits no one can aim at, where a chance collision among 10,000
// policies is about 10^-31. Confirming each with reflect.DeepEqual cost
// three times the digests, a seventh of the build at 10,000 Ingresses.
func (b *builder) internPolicy(p *model.Policy) *model.Policy {
	if p == nil {
		return nil
	}
	if b.policySeeds[0] == (maphash.Seed{}) {
		b.policySeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}
	}
	var key [2]uint64
	for i, seed := range b.policySeeds {
		x := digest.Hasher{}
		x.SetSeed(seed)
		if !x.Add(p) {
			return p
		}
		key[i] = x.Sum64()
	}
	if q := b.policies[key]; q != nil {
		return q
	}
	if b.policies == nil {
		b.policies = map[[2]uint64]*model.Policy{}
	}
	b.policies[key] = p
	return p
}

// defaultAccess fills the source address lists an Ingress does not set
// with the ConfigMap's (whitelist-source-range, denylist-source-range):
// each annotation replaces its own default only, as in ingress-nginx.
func defaultAccess(own *model.AccessList, def model.AccessList) *model.AccessList {
	var out model.AccessList
	if own != nil {
		out = *own
	}
	if out.Allow == nil {
		out.Allow = def.Allow
	}
	if out.Deny == nil {
		out.Deny = def.Deny
	}
	if len(out.Allow)+len(out.Deny) == 0 {
		return nil
	}
	return &out
}

// errNotFound marks a referenced object that is not in the snapshot: the
// Problem's reason then says it is missing rather than invalid.
var errNotFound = errors.New("not found")

// secretReason is the reason of a Problem with a Secret an annotation names.
func secretReason(err error) string {
	if errors.Is(err, errNotFound) {
		return model.ReasonMissingSecret
	}
	return model.ReasonInvalidSecret
}

// serviceBackend resolves a Service named by an annotation into a backend
// key, "" (with a Problem) when it cannot serve.
func (b *builder) serviceBackend(ref model.ObjectRef, ns string, s *annotations.ServiceRef, annotation string) string {
	svc := b.idx.service(ns, s.Name)
	port := networkingv1.ServiceBackendPort{Name: s.Port}
	if n, err := strconv.Atoi(s.Port); err == nil {
		port = networkingv1.ServiceBackendPort{Number: int32(n)}
	}
	if s.Port == "" && svc != nil && len(svc.Spec.Ports) > 0 {
		// No port named: the Service's first port, as ingress-nginx does.
		port = networkingv1.ServiceBackendPort{Number: svc.Spec.Ports[0].Port}
	}
	be, err := b.idx.resolve(ns, &networkingv1.IngressServiceBackend{Name: s.Name, Port: port})
	if err != nil {
		b.problem(ref, model.ReasonMissingService, false, "annotation %s/%s: %v; ignored", b.opts.AnnotationsPrefix, annotation, err)
		return ""
	}
	return b.addBackend(be).Key
}

// customHeaders reads the ConfigMap that custom-headers names: each key
// is a response header name, each value its value.
func (b *builder) customHeaders(ref model.ObjectRef, n annotations.ObjectName) []model.Header {
	cm := b.configMaps[n.String()]
	if cm == nil {
		b.problem(ref, model.ReasonMissingConfigMap, false, "annotation %s/custom-headers: ConfigMap %s not found; no headers are added",
			b.opts.AnnotationsPrefix, n)
		return nil
	}
	return readHeaders(cm, func(name string) error {
		if !slices.ContainsFunc(b.model.Config.AllowedResponseHeaders, func(a string) bool { return strings.EqualFold(a, name) }) {
			return fmt.Errorf("the header is not in the ConfigMap's global-allowed-response-headers")
		}
		return nil
	}, func(k string, err error) {
		b.problem(ref, model.ReasonInvalidAnnotation, false, "annotation %s/custom-headers: ConfigMap %s key %q: %v; that header is left out",
			b.opts.AnnotationsPrefix, n, model.Truncate(k), err)
	})
}

// proxySecret validates the Secret for TLS to backends: ca.crt (a CA
// bundle), and tls.crt with tls.key (a client certificate), each
// optional but not both absent.
func (b *builder) proxySecret(n annotations.ObjectName) (string, error) {
	ps, err := b.tlsFiles(n)
	if err != nil {
		return "", err
	}
	if len(ps.CA) == 0 && len(ps.Cert) == 0 {
		return "", fmt.Errorf("secret %s holds neither ca.crt nor tls.crt", n)
	}
	return ps.Key(), nil
}

// clientCA validates the Secret that auth-tls-secret names: ca.crt is
// required, ca.crl optional.
func (b *builder) clientCA(n annotations.ObjectName) (string, error) {
	ps, err := b.tlsFiles(n)
	if err != nil {
		return "", err
	}
	if len(ps.CA) == 0 {
		return "", fmt.Errorf("secret %s holds no ca.crt", n)
	}
	return ps.Key(), nil
}

// tlsFiles reads and validates the TLS material of a Secret named by an
// annotation, whichever keys it holds: ca.crt, tls.crt with tls.key, and
// ca.crl. One Secret may serve proxy-ssl-secret and auth-tls-secret at
// once, so each is read whatever the annotation.
func (b *builder) tlsFiles(n annotations.ObjectName) (*model.ProxySecret, error) {
	key := n.String()
	if ps, ok := b.proxySecrets[key]; ok {
		return ps, nil
	}
	s := b.secretsIn[key]
	if s == nil {
		return nil, fmt.Errorf("secret %s %w", key, errNotFound)
	}
	ps := &model.ProxySecret{Namespace: n.Namespace, Name: n.Name,
		Cert: s.Data[corev1.TLSCertKey], PrivateKey: s.Data[corev1.TLSPrivateKeyKey], CA: s.Data["ca.crt"], CRL: s.Data["ca.crl"]}
	if len(ps.CA) > 0 {
		if err := model.CheckChainSize(ps.CA); err != nil {
			return nil, fmt.Errorf("secret %s ca.crt: %w", key, err)
		}
		if !certificatesOnly(ps.CA) {
			return nil, fmt.Errorf("secret %s ca.crt holds no PEM certificate, or something else besides", key)
		}
	}
	if len(ps.CRL) > 0 {
		if len(ps.CRL) > maxCRLBytes {
			return nil, fmt.Errorf("secret %s ca.crl is %d bytes, more than %d", key, len(ps.CRL), maxCRLBytes)
		}
		if !crlsOnly(ps.CRL) {
			return nil, fmt.Errorf("secret %s ca.crl holds no PEM X509 CRL, or something else besides", key)
		}
	}
	if len(ps.Cert) > 0 || len(ps.PrivateKey) > 0 {
		if err := model.CheckChainSize(ps.Cert); err != nil {
			return nil, fmt.Errorf("secret %s tls.crt: %w", key, err)
		}
		if _, err := tls.X509KeyPair(ps.Cert, ps.PrivateKey); err != nil {
			return nil, fmt.Errorf("secret %s: %v", key, err)
		}
	}
	b.proxySecrets[key] = ps
	return ps, nil
}

// authFile validates the Secret with the users of basic authentication:
// an htpasswd file under its key auth, or one user per key (auth-map), or
// for digest authentication an htdigest file under its key auth, with
// users of realm (a digest file is checked again for each realm that
// uses it).
func (b *builder) authFile(n annotations.AuthSecret, realm string) (string, error) {
	f := &model.AuthFile{Namespace: n.Namespace, Name: n.Name, Map: n.Map, Digest: n.Digest}
	key := f.Key()
	if _, ok := b.authFiles[key]; ok && !n.Digest {
		return key, nil
	}
	s := b.secretsIn[n.String()]
	if s == nil {
		return "", fmt.Errorf("secret %s %w", n, errNotFound)
	}
	var err error
	if n.Map {
		f.Data, err = authMap(s.Data)
	} else if raw, ok := s.Data["auth"]; !ok {
		return "", fmt.Errorf("secret %s has no key auth (with auth-secret-type auth-map, each key is a user)", n)
	} else if n.Digest {
		// Checked per realm: a file that serves one realm may hold no
		// user of another.
		f.Data, err = model.ParseHtdigest(raw, realm)
	} else {
		f.Data, err = model.ParseHtpasswd(raw)
	}
	if err != nil {
		return "", fmt.Errorf("secret %s: %w", n, err)
	}
	b.authFiles[key] = f
	return key, nil
}

// authMap reads a Secret as one user per key, its value the password
// hash (one trailing newline, as files leave, is dropped).
func authMap(data map[string][]byte) ([]byte, error) {
	users := slices.Sorted(maps.Keys(data))
	var out bytes.Buffer
	seen := map[string]bool{}
	for _, u := range users {
		h := strings.TrimSuffix(strings.TrimSuffix(string(data[u]), "\n"), "\r")
		if err := model.AddAuthUser(&out, seen, u, h); err != nil {
			return nil, err
		}
	}
	if len(seen) == 0 {
		return nil, fmt.Errorf("holds no user")
	}
	return out.Bytes(), nil
}

// hasCA reports whether the proxy secret key holds a CA bundle.
func (b *builder) hasCA(key string) bool {
	s := b.proxySecrets[key]
	return s != nil && len(s.CA) > 0
}

// certificatesOnly reports whether data is one or more PEM certificates
// that parse, and nothing else.
func certificatesOnly(data []byte) bool {
	return pemOnly(data, "CERTIFICATE", func(der []byte) error { _, err := x509.ParseCertificate(der); return err })
}

// maxCRLBytes bounds ca.crl, which nginx reads at every reload.
const maxCRLBytes = 4 << 20

// crlsOnly reports whether data is one or more PEM X509 CRLs that
// parse, and nothing else.
func crlsOnly(data []byte) bool {
	return pemOnly(data, "X509 CRL", func(der []byte) error { _, err := x509.ParseRevocationList(der); return err })
}

// pemOnly reports whether data is one or more PEM blocks of type typ that
// parse, and nothing else.
func pemOnly(data []byte, typ string, parse func([]byte) error) bool {
	n := 0
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return n > 0 && len(trimSpace(rest)) == 0
		}
		if block.Type != typ || parse(block.Bytes) != nil {
			return false
		}
		n++
	}
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\n' || b[0] == '\r' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}

// globalAuth adds the ConfigMap's global-auth-url to the policy of a
// location that has no external authentication of its own, unless its
// Ingress opts out (enable-global-auth "false") or its path starts with
// one of no-auth-locations, as in ingress-nginx.
func (b *builder) globalAuth(t *ingress.Translation, p *model.Policy, m model.Match) *model.Policy {
	g := b.model.Config.GlobalAuth
	if g == nil || t.Annotations.NoGlobalAuth || (p != nil && p.ExternalAuth != nil) {
		return p
	}
	for _, l := range b.model.Config.NoAuthLocations {
		if strings.HasPrefix(m.Path, l) {
			return p
		}
	}
	out := model.Policy{}
	if p != nil {
		out = *p
	}
	out.ExternalAuth = g
	return &out
}

// authProxyHeaders reads the ConfigMap that auth-proxy-set-headers names:
// each key a header name, each value its value. Any entry it cannot use
// is an error: the service may decide on it.
func (b *builder) authProxyHeaders(n annotations.ObjectName) ([]model.Header, error) {
	cm := b.configMaps[n.String()]
	if cm == nil {
		return nil, fmt.Errorf("ConfigMap %s %w", n, errNotFound)
	}
	var errs []error
	headers := readHeaders(cm, func(name string) error {
		if slices.ContainsFunc(model.AuthSubrequestHeaders, func(h string) bool { return strings.EqualFold(h, name) }) {
			return errors.New("the subrequest sets this header itself")
		}
		return nil
	}, func(k string, err error) {
		errs = append(errs, fmt.Errorf("ConfigMap %s key %q: %w", n, model.Truncate(k), err))
	})
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return headers, nil
}
