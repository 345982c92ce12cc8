package spec

import (
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// Basic authentication rows. Their password files use {SHA} hashes, made
// here as htpasswd -s makes them, which Eval can check as nginx does.

// SHAHash is htpasswd -s's hash of a password: {SHA} and the base64 of its
// SHA-1.
func SHAHash(pw string) string {
	d := sha1.Sum([]byte(pw))
	return "{SHA}" + base64.StdEncoding.EncodeToString(d[:])
}

// BasicCredentials is an Authorization header value.
func BasicCredentials(user, pw string) map[string]string {
	return map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pw))}
}

var (
	htpasswd  = map[string]string{"auth": "# staff\nalice:" + SHAHash("wonderland") + "\nbob:" + SHAHash("builder") + "\n"}
	basicAuth = ann("auth-type", "basic", "auth-secret", "users", "auth-realm", "Staff only")
	authFrom  = func(from string, h map[string]string) Request {
		return Request{Host: "auth.test", Path: "/", From: from, Header: h}
	}
	challenge  = map[string]string{"Www-Authenticate": `Basic realm="Staff only"`}
	withAuth   = func(kv ...string) map[string]string { m := ann(kv...); mergeMissing(m, basicAuth); return m }
	authSecret = map[string]map[string]string{"users": htpasswd}
)

// mergeMissing copies the entries of src that dst lacks.
func mergeMissing(dst, src map[string]string) {
	for k, v := range src {
		if _, ok := dst[k]; !ok {
			dst[k] = v
		}
	}
}

// AuthTable is one row per basic authentication and satisfy behaviour.
var AuthTable = []AnnotationCase{
	{Name: "basic auth: no credentials get 401 with the realm",
		Ingresses: one("auth.test", "/", "Prefix", "app", basicAuth), Secrets: authSecret,
		Request: authFrom("", nil), Want: Response{Status: 401, Header: challenge}},
	{Name: "basic auth: a wrong password gets 401",
		Ingresses: one("auth.test", "/", "Prefix", "app", basicAuth), Secrets: authSecret,
		Request: authFrom("", BasicCredentials("alice", "looking-glass")), Want: Response{Status: 401, Header: challenge}},
	{Name: "basic auth: an unknown user gets 401",
		Ingresses: one("auth.test", "/", "Prefix", "app", basicAuth), Secrets: authSecret,
		Request: authFrom("", BasicCredentials("mallory", "wonderland")), Want: Response{Status: 401}},
	{Name: "basic auth: the right password is served",
		Ingresses: one("auth.test", "/", "Prefix", "app", basicAuth), Secrets: authSecret,
		Request: authFrom("", BasicCredentials("bob", "builder")), Want: Response{Status: 200, Service: "app"}},
	{Name: "basic auth: auth-map, one user per key",
		Ingresses: one("auth.test", "/", "Prefix", "app", withAuth("auth-secret-type", "auth-map")),
		Secrets:   map[string]map[string]string{"users": {"carol": SHAHash("s3cret")}},
		Request:   authFrom("", BasicCredentials("carol", "s3cret")), Want: Response{Status: 200, Service: "app"}},
	{Name: "basic auth: a missing Secret closes the paths",
		Ingresses: one("auth.test", "/", "Prefix", "app", basicAuth),
		Request:   authFrom("", BasicCredentials("bob", "builder")), Want: Response{Status: 503}, Problems: []string{model.ReasonMissingSecret}},
	{Name: "basic auth: a plain-text password closes the paths",
		Ingresses: one("auth.test", "/", "Prefix", "app", basicAuth), Secrets: map[string]map[string]string{"users": {"auth": "bob:builder\n"}},
		Request: authFrom("", BasicCredentials("bob", "builder")), Want: Response{Status: 503}, Problems: []string{model.ReasonInvalidSecret}},
	{Name: "digest auth with an htpasswd file, not an htdigest one, closes the paths",
		Ingresses: one("auth.test", "/", "Prefix", "app", withAuth("auth-type", "digest")), Secrets: authSecret,
		Request: authFrom("", BasicCredentials("bob", "builder")), Want: Response{Status: 503}, Problems: []string{model.ReasonInvalidSecret}},
	{Name: "satisfy any: a listed client needs no credentials",
		Ingresses: one("auth.test", "/", "Prefix", "app", withAuth("satisfy", "any", "allowlist-source-range", "127.0.0.1")), Secrets: authSecret,
		Request: authFrom("127.0.0.1", nil), Want: Response{Status: 200, Service: "app"}},
	{Name: "satisfy any: another client must authenticate",
		Ingresses: one("auth.test", "/", "Prefix", "app", withAuth("satisfy", "any", "allowlist-source-range", "127.0.0.1")), Secrets: authSecret,
		Request: authFrom("127.0.0.5", nil), Want: Response{Status: 401, Header: challenge}},
	{Name: "satisfy any: another client with credentials is served",
		Ingresses: one("auth.test", "/", "Prefix", "app", withAuth("satisfy", "any", "allowlist-source-range", "127.0.0.1")), Secrets: authSecret,
		Request: authFrom("127.0.0.5", BasicCredentials("alice", "wonderland")), Want: Response{Status: 200, Service: "app"}},
	{Name: "satisfy all: credentials do not let an unlisted client in",
		Ingresses: one("auth.test", "/", "Prefix", "app", withAuth("allowlist-source-range", "127.0.0.1")), Secrets: authSecret,
		Request: authFrom("127.0.0.5", BasicCredentials("alice", "wonderland")), Want: Response{Status: 403}},
	{Name: "satisfy all: a listed client still needs credentials",
		Ingresses: one("auth.test", "/", "Prefix", "app", withAuth("satisfy", "all", "allowlist-source-range", "127.0.0.1")), Secrets: authSecret,
		Request: authFrom("127.0.0.1", nil), Want: Response{Status: 401, Header: challenge}},
}

