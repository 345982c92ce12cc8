package annotations

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/model"
)

// defaultsOf reads ConfigMap keys as the ConfigMap front-end does: sorted
// by name, each with ParseDefault. Every value must be valid.
func defaultsOf(t *testing.T, keys map[string]string) *model.Defaults {
	t.Helper()
	d := &model.Defaults{}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if err := ParseDefault(d, k, keys[k]); err != nil {
			t.Fatalf("ConfigMap key %s %q: %v", k, keys[k], err)
		}
	}
	return d
}

// parseWith runs ParseIngress on annotations by name, starting from d.
func parseWith(d *model.Defaults, ann map[string]string) (Result, []model.Problem) {
	full := make(map[string]string, len(ann))
	for k, v := range ann {
		full[key(k)] = v
	}
	return ParseIngress(testRef, full, DefaultPrefix, d)
}

func sizeOf(n int64) *model.Size { return new(model.Size(n)) }
func boolOf(b bool) *bool        { return &b }

// TestDefaultPrecedence: a row per key. The ConfigMap's value applies to
// an Ingress without the annotation; the annotation applies alone, and
// wins when both are set, as in ingress-nginx.
func TestDefaultPrecedence(t *testing.T) {
	for _, tc := range []struct {
		key, configMap, annotation string
		get                        func(*Result) any
		fromKey, fromAnnotation    any
	}{
		{"client-body-buffer-size", "64k", "1m", func(r *Result) any { return r.Location.Buffering.ClientBodyBuffer }, sizeOf(64 << 10), sizeOf(1 << 20)},
		{"proxy-request-buffering", "off", "on", func(r *Result) any { return r.Location.Buffering.Request }, boolOf(false), boolOf(true)},
		{"proxy-buffering", "on", "off", func(r *Result) any { return r.Location.Buffering.Response }, boolOf(true), boolOf(false)},
		{"proxy-buffers-number", "8", "16", func(r *Result) any { return r.Location.Buffering.Buffers }, 8, 16},
		{"proxy-buffer-size", "8k", "16k", func(r *Result) any { return r.Location.Buffering.BufferSize }, sizeOf(8 << 10), sizeOf(16 << 10)},
		{"proxy-busy-buffers-size", "8k", "12k", func(r *Result) any { return r.Location.Buffering.BusyBuffers }, sizeOf(8 << 10), sizeOf(12 << 10)},
		{"proxy-max-temp-file-size", "0", "100m", func(r *Result) any { return r.Location.Buffering.MaxTempFile }, sizeOf(0), sizeOf(100 << 20)},
		{"proxy-http-version", "1.0", "1.1", func(r *Result) any { return r.Location.HTTPVersion }, "1.0", "1.1"},
		{"proxy-next-upstream", "error timeout http_502", "off", func(r *Result) any { return r.Location.Retry.On },
			[]string{"error", "timeout", "http_502"}, []string{"off"}},
		{"proxy-next-upstream-timeout", "30", "5s", func(r *Result) any { return r.Location.Retry.Timeout }, 30 * time.Second, 5 * time.Second},
		{"proxy-cookie-domain", "a.internal a.example", "off", func(r *Result) any { return r.Location.CookieDomain },
			&model.Replace{From: "a.internal", To: "a.example"}, &model.Replace{Off: true}},
		{"proxy-cookie-path", "/a/ /", "off", func(r *Result) any { return r.Location.CookiePath },
			&model.Replace{From: "/a/", To: "/"}, &model.Replace{Off: true}},
		{"custom-http-errors", "503,404", "500", func(r *Result) any { return r.Location.Errors },
			&model.ErrorPages{Codes: []int{404, 503}}, &model.ErrorPages{Codes: []int{500}}},
		{"service-upstream", "true", "false", func(r *Result) any { return r.ServiceUpstream }, true, false},
	} {
		t.Run(tc.key, func(t *testing.T) {
			d := defaultsOf(t, map[string]string{tc.key: tc.configMap})
			none, _ := parseWith(nil, nil)
			for _, c := range []struct {
				name      string
				defaults  *model.Defaults
				ann       map[string]string
				want      any
				defaulted []string
			}{
				{"neither", nil, nil, tc.get(&none), nil},
				{"key only", d, nil, tc.fromKey, []string{tc.key}},
				{"annotation only", nil, map[string]string{tc.key: tc.annotation}, tc.fromAnnotation, nil},
				{"both: the annotation wins", d, map[string]string{tc.key: tc.annotation}, tc.fromAnnotation, nil},
				{"an invalid annotation keeps the key", d, map[string]string{tc.key: "x;"}, tc.fromKey, []string{tc.key}},
			} {
				res, problems := parseWith(c.defaults, c.ann)
				if got := tc.get(&res); !reflect.DeepEqual(got, c.want) {
					t.Errorf("%s: got %s, want %s", c.name, deref(reflect.ValueOf(got)), deref(reflect.ValueOf(c.want)))
				}
				if !slices.Equal(res.Defaulted, c.defaulted) {
					t.Errorf("%s: Defaulted = %v, want %v", c.name, res.Defaulted, c.defaulted)
				}
				if strings.HasPrefix(c.name, "an invalid") {
					checkProblems(t, problems, []problem{invalid(tc.key)})
				} else {
					checkProblems(t, problems, nil)
				}
			}
		})
	}
}

