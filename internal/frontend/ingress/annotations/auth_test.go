package annotations

import (
	"reflect"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/testcorpus"
)

func TestAuth(t *testing.T) {
	basic := func(kv ...string) map[string]string {
		m := map[string]string{"auth-type": "basic", "auth-secret": "users"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	users := &AuthSecret{ObjectName: ObjectName{"default", "users"}}
	for _, tc := range []struct {
		name     string
		ann      map[string]string
		want     *model.BasicAuth
		secret   *AuthSecret
		satisfy  model.Satisfy
		problems []problem
	}{
		// good
		{"basic", basic(), &model.BasicAuth{}, users, "", nil},
		{"realm", basic("auth-realm", "Authentication Required - foo"), &model.BasicAuth{Realm: "Authentication Required - foo"}, users, "", nil},
		{"namespace/name", basic("auth-secret", "default/users"), &model.BasicAuth{}, users, "", nil},
		{"auth-file", basic("auth-secret-type", "auth-file"), &model.BasicAuth{}, users, "", nil},
		{"auth-map", basic("auth-secret-type", "auth-map"), &model.BasicAuth{},
			&AuthSecret{ObjectName: ObjectName{"default", "users"}, Map: true}, "", nil},
		{"satisfy any", basic("satisfy", "any"), &model.BasicAuth{}, users, model.SatisfyAny, nil},
		{"satisfy all", basic("satisfy", "all"), &model.BasicAuth{}, users, "", nil},
		{"digest", basic("auth-type", "digest", "auth-realm", "r"), &model.BasicAuth{Realm: "r", Digest: true},
			&AuthSecret{ObjectName: ObjectName{"default", "users"}, Digest: true}, "", nil},
		{"digest with satisfy any keeps all", basic("auth-type", "digest", "satisfy", "any"), &model.BasicAuth{Digest: true},
			&AuthSecret{ObjectName: ObjectName{"default", "users"}, Digest: true}, "", []problem{invalid("satisfy")}},

		// edge
		{"satisfy alone", map[string]string{"satisfy": "any"}, nil, nil, model.SatisfyAny, nil},
		{"empty realm", basic("auth-realm", ""), &model.BasicAuth{}, users, "", nil},
		{"realm alone is ignored", map[string]string{"auth-realm": "r"}, nil, nil, "", []problem{ignored("auth-realm")}},
		{"secret type alone is ignored", map[string]string{"auth-secret-type": "auth-map"}, nil, nil, "", []problem{ignored("auth-secret-type")}},

		// bad: fail closed, never open
		{"digest with auth-map", basic("auth-type", "digest", "auth-secret-type", "auth-map"), nil, nil, "", []problem{closes("auth-secret-type")}},
		{"unknown type", basic("auth-type", "Basic"), nil, nil, "", []problem{closes("auth-type")}},
		{"substring type", basic("auth-type", "basicx"), nil, nil, "", []problem{closes("auth-type")}},
		{"no secret", map[string]string{"auth-type": "basic"}, nil, nil, "", []problem{closes("auth-type")}},
		{"secret without type", map[string]string{"auth-secret": "users"}, nil, nil, "", []problem{closes("auth-secret")}},
		{"other namespace", basic("auth-secret", "kube-system/users"), nil, nil, "", []problem{closes("auth-secret")}},
		{"bad secret name", basic("auth-secret", "Users!"), nil, nil, "", []problem{closes("auth-secret")}},
		{"empty secret", basic("auth-secret", ""), nil, nil, "", []problem{closes("auth-secret")}},
		{"bad secret type", basic("auth-secret-type", "map"), nil, nil, "", []problem{closes("auth-secret-type")}},
		{"realm off", basic("auth-realm", "off"), nil, nil, "", []problem{closes("auth-realm")}},
		{"realm variable", basic("auth-realm", "$host"), nil, nil, "", []problem{closes("auth-realm")}},
		{"realm quote", basic("auth-realm", `a"b`), nil, nil, "", []problem{closes("auth-realm")}},
		{"bad satisfy", basic("satisfy", "either"), &model.BasicAuth{}, users, "", []problem{closes("satisfy")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, problems := parseNames(tc.ann)
			checkProblems(t, problems, tc.problems)
			checkClosed(t, res, tc.problems)
			if !reflect.DeepEqual(res.Location.BasicAuth, tc.want) || !reflect.DeepEqual(res.BasicAuthSecret, tc.secret) {
				t.Fatalf("BasicAuth = %+v, %+v; want %+v, %+v", res.Location.BasicAuth, res.BasicAuthSecret, tc.want, tc.secret)
			}
			if res.Location.Satisfy != tc.satisfy {
				t.Fatalf("Satisfy = %q, want %q", res.Location.Satisfy, tc.satisfy)
			}
		})
	}
}

// TestAuthInjection tries the shared corpus on every auth annotation:
// each value closes the paths and nothing reaches the Result.
func TestAuthInjection(t *testing.T) {
	for _, name := range []string{"auth-type", "auth-secret", "auth-secret-type", "auth-realm", "satisfy"} {
		for _, v := range testcorpus.Injection {
			if _, err := model.ParseRealm(v); name == "auth-realm" && err == nil {
				// Inert: printable ASCII without a quote, backslash or
				// variable, printed through render.Quote.
				continue
			}
			ann := map[string]string{"auth-type": "basic", "auth-secret": "users", name: v}
			res, problems := parseNames(ann)
			if !strings.Contains(strings.Join(res.FailClosed, ","), key(name)) || len(problems) == 0 {
				t.Fatalf("%s=%q: FailClosed %v, problems %v", name, v, res.FailClosed, problems)
			}
			if name != "satisfy" && (res.Location.BasicAuth != nil || res.BasicAuthSecret != nil) {
				t.Fatalf("%s=%q reached the Result: %+v", name, v, res.Location.BasicAuth)
			}
			if res.Location.Satisfy != "" {
				t.Fatalf("%s=%q: Satisfy %q", name, v, res.Location.Satisfy)
			}
		}
	}
}
