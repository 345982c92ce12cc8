package build

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/test/spec"
)

// digestLine is alice's htdigest line for realm Staff, password "pw":
// MD5("alice:Staff:pw").
const digestLine = "alice:Staff:83d6817a202b057fecb0ac8b871a1777\n"

// TestDigestNeedsLua: without the Lua data plane, digest authentication
// closes the paths with a Problem saying why.
func TestDigestNeedsLua(t *testing.T) {
	s := world(1)
	ing := mkIngress("default", "web", 0, rule("a.com", path("/", "Prefix", svcName(0), 80)))
	ing.Annotations = map[string]string{"nginx.ingress.kubernetes.io/auth-type": "digest",
		"nginx.ingress.kubernetes.io/auth-secret": "users", "nginx.ingress.kubernetes.io/auth-realm": "Staff"}
	s.Ingresses = append(s.Ingresses, ing)
	s.Secrets = append(s.Secrets, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "users"}, Data: map[string][]byte{"auth": []byte(digestLine)}})
	opts := testOpts
	opts.LuaAvailable = false
	m, problems := Build(s, opts)
	if l := server(m, "a.com").Match("/"); l.Action.Return == nil || l.Action.Return.Status != 503 {
		t.Fatalf("location %+v, want 503", l)
	}
	if len(problems) != 1 || !strings.Contains(problems[0].Message, "Lua data plane") {
		t.Fatalf("problems %v", problems)
	}
}

// TestBasicAuthSecret resolves auth-secret: a usable Secret becomes the
// location's password file, an unusable one closes the paths with a
// Problem naming the annotation and the Secret.
func TestBasicAuthSecret(t *testing.T) {
	good := "alice:" + spec.SHAHash("pw") + "\n"
	for _, tc := range []struct {
		name     string
		ann      map[string]string
		data     map[string]string // nil: no Secret
		want     string            // the file, "" when closed
		wantKind string
		naming   string
	}{
		{"htpasswd file", nil, map[string]string{"auth": good}, good, "auth", ""},
		{"CRLF and comments", nil, map[string]string{"auth": "# users\r\nalice:" + spec.SHAHash("pw") + "\r\n"}, good, "auth", ""},
		{"auth-map", map[string]string{"auth-secret-type": "auth-map"},
			map[string]string{"bob": spec.SHAHash("b") + "\n", "alice": spec.SHAHash("pw")}, good + "bob:" + spec.SHAHash("b") + "\n", "authmap", ""},
		{"missing Secret", nil, nil, "", "", "secret default/users not found"},
		{"no auth key", nil, map[string]string{"users": good}, "", "", "has no key auth"},
		{"plain password", nil, map[string]string{"auth": "alice:pw"}, "", "", "line 1: user \"alice\": want a password hash"},
		{"empty map", map[string]string{"auth-secret-type": "auth-map"}, map[string]string{}, "", "", "holds no user"},
		{"bad map user", map[string]string{"auth-secret-type": "auth-map"}, map[string]string{"a b": spec.SHAHash("x")}, "", "", "the user \"a b\""},
		{"htdigest file", map[string]string{"auth-type": "digest"}, map[string]string{"auth": digestLine + "bob:Other:" + strings.Repeat("0", 32) + "\n"},
			digestLine + "bob:Other:" + strings.Repeat("0", 32) + "\n", "htdigest", ""},
		{"htdigest without a user of the realm", map[string]string{"auth-type": "digest"}, map[string]string{"auth": "bob:Other:" + strings.Repeat("0", 32) + "\n"},
			"", "", `holds no user of realm "Staff"`},
		{"htdigest with an upper-case hash", map[string]string{"auth-type": "digest"}, map[string]string{"auth": "alice:Staff:" + strings.Repeat("A", 32) + "\n"},
			"", "", "32 lower-case hex digits"},
		{"an htpasswd file for digest", map[string]string{"auth-type": "digest"}, map[string]string{"auth": good}, "", "", "want user:realm:hash"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := world(1)
			ing := mkIngress("default", "web", 0, rule("a.com", path("/", "Prefix", svcName(0), 80)))
			ing.Annotations = map[string]string{"nginx.ingress.kubernetes.io/auth-type": "basic",
				"nginx.ingress.kubernetes.io/auth-secret": "users", "nginx.ingress.kubernetes.io/auth-realm": "Staff"}
			for k, v := range tc.ann {
				ing.Annotations["nginx.ingress.kubernetes.io/"+k] = v
			}
			s.Ingresses = append(s.Ingresses, ing)
			if tc.data != nil {
				sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "users"}, Data: map[string][]byte{}}
				for k, v := range tc.data {
					sec.Data[k] = []byte(v)
				}
				s.Secrets = append(s.Secrets, sec)
			}
			m, problems := Build(s, testOpts)
			l := server(m, "a.com").Match("/")
			if tc.want == "" {
				if l.Action.Return == nil || l.Action.Return.Status != 503 || len(m.AuthFiles) != 0 {
					t.Fatalf("location %+v, files %v; want 503 and no file", l, m.AuthFiles)
				}
				wantReason := model.ReasonInvalidSecret
				if strings.HasSuffix(tc.naming, "not found") {
					wantReason = model.ReasonMissingSecret
				}
				if len(problems) != 1 || problems[0].Reason != wantReason ||
					!strings.Contains(problems[0].Message, "auth-secret") || !strings.Contains(problems[0].Message, tc.naming) {
					t.Fatalf("problems %v, want one %s naming auth-secret and %q", problems, wantReason, tc.naming)
				}
				return
			}
			if len(problems) != 0 {
				t.Fatalf("problems %v", problems)
			}
			if len(m.AuthFiles) != 1 || string(m.AuthFiles[0].Data) != tc.want || m.AuthFiles[0].Kind() != tc.wantKind {
				t.Fatalf("auth files %+v, want one %s file %q", m.AuthFiles, tc.wantKind, tc.want)
			}
			if a := l.Policy.BasicAuth; a == nil || a.File != m.AuthFiles[0].Key() || a.Realm != "Staff" || l.Backend() == "" {
				t.Fatalf("location %+v policy %+v", l, l.Policy)
			}
		})
	}
}