// TestParseDefault: good, edge and hostile ConfigMap values. A value is
// read with its annotation's grammar; one that means what applies anyway
// sets nothing; an invalid one leaves the defaults unchanged.
func TestParseDefault(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys map[string]string // read first, all valid
		key  string
		v    string
		want model.Defaults // Keys aside
		err  string         // a fragment; "" for none
	}{
		{name: "proxy-buffering on", key: "proxy-buffering", v: "on",
			want: model.Defaults{Proxy: model.Policy{Buffering: model.Buffering{Response: boolOf(true)}}}},
		{name: "proxy-buffering off is the http level's", key: "proxy-buffering", v: "off"},
		{name: "proxy-buffering true is not nginx's", key: "proxy-buffering", v: "true", err: "want on or off"},
		{name: "proxy-buffer-size 4K is the http level's", key: "proxy-buffer-size", v: "4K"},
		{name: "proxy-buffer-size 0", key: "proxy-buffer-size", v: "0", err: "want a size from"},
		{name: "proxy-buffer-size 1b", key: "proxy-buffer-size", v: "1b", err: "want a size"},
		{name: "proxy-buffers-number 2", key: "proxy-buffers-number", v: "2", err: "from 3 to 64"},
		{name: "proxy-buffers-number 4 is the http level's", key: "proxy-buffers-number", v: "4"},
		{name: "proxy-busy-buffers-size within the key's buffers", keys: map[string]string{"proxy-buffer-size": "16k", "proxy-buffers-number": "8"},
			key: "proxy-busy-buffers-size", v: "32k",
			want: model.Defaults{Proxy: model.Policy{Buffering: model.Buffering{Buffers: 8, BufferSize: sizeOf(16 << 10), BusyBuffers: sizeOf(32 << 10)}}}},
		{name: "proxy-busy-buffers-size below the key's buffer size", keys: map[string]string{"proxy-buffer-size": "16k"},
			key: "proxy-busy-buffers-size", v: "8k", err: "want at least the buffer size, 16k",
			want: model.Defaults{Proxy: model.Policy{Buffering: model.Buffering{BufferSize: sizeOf(16 << 10)}}}},
		{name: "proxy-busy-buffers-size beyond the http level's buffers", key: "proxy-busy-buffers-size", v: "16k", err: "want at most all 4 buffers but one"},
		{name: "proxy-max-temp-file-size below the key's buffer size", keys: map[string]string{"proxy-buffer-size": "16k"},
			key: "proxy-max-temp-file-size", v: "8k", err: "want 0 or at least the proxy buffer size, 16k",
			want: model.Defaults{Proxy: model.Policy{Buffering: model.Buffering{BufferSize: sizeOf(16 << 10)}}}},
		{name: "proxy-max-temp-file-size 1024m is nginx's", key: "proxy-max-temp-file-size", v: "1024m"},
		{name: "proxy-max-temp-file-size 1g is nginx's too", key: "proxy-max-temp-file-size", v: "1g"},
		{name: "proxy-http-version 1.1 is the http level's", key: "proxy-http-version", v: "1.1"},
		{name: "proxy-http-version 2", key: "proxy-http-version", v: "2", err: "want 1.0 or 1.1"},
		{name: "proxy-next-upstream as the http level's", key: "proxy-next-upstream", v: "error timeout"},
		{name: "proxy-next-upstream in another order", key: "proxy-next-upstream", v: "timeout,error",
			want: model.Defaults{Proxy: model.Policy{Retry: model.Retry{On: []string{"timeout", "error"}}}}},
		{name: "proxy-next-upstream off with more", key: "proxy-next-upstream", v: "off error", err: "must stand alone"},
		{name: "proxy-next-upstream-timeout 0", key: "proxy-next-upstream-timeout", v: "0"},
		{name: "proxy-next-upstream-timeout 25h", key: "proxy-next-upstream-timeout", v: "25h", err: "want"},
		{name: "proxy-cookie-domain off", key: "proxy-cookie-domain", v: "off"},
		{name: "proxy-cookie-domain regex", key: "proxy-cookie-domain", v: `~\.internal$ example.org`, err: "host"},
		{name: "proxy-cookie-path variable", key: "proxy-cookie-path", v: "$uri /", err: "path"},
		{name: "custom-http-errors", key: "custom-http-errors", v: "503, 404,404", want: model.Defaults{ErrorCodes: []int{404, 503}}},
		{name: "custom-http-errors 302", key: "custom-http-errors", v: "302", err: "between 400 and 599"},
		{name: "custom-http-errors empty item", key: "custom-http-errors", v: "404,,503", err: "status codes"},
		{name: "service-upstream TRUE", key: "service-upstream", v: "TRUE", want: model.Defaults{ServiceUpstream: true}},
		{name: "service-upstream false", key: "service-upstream", v: "false"},
		{name: "service-upstream yes", key: "service-upstream", v: "yes", err: "want true or false"},
		{name: "force-ssl-redirect", key: "force-ssl-redirect", v: "true", want: model.Defaults{ForceSSLRedirect: true}},
		{name: "preserve-trailing-slash", key: "preserve-trailing-slash", v: "1", want: model.Defaults{PreserveTrailingSlash: true}},
		{name: "proxy-redirect-from off", key: "proxy-redirect-from", v: "off",
			want: model.Defaults{RedirectFrom: "off", Proxy: model.Policy{RedirectRewrite: &model.Replace{Off: true}}}},
		{name: "proxy-redirect-from default is nginx's", key: "proxy-redirect-from", v: "default"},
		{name: "proxy-redirect-from a bare host", key: "proxy-redirect-from", v: "hello.com", err: "want off, an absolute http or https URL or a path"},
		{name: "proxy-redirect pair", keys: map[string]string{"proxy-redirect-from": "http://svc.internal/"},
			key: "proxy-redirect-to", v: "https://App.example/",
			want: model.Defaults{RedirectFrom: "http://svc.internal/", RedirectTo: "https://app.example/",
				Proxy: model.Policy{RedirectRewrite: &model.Replace{From: "http://svc.internal/", To: "https://app.example/"}}}},
		{name: "proxy-redirect-to off is the default", keys: map[string]string{"proxy-redirect-from": "/a"},
			key: "proxy-redirect-to", v: "off", want: model.Defaults{RedirectFrom: "/a"}},
		{name: "proxy-redirect-to default is not a value", key: "proxy-redirect-to", v: "default", err: "want off"},
		{name: "not a default", key: "proxy-body-size", v: "1m", err: "is not a default"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := defaultsOf(t, tc.keys)
			before := *d
			err := ParseDefault(d, tc.key, tc.v)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("error %v, want none", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error %v, want one with %q", err, tc.err)
			}
			// A key is recorded when it changed the defaults.
			wantKeys := before.Keys
			after := *d
			after.Keys = before.Keys
			if !reflect.DeepEqual(after, before) {
				wantKeys = append(slices.Clone(before.Keys), tc.key)
			}
			if !slices.Equal(d.Keys, wantKeys) {
				t.Errorf("Keys = %v, want %v", d.Keys, wantKeys)
			}
			d.Keys = nil
			if !reflect.DeepEqual(*d, tc.want) {
				t.Errorf("defaults:\n got  %+v\n want %+v", *d, tc.want)
			}
		})
	}
}

