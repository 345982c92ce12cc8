package annotations

import (
	"errors"

	"github.com/causeway/causeway/internal/model"
)

// authGroup is ingress-nginx's basic authentication and satisfy. They are
// security settings: a value that cannot be used as written makes every
// path of the Ingress answer 503, never serves it without the password.
var authGroup = Group{
	Name: "auth",
	Annotations: supported("auth",
		Annotation{Name: "auth-type", Scope: ScopeLocation, Default: "none: no authentication",
			Grammar: `"basic": nginx's auth_basic with the users of auth-secret; "digest": HTTP Digest (MD5, qop auth) with the users of auth-secret's htdigest file; ` +
				"requests without a listed user and password get 401",
			Difference: "digest is checked by Causeway's Lua data plane (Debian's nginx has no digest module) and fails closed without it; with digest, satisfy any is " +
				"refused and all applies, and a nonce stays valid 5 minutes without tracking its count (no replay protection within that time); " +
				"basic or digest without a usable auth-secret fails closed; ingress-nginx matches basic or digest anywhere in the value"},
		Annotation{Name: "auth-secret", Names: model.KindSecret, Scope: ScopeLocation, Default: "none; required by auth-type",
			Grammar: "name or namespace/name of a Secret in the Ingress's own namespace; with auth-secret-type auth-file its key auth is an htpasswd file, " +
				"one user:hash per line (blank and # lines skipped); hashes {SHA}, {SSHA}, $apr1$, $1$, $5$, $6$ (at most 100000 rounds) or bcrypt $2y$/$2b$/$2a$ (cost 04 to 12), " +
				"at most 1000 users; with auth-type digest, an htdigest file, one user:realm:MD5 per line, some of them of auth-realm; a change to the Secret applies without a reload " +
				"(nginx reads the basic file at every request; the digest file is read again within a second)",
			Difference: "a missing Secret, or one holding a plain-text or DES password, a repeated user or a line that is not user:hash, fails closed with a Problem; " +
				"set without auth-type it fails closed too (ingress-nginx then ignores it); other namespaces are refused (allow-cross-namespace-resources is always false)"},
		Annotation{Name: "auth-secret-type", Scope: ScopeLocation, Default: "auth-file",
			Grammar:    "auth-file (the key auth is an htpasswd file) or auth-map (each key is a user, its value the password hash, same hash formats)",
			Difference: "any other value fails closed, and so does auth-map with auth-type digest"},
		Annotation{Name: "auth-realm", Scope: ScopeLocation, Default: `"" (an empty realm)`,
			Grammar:    `up to 128 bytes of printable ASCII without '"', '\', '$', and not "off"; sent in WWW-Authenticate`,
			Difference: "a value outside that grammar fails closed"},
		Annotation{Name: "satisfy", Scope: ScopeLocation, Default: "all",
			Grammar: "all (a request must pass the source address lists and basic auth) or any (either one); with any, valid credentials also let in clients " +
				"that denylist-source-range or the ConfigMap's block-cidrs refuse, as in nginx",
			Difference: "any other value fails closed (ingress-nginx ignores it)"},
	),
	Parse: parseAuth,
}

func parseAuth(r *Reader, res *Result) {
	if v, ok := r.Get("satisfy"); ok {
		switch v {
		case "all":
		case "any":
			res.Location.Satisfy = model.SatisfyAny
		default:
			r.FailClosed("satisfy", v, errors.New(`want "all" or "any"`))
		}
	}
	typ, typed := r.Get("auth-type")
	if !typed {
		if v, ok := r.Get("auth-secret"); ok {
			r.FailClosed("auth-secret", v, errors.New(`needs auth-type "basic"`))
		}
		for _, n := range []string{"auth-secret-type", "auth-realm"} {
			if r.Has(n) {
				r.Ignored(n, "only applies with auth-type")
			}
		}
		return
	}
	closed := false
	fail := func(name, v string, err error) {
		r.FailClosed(name, v, err)
		closed = true
	}
	digest := false
	switch typ {
	case "basic":
	case "digest":
		digest = true
		if res.Location.Satisfy == model.SatisfyAny {
			r.Invalid("satisfy", "any", errors.New("not supported with auth-type digest; all applies"))
			res.Location.Satisfy = model.SatisfyAll
		}
	default:
		fail("auth-type", typ, errors.New(`want "basic" or "digest"`))
		return
	}
	ref := &AuthSecret{}
	if v, ok := r.Get("auth-secret"); !ok {
		fail("auth-type", typ, errors.New("needs auth-secret naming the Secret with the users"))
	} else if n, err := parseSameNamespace(v, r.ref.Namespace, "secret"); err != nil {
		fail("auth-secret", v, err)
	} else {
		ref.ObjectName = n
	}
	if v, ok := r.Get("auth-secret-type"); ok {
		switch v {
		case "auth-file":
		case "auth-map":
			if digest {
				fail("auth-secret-type", v, errors.New("auth-type digest reads the key auth as an htdigest file"))
			}
			ref.Map = true
		default:
			fail("auth-secret-type", v, errors.New(`want "auth-file" or "auth-map"`))
		}
	}
	auth := &model.BasicAuth{Digest: digest}
	ref.Digest = digest
	if v, ok := r.Get("auth-realm"); ok {
		realm, err := model.ParseRealm(v)
		if err != nil {
			fail("auth-realm", v, err)
		}
		auth.Realm = realm
	}
	if closed {
		return
	}
	res.Location.BasicAuth = auth
	res.BasicAuthSecret = ref
}