// SecretYAML is an Opaque Secret manifest.
func SecretYAML(ns, name string, data map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Secret\nmetadata: {name: %s, namespace: %s}\ntype: Opaque\ndata:\n", name, ns)
	for _, k := range slices.Sorted(maps.Keys(data)) {
		fmt.Fprintf(&b, "  %q: %s\n", k, base64.StdEncoding.EncodeToString([]byte(data[k])))
	}
	return b.String() + "---\n"
}

// authorize is the access phase: the source address lists (addrOK) and
// basic authentication, combined as satisfy says. It returns 0 to let
// the request in, or 403 or 401.
func authorize(m *model.Model, lp *model.Policy, addrOK bool, r Request) int {
	a := lp.BasicAuth
	if a == nil {
		if addrOK {
			return 0
		}
		return 403
	}
	userOK := authenticated(m, a, r.Header["Authorization"])
	switch {
	case lp.Satisfy == model.SatisfyAny && (addrOK || userOK):
		return 0
	case lp.Satisfy == model.SatisfyAny:
		return 401 // nginx prefers 401 over 403 when all fail
	case !addrOK:
		return 403
	case !userOK:
		return 401
	}
	return 0
}

// authenticated checks Basic credentials against the password file, as
// auth_basic does: the first line of the user decides. Only {SHA} hashes
// are checked here; the rows use no other.
func authenticated(m *model.Model, a *model.BasicAuth, header string) bool {
	enc, ok := strings.CutPrefix(header, "Basic ")
	if !ok {
		return false
	}
	raw, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return false
	}
	user, pw, ok := strings.Cut(string(raw), ":")
	if !ok {
		return false
	}
	i := slices.IndexFunc(m.AuthFiles, func(f *model.AuthFile) bool { return f.Key() == a.File })
	if i < 0 {
		return false
	}
	for _, line := range strings.Split(string(m.AuthFiles[i].Data), "\n") {
		if u, h, ok := strings.Cut(line, ":"); ok && u == user {
			return subtle.ConstantTimeCompare([]byte(h), []byte(SHAHash(pw))) == 1
		}
	}
	return false
}