// TestDefaultKeysShareGrammar: each key accepts exactly the values its
// annotation accepts, the hostile ones included, and a refused value
// leaves the defaults as they were.
func TestDefaultKeysShareGrammar(t *testing.T) {
	// The other half of a proxy-redirect pair, without which the
	// annotation's value is not read.
	context := map[string]map[string]string{
		"proxy-redirect-from": {"proxy-redirect-to": "/x"},
		"proxy-redirect-to":   {"proxy-redirect-from": "/"},
	}
	values := append(slices.Clone(hostileValues), "on", "off", "8k", "1.0", "error timeout", "30", "a.internal a.example", "/a /", "/", "404,503", "true")
	for _, k := range DefaultKeys() {
		for _, v := range values {
			d := &model.Defaults{}
			err := ParseDefault(d, k.Name, v)
			if err != nil && !reflect.DeepEqual(*d, model.Defaults{}) {
				t.Errorf("%s %q: a refused value changed the defaults: %+v", k.Name, v, *d)
			}
			ann := maps.Clone(context[k.Name])
			if ann == nil {
				ann = map[string]string{}
			}
			ann[k.Name] = v
			_, problems := parseWith(nil, ann)
			refused := slices.ContainsFunc(problems, func(p model.Problem) bool {
				return p.Reason == model.ReasonInvalidAnnotation && names(p.Message, k.Name)
			})
			if refused != (err != nil) {
				t.Errorf("%s %.40q: the annotation refuses it: %v; the key: %v", k.Name, v, refused, err)
			}
		}
	}
}

