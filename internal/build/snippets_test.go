package build

import (
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/test/spec"
)

// buildRowWith is buildRow with other options.
func buildRowWith(t *testing.T, tc spec.AnnotationCase, opts Options) (*model.Model, []model.Problem) {
	t.Helper()
	eps := map[string]spec.Endpoint{}
	for _, svc := range tc.Services() {
		eps[svc] = spec.Endpoint{IP: "10.0.0.1", Port: 8080}
	}
	return Build(snapshotOf(t, tc.Manifests(annotations.DefaultPrefix, eps)+controllerConfig(tc.Config)), opts)
}

// TestSnippetGates: a row per reason the build refuses a snippet that
// parses; each refusal is one Problem naming the annotation, and the
// Ingress keeps serving.
func TestSnippetGates(t *testing.T) {
	allow := map[string]string{"allow-snippet-annotations": "true"}
	noMore := testOpts
	noMore.HeadersMoreAvailable = false
	for _, tc := range []struct {
		name    string
		ann     map[string]string
		opts    Options
		config  map[string]string
		problem string // "" for none
	}{
		{"headers-more missing", map[string]string{"configuration-snippet": `more_set_headers "X: y";`}, noMore, allow, "headers-more module"},
		{"headers-more missing, add_header is fine", map[string]string{"configuration-snippet": `add_header X y;`}, noMore, allow, ""},
		{"a return beside block-cidrs", map[string]string{"configuration-snippet": `return 200;`}, testOpts,
			map[string]string{"allow-snippet-annotations": "true", "block-cidrs": "192.0.2.0/24"}, "ahead of the authentication"},
		{"a redirecting rewrite beside limits", map[string]string{"configuration-snippet": `rewrite ^/a https://b.test/ redirect;`, "limit-rps": "5"}, testOpts, allow, "ahead of the authentication"},
		{"a return beside auth-url", map[string]string{"configuration-snippet": `return 200;`, "auth-url": "http://127.0.0.1:9/auth"}, testOpts, allow, "ahead of the authentication"},
		{"a return beside the ConfigMap's global-auth-url", map[string]string{"configuration-snippet": `return 200;`}, testOpts,
			map[string]string{"allow-snippet-annotations": "true", "global-auth-url": "http://127.0.0.1:9/auth"}, "ahead of the authentication"},
		{"a return with enable-global-auth false is fine", map[string]string{"configuration-snippet": `return 200;`, "enable-global-auth": "false"}, testOpts,
			map[string]string{"allow-snippet-annotations": "true", "global-auth-url": "http://127.0.0.1:9/auth"}, ""},
		{"a server return beside auth-url", map[string]string{"server-snippet": `return 200;`, "auth-url": "http://127.0.0.1:9/auth"}, testOpts, allow, "ahead of"},
		{"a break rewrite beside limits is fine", map[string]string{"configuration-snippet": `rewrite ^/a /b break;`, "limit-rps": "5"}, testOpts, allow, ""},
		{"a server return beside a closed path", map[string]string{"server-snippet": `return 200;`, "auth-type": "digest"}, testOpts, allow, "closed paths of the host"},
		{"the ConfigMap's location-snippet without headers-more", nil, noMore,
			map[string]string{"allow-snippet-annotations": "true", "location-snippet": `more_set_headers "X: y";`}, "headers-more module"},
		{"the ConfigMap's server-snippet may not redirect", nil, testOpts,
			map[string]string{"allow-snippet-annotations": "true", "server-snippet": `rewrite ^/a https://b.test/ permanent;`}, "answers requests"},
		{"the ConfigMap's location-snippet that denies closes every path", nil, testOpts,
			map[string]string{"allow-snippet-annotations": "true", "location-snippet": `if ($http_x_bad) { return 403; }`}, "every path of every Ingress and every route of every VirtualServer answers 503"},
		{"allow-snippet-annotations false", map[string]string{"server-snippet": `add_header X y;`}, testOpts, map[string]string{"allow-snippet-annotations": "false"}, "allow-snippet-annotations is false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			row := spec.AnnotationCase{Ingresses: []spec.Ingress{{Name: "web", Host: "gate.test",
				Paths: []spec.Route{{Path: "/", Type: "Prefix", Service: "app"}}, Annotations: tc.ann}}, Config: tc.config}
			m, problems := buildRowWith(t, row, tc.opts)
			var found []string
			for _, p := range problems {
				if strings.Contains(p.Message, "snippet") {
					found = append(found, p.Message)
				}
			}
			switch {
			case tc.problem == "" && len(found) > 0:
				t.Fatalf("problems %q, want none", found)
			case tc.problem != "" && (len(found) != 1 || !strings.Contains(found[0], tc.problem)):
				t.Fatalf("problems %q, want one containing %q", found, tc.problem)
			}
			srv := findServer(m, "gate.test")
			if srv == nil || len(srv.Locations) == 0 {
				t.Fatal("the Ingress is not served")
			}
			if closed := len(m.Config.FailClosed) > 0; closed != strings.Contains(tc.problem, "answers 503") {
				t.Fatalf("ConfigMap closed %v (%v), want %v", closed, m.Config.FailClosed, !closed)
			}
			kept := srv.Locations[0].Policy != nil && srv.Locations[0].Policy.Snippet != nil || srv.Policy != nil && srv.Policy.Snippet != nil
			if kept != (tc.problem == "") {
				t.Fatalf("snippet kept %v, want %v", kept, tc.problem == "")
			}
		})
	}
}

// TestServerSnippetOldestWins: two Ingresses of one host with different
// server snippets: the older one's applies, the younger gets a Problem.
func TestServerSnippetOldestWins(t *testing.T) {
	row := spec.AnnotationCase{Config: map[string]string{"allow-snippet-annotations": "true"}, Ingresses: []spec.Ingress{
		{Name: "a", Host: "two.test", Paths: []spec.Route{{Path: "/a", Type: "Prefix", Service: "app"}}, Annotations: map[string]string{"server-snippet": `add_header X a;`}},
		{Name: "b", Host: "two.test", Paths: []spec.Route{{Path: "/b", Type: "Prefix", Service: "app"}}, Annotations: map[string]string{"server-snippet": `add_header X b;`}},
	}}
	m, problems := buildRow(t, row)
	var collisions []model.Problem
	for _, p := range problems {
		if p.Reason == model.ReasonCollision && strings.Contains(p.Message, "server-snippet") {
			collisions = append(collisions, p)
		}
	}
	if s := findServer(m, "two.test"); s.Policy == nil || s.Policy.Snippet == nil || s.Policy.Snippet.AddHeaders[0].Value.String() != "a" {
		t.Fatalf("server snippet %+v, want the oldest Ingress's", s.Policy)
	}
	if len(collisions) != 1 || collisions[0].Object.Name != "b" {
		t.Fatalf("collisions %v, want one on b", collisions)
	}
}
