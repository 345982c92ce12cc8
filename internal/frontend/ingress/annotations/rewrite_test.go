package annotations

import (
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

func TestRewrite(t *testing.T) {
	const key = DefaultPrefix + "/app-root"
	rw := func(target string) *model.Rewrite { return &model.Rewrite{Target: target} }
	runCases(t, []annotationCase{
		// use-regex
		{name: "use-regex true", values: map[string]string{"use-regex": "true"}, want: Result{UseRegex: true}},
		{name: "use-regex True", values: map[string]string{"use-regex": "True"}, want: Result{UseRegex: true}},
		{name: "use-regex 1", values: map[string]string{"use-regex": "1"}, want: Result{UseRegex: true}},
		{name: "use-regex false", values: map[string]string{"use-regex": "false"}},
		{name: "use-regex empty", values: map[string]string{"use-regex": ""}, problems: []problem{invalid("use-regex")}},
		{name: "use-regex yes", values: map[string]string{"use-regex": "yes"}, problems: []problem{invalid("use-regex")}},
		{name: "use-regex with spaces", values: map[string]string{"use-regex": " true"}, problems: []problem{invalid("use-regex")}},

		// rewrite-target
		{name: "rewrite-target /", values: map[string]string{"rewrite-target": "/"},
			want: Result{UseRegex: true, Location: model.Policy{Rewrite: rw("/")}}},
		{name: "rewrite-target with captures", values: map[string]string{"rewrite-target": "/new/backend/$1"},
			want: Result{UseRegex: true, Location: model.Policy{Rewrite: rw("/new/backend/$1")}}},
		{name: "rewrite-target $2 as in ingress-nginx's docs", values: map[string]string{"rewrite-target": "/$2", "use-regex": "true"},
			want: Result{UseRegex: true, Location: model.Policy{Rewrite: rw("/$2")}}},
		{name: "rewrite-target $9 is the last group", values: map[string]string{"rewrite-target": "/$9"},
			want: Result{UseRegex: true, Location: model.Policy{Rewrite: rw("/$9")}}},
		{name: "rewrite-target $12 is $1 then 2", values: map[string]string{"rewrite-target": "/$12"},
			want: Result{UseRegex: true, Location: model.Policy{Rewrite: rw("/$12")}}},
		{name: "rewrite-target with a query", values: map[string]string{"rewrite-target": "/search?q=$1"},
			want: Result{UseRegex: true, Location: model.Policy{Rewrite: rw("/search?q=$1")}}},
		{name: "rewrite-target with use-regex false still turns regex on", values: map[string]string{"rewrite-target": "/x", "use-regex": "false"},
			want: Result{UseRegex: true, Location: model.Policy{Rewrite: rw("/x")}}},
		{name: "rewrite-target of 1024 bytes", values: map[string]string{"rewrite-target": "/" + strings.Repeat("a", 1023)},
			want: Result{UseRegex: true, Location: model.Policy{Rewrite: rw("/" + strings.Repeat("a", 1023))}}},
		{name: "rewrite-target of 1025 bytes", values: map[string]string{"rewrite-target": "/" + strings.Repeat("a", 1024)},
			problems: []problem{invalid("rewrite-target")}},
		{name: "rewrite-target empty rewrites nothing", values: map[string]string{"rewrite-target": ""},
			problems: []problem{ignored("rewrite-target")}},
		{name: "rewrite-target $0", values: map[string]string{"rewrite-target": "/$0"}, problems: []problem{invalid("rewrite-target")}},
		{name: "rewrite-target without leading slash", values: map[string]string{"rewrite-target": "api/$1"},
			problems: []problem{invalid("rewrite-target")}},
		{name: "rewrite-target URL", values: map[string]string{"rewrite-target": "https://a.example/"},
			problems: []problem{invalid("rewrite-target")}},
		{name: "invalid rewrite-target leaves regex mode to use-regex", values: map[string]string{"rewrite-target": "/a b", "use-regex": "false"},
			problems: []problem{invalid("rewrite-target")}},

		// x-forwarded-prefix
		{name: "x-forwarded-prefix with a rewrite", values: map[string]string{"rewrite-target": "/foo", "x-forwarded-prefix": "/test/value"},
			want: Result{UseRegex: true, Location: model.Policy{Rewrite: rw("/foo"), XForwardedPrefix: new(model.HeaderValue("/test/value"))}}},
		{name: "x-forwarded-prefix /", values: map[string]string{"rewrite-target": "/", "x-forwarded-prefix": "/"},
			want: Result{UseRegex: true, Location: model.Policy{Rewrite: rw("/"), XForwardedPrefix: new(model.HeaderValue("/"))}}},
		{name: "x-forwarded-prefix without a rewrite", values: map[string]string{"x-forwarded-prefix": "/test"},
			problems: []problem{ignored("x-forwarded-prefix")}},
		{name: "x-forwarded-prefix with an empty rewrite", values: map[string]string{"rewrite-target": "", "x-forwarded-prefix": "/test"},
			problems: []problem{ignored("rewrite-target"), ignored("x-forwarded-prefix")}},
		{name: "x-forwarded-prefix with an invalid rewrite", values: map[string]string{"rewrite-target": "/$x", "x-forwarded-prefix": "/test"},
			problems: []problem{invalid("rewrite-target"), ignored("x-forwarded-prefix")}},
		{name: "x-forwarded-prefix empty", values: map[string]string{"rewrite-target": "/", "x-forwarded-prefix": ""},
			want:     Result{UseRegex: true, Location: model.Policy{Rewrite: rw("/")}},
			problems: []problem{invalid("x-forwarded-prefix")}},
		{name: "x-forwarded-prefix without a leading slash", values: map[string]string{"rewrite-target": "/", "x-forwarded-prefix": "test"},
			want:     Result{UseRegex: true, Location: model.Policy{Rewrite: rw("/")}},
			problems: []problem{invalid("x-forwarded-prefix")}},
		{name: "x-forwarded-prefix with a space", values: map[string]string{"rewrite-target": "/", "x-forwarded-prefix": "/a b"},
			want:     Result{UseRegex: true, Location: model.Policy{Rewrite: rw("/")}},
			problems: []problem{invalid("x-forwarded-prefix")}},

		// app-root
		{name: "app-root", values: map[string]string{"app-root": "/foo"},
			want: Result{Server: ServerSettings{AppRoot: new("/foo"), Keys: []string{key}}}},
		{name: "app-root with a trailing slash", values: map[string]string{"app-root": "/app/"},
			want: Result{Server: ServerSettings{AppRoot: new("/app/"), Keys: []string{key}}}},
		{name: "app-root of 1024 bytes", values: map[string]string{"app-root": "/" + strings.Repeat("a", 1023)},
			want: Result{Server: ServerSettings{AppRoot: new("/" + strings.Repeat("a", 1023)), Keys: []string{key}}}},
		{name: "app-root of 1025 bytes", values: map[string]string{"app-root": "/" + strings.Repeat("a", 1024)},
			problems: []problem{invalid("app-root")}},
		{name: "app-root relative", values: map[string]string{"app-root": "foo"}, problems: []problem{invalid("app-root")}},
		{name: "app-root absolute URL", values: map[string]string{"app-root": "https://a.example/foo"}, problems: []problem{invalid("app-root")}},
		{name: "app-root with a query", values: map[string]string{"app-root": "/foo?x=1"}, problems: []problem{invalid("app-root")}},
		{name: "app-root empty", values: map[string]string{"app-root": ""}, problems: []problem{invalid("app-root")}},

		// All together, with one bad value: only that setting is dropped.
		{name: "one invalid value drops only its setting",
			values:   map[string]string{"use-regex": "true", "rewrite-target": "/$1", "x-forwarded-prefix": "/p", "app-root": "/a;b"},
			want:     Result{UseRegex: true, Location: model.Policy{Rewrite: rw("/$1"), XForwardedPrefix: new(model.HeaderValue("/p"))}},
			problems: []problem{invalid("app-root")}},
	})
}

func TestRewriteHostile(t *testing.T) {
	checkHostile(t, rewriteGroup,
		hostileSetup{"x-forwarded-prefix": {"rewrite-target": "/"}},
		map[string][]string{
			"rewrite-target":     {"/a/%s", "/a?q=%s"},
			"x-forwarded-prefix": {"/a/%s", "/a%s"},
			"app-root":           {"/a/%s", "/a%s"},
		}, nil)
}
