package annotations

import (
	"reflect"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

func TestMirror(t *testing.T) {
	target := func(kv ...string) map[string]string {
		m := map[string]string{"mirror-target": "https://mirror.example.com$request_uri"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	mirror := func(edit func(m *model.Mirror)) *model.Mirror {
		m := &model.Mirror{URL: "https://mirror.example.com$request_uri", RequestBody: true}
		if edit != nil {
			edit(m)
		}
		return m
	}
	for _, tc := range []struct {
		name     string
		ann      map[string]string
		want     *model.Mirror
		problems []problem
	}{
		// mirror-target
		{"target with $request_uri", target(), mirror(nil), nil},
		{"target with a path", map[string]string{"mirror-target": "http://localhost/mirror"},
			&model.Mirror{URL: "http://localhost/mirror", RequestBody: true}, nil},
		{"target with a path before $request_uri", map[string]string{"mirror-target": "https://m.example.com:8443/copy$request_uri"},
			&model.Mirror{URL: "https://m.example.com:8443/copy$request_uri", RequestBody: true}, nil},
		{"scheme and host are lower-cased", map[string]string{"mirror-target": "HTTPS://Mirror.Example.com/x"},
			&model.Mirror{URL: "https://mirror.example.com/x", RequestBody: true}, nil},
		{"IPv6 target", map[string]string{"mirror-target": "http://[::1]:8080/m"},
			&model.Mirror{URL: "http://[::1]:8080/m", RequestBody: true}, nil},
		{"slash before $request_uri refused (ingress-nginx's e2e example)", map[string]string{"mirror-target": "https://test.env.com/$request_uri"},
			nil, []problem{invalid("mirror-target")}},
		{"$request_uri in the middle refused", map[string]string{"mirror-target": "https://a.com$request_uri/x"}, nil, []problem{invalid("mirror-target")}},
		{"other variable refused (CVE-2025-1098)", map[string]string{"mirror-target": "https://a.com$host"}, nil, []problem{invalid("mirror-target")}},
		{"query before $request_uri refused", map[string]string{"mirror-target": "https://a.com/?a=1$request_uri"}, nil, []problem{invalid("mirror-target")}},
		{"user information refused", map[string]string{"mirror-target": "https://u:p@a.com/"}, nil, []problem{invalid("mirror-target")}},
		{"fragment refused", map[string]string{"mirror-target": "https://a.com/#x"}, nil, []problem{invalid("mirror-target")}},
		{"relative target refused", map[string]string{"mirror-target": "/mirror"}, nil, []problem{invalid("mirror-target")}},
		{"other scheme refused", map[string]string{"mirror-target": "ftp://a.com/"}, nil, []problem{invalid("mirror-target")}},
		{"2049 bytes refused", map[string]string{"mirror-target": "https://a.com/" + strings.Repeat("a", 2035)}, nil, []problem{invalid("mirror-target")}},
		{"invalid target drops host and body too", map[string]string{"mirror-target": "https://a.com$host", "mirror-host": "m.example.com",
			"mirror-request-body": "off"}, nil, []problem{invalid("mirror-target")}},

		// mirror-host
		{"host", target("mirror-host", "shadow.example.com"), mirror(func(m *model.Mirror) { m.Host = "shadow.example.com" }), nil},
		{"host with a port refused", target("mirror-host", "shadow.example.com:8080"), mirror(nil), []problem{invalid("mirror-host")}},
		{"host with a variable refused", target("mirror-host", "$host"), mirror(nil), []problem{invalid("mirror-host")}},
		{"wildcard host refused", target("mirror-host", "*.example.com"), mirror(nil), []problem{invalid("mirror-host")}},
		{"upper-case host refused", target("mirror-host", "Shadow.example.com"), mirror(nil), []problem{invalid("mirror-host")}},
		{"host without target", map[string]string{"mirror-host": "a.com"}, nil, []problem{ignored("mirror-host")}},

		// mirror-request-body
		{"body off", target("mirror-request-body", "off"), mirror(func(m *model.Mirror) { m.RequestBody = false }), nil},
		{"body OFF", target("mirror-request-body", "OFF"), mirror(func(m *model.Mirror) { m.RequestBody = false }), nil},
		{"body on", target("mirror-request-body", "on"), mirror(nil), nil},
		{"body invalid keeps on", target("mirror-request-body", "false"), mirror(nil), []problem{invalid("mirror-request-body")}},
		{"body without target", map[string]string{"mirror-request-body": "off"}, nil, []problem{ignored("mirror-request-body")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, problems := parseNames(tc.ann)
			checkProblems(t, problems, tc.problems)
			checkClosed(t, res, tc.problems)
			// One mirror at most, copying every request.
			var want []model.Mirror
			if tc.want != nil {
				w := *tc.want
				w.Percent = 100
				want = []model.Mirror{w}
			}
			if !reflect.DeepEqual(res.Location.Mirrors, want) {
				t.Fatalf("Mirrors = %+v, want %+v", res.Location.Mirrors, want)
			}
		})
	}
}