// TestDefaultKeysBuiltins: each key's builtin value is valid and sets
// nothing, its example sets something, and a key applies to VirtualServer
// upstreams exactly when model.Defaults.UpstreamProxy passes it on.
func TestDefaultKeysBuiltins(t *testing.T) {
	for _, k := range DefaultKeys() {
		if k.Builtin != "" {
			d := &model.Defaults{}
			if err := ParseDefault(d, k.Name, k.Builtin); err != nil || !reflect.DeepEqual(*d, model.Defaults{}) {
				t.Errorf("%s: builtin %q: %v, %+v; want valid and setting nothing", k.Name, k.Builtin, err, *d)
			}
		}
		d := defaultsOf(t, map[string]string{k.Name: k.Example})
		if !slices.Equal(d.Keys, []string{k.Name}) {
			t.Errorf("%s: example %q sets nothing", k.Name, k.Example)
		}
		if passed := !reflect.DeepEqual(d.UpstreamProxy(), model.Policy{}); passed != k.VirtualServers {
			t.Errorf("%s %q: passed to VirtualServer upstreams = %v, want %v", k.Name, k.Example, passed, k.VirtualServers)
		}
	}
	if n := len(DefaultKeys()); n != 18 {
		t.Errorf("%d default keys, want ingress-nginx's 18 per-location keys", n)
	}
}

// TestDefaultsUnfit: an Ingress whose buffer annotations the ConfigMap's
// busy buffers size or largest temporary file no longer fits uses nginx's
// default for them, with a Problem, where nginx would refuse the
// configuration.
func TestDefaultsUnfit(t *testing.T) {
	small := map[string]string{"proxy-busy-buffers-size": "8k", "proxy-max-temp-file-size": "8k"}
	for _, tc := range []struct {
		name     string
		keys     map[string]string
		ann      map[string]string
		want     model.Buffering
		problems int
	}{
		{"the keys' values fit the http level's buffers", small, nil,
			model.Buffering{BusyBuffers: sizeOf(8 << 10), MaxTempFile: sizeOf(8 << 10)}, 0},
		{"they fit 8 buffers of 8k", small, map[string]string{"proxy-buffer-size": "8k", "proxy-buffers-number": "8"},
			model.Buffering{Buffers: 8, BufferSize: sizeOf(8 << 10), BusyBuffers: sizeOf(8 << 10), MaxTempFile: sizeOf(8 << 10)}, 0},
		{"neither fits buffers of 16k", small, map[string]string{"proxy-buffer-size": "16k"},
			model.Buffering{BufferSize: sizeOf(16 << 10)}, 2},
		{"the busy size does not fit buffers of 16k", map[string]string{"proxy-busy-buffers-size": "8k", "proxy-max-temp-file-size": "32k"},
			map[string]string{"proxy-buffer-size": "16k"},
			model.Buffering{BufferSize: sizeOf(16 << 10), MaxTempFile: sizeOf(32 << 10)}, 1},
		{"the busy size does not fit 3 buffers of the key's size", map[string]string{"proxy-buffer-size": "8k", "proxy-buffers-number": "8", "proxy-busy-buffers-size": "32k"},
			map[string]string{"proxy-buffers-number": "3"},
			model.Buffering{Buffers: 3, BufferSize: sizeOf(8 << 10)}, 1},
		{"an annotation's own busy size is checked against its buffers", small, map[string]string{"proxy-buffer-size": "16k", "proxy-busy-buffers-size": "32k"},
			model.Buffering{BufferSize: sizeOf(16 << 10), BusyBuffers: sizeOf(32 << 10)}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, problems := parseWith(defaultsOf(t, tc.keys), tc.ann)
			if !reflect.DeepEqual(res.Location.Buffering, tc.want) {
				t.Errorf("buffering %s, want %s", deref(reflect.ValueOf(res.Location.Buffering)), deref(reflect.ValueOf(tc.want)))
			}
			if len(problems) != tc.problems {
				t.Fatalf("problems %v, want %d", problems, tc.problems)
			}
			for _, p := range problems {
				if p.Reason != model.ReasonUnsupportedAnnotation || !strings.HasPrefix(p.Message, "the ConfigMap's proxy-") || p.Object != testRef {
					t.Errorf("problem %s %q on %v", p.Reason, p.Message, p.Object)
				}
				checkMessage(t, p.Message)
			}
		})
	}
}

// TestDefaultRedirect: proxy-redirect-from and proxy-redirect-to are
// replaced each on its own by an annotation, as in ingress-nginx; what
// has no effect is reported only where an annotation set it.
func TestDefaultRedirect(t *testing.T) {
	pair := map[string]string{"proxy-redirect-from": "http://svc.internal/", "proxy-redirect-to": "https://app.example/"}
	for _, tc := range []struct {
		name     string
		keys     map[string]string
		ann      map[string]string
		want     *model.Replace
		problems []problem
	}{
		{name: "the keys' pair", keys: pair, want: &model.Replace{From: "http://svc.internal/", To: "https://app.example/"}},
		{name: "an Ingress's to with the key's from", keys: pair, ann: map[string]string{"proxy-redirect-to": "/app/"},
			want: &model.Replace{From: "http://svc.internal/", To: "/app/"}},
		{name: "an Ingress's from with the key's to", keys: pair, ann: map[string]string{"proxy-redirect-from": "/"},
			want: &model.Replace{From: "/", To: "https://app.example/"}},
		{name: "an Ingress turns the rewrite off", keys: pair, ann: map[string]string{"proxy-redirect-from": "off"},
			want: &model.Replace{Off: true}},
		{name: "an Ingress keeps nginx's default", keys: pair, ann: map[string]string{"proxy-redirect-from": "default"}},
		{name: "an Ingress's to off drops the key's from silently", keys: pair, ann: map[string]string{"proxy-redirect-to": "off"}},
		{name: "the key's from alone is used with an Ingress's to", keys: map[string]string{"proxy-redirect-from": "/"},
			ann: map[string]string{"proxy-redirect-to": "/app/"}, want: &model.Replace{From: "/", To: "/app/"}},
		{name: "the key's to alone is used with an Ingress's from", keys: map[string]string{"proxy-redirect-to": "/app/"},
			ann: map[string]string{"proxy-redirect-from": "/"}, want: &model.Replace{From: "/", To: "/app/"}},
		{name: "an Ingress's to without any from", keys: map[string]string{"proxy-redirect-from": "off"},
			ann: map[string]string{"proxy-redirect-to": "/app/"}, want: &model.Replace{Off: true}, problems: []problem{ignored("proxy-redirect-to")}},
		{name: "an invalid from keeps the key's", keys: pair, ann: map[string]string{"proxy-redirect-from": "hello.com"},
			want: &model.Replace{From: "http://svc.internal/", To: "https://app.example/"}, problems: []problem{invalid("proxy-redirect-from")}},
		{name: "an invalid to keeps the key's", keys: pair, ann: map[string]string{"proxy-redirect-to": "$host"},
			want: &model.Replace{From: "http://svc.internal/", To: "https://app.example/"}, problems: []problem{invalid("proxy-redirect-to")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, problems := parseWith(defaultsOf(t, tc.keys), tc.ann)
			if !reflect.DeepEqual(res.Location.RedirectRewrite, tc.want) {
				t.Errorf("proxy_redirect %s, want %s", deref(reflect.ValueOf(res.Location.RedirectRewrite)), deref(reflect.ValueOf(tc.want)))
			}
			checkProblems(t, problems, tc.problems)
		})
	}
}

// TestUnusedDefaults: a proxy-redirect key without its other half applies
// only to Ingresses that supply it; the ConfigMap's Problem says so.
func TestUnusedDefaults(t *testing.T) {
	for _, tc := range []struct {
		keys map[string]string
		want string
	}{
		{map[string]string{"proxy-redirect-from": "/", "proxy-redirect-to": "/app/"}, ""},
		{map[string]string{"proxy-redirect-from": "/"}, `key "proxy-redirect-from" only applies together with a proxy-redirect-to that is not off; it applies only to Ingresses that set the proxy-redirect-to annotation`},
		{map[string]string{"proxy-redirect-to": "/app/"}, `key "proxy-redirect-to" only applies together with proxy-redirect-from; it applies only to Ingresses that set the proxy-redirect-from annotation`},
		{map[string]string{"proxy-redirect-from": "off", "proxy-redirect-to": "/app/"}, `key "proxy-redirect-to" has no effect when proxy-redirect-from is off`},
		{map[string]string{"proxy-buffering": "on"}, ""},
	} {
		got := strings.Join(UnusedDefaults(defaultsOf(t, tc.keys)), "; ")
		if tc.want == "" && got != "" || !strings.HasPrefix(got, tc.want) {
			t.Errorf("%v: %q, want %q", tc.keys, got, tc.want)
		}
	}
}
