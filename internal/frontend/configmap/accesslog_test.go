package configmap

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/testcorpus"
)

func TestAccessLogKeys(t *testing.T) {
	def := model.DefaultConfig()
	if def.LogFormat.String() != model.DefaultLogFormat || def.LogEscapeJSON || def.LogEscapeNone || def.SkipLogPaths != nil || def.LogDefaultBackend {
		t.Fatalf("defaults: %+v", def)
	}
	for _, tc := range []struct {
		key, value string
		ok         bool
		check      func(model.Config) bool
	}{
		{"log-format-upstream", `{"s":$status,"ns":"$namespace"}`, true, func(c model.Config) bool { return c.LogFormat.String() == `{"s":$status,"ns":"$namespace"}` }},
		{"log-format-upstream", "$remote_addr $req_id", true, func(c model.Config) bool { return c.LogFormat.Uses("req_id") }},
		{"log-format-upstream", "$http_authorization", false, nil},
		{"log-format-upstream", "${status}", false, nil},
		{"log-format-upstream", "x'; error_log /tmp/x; '", false, nil},
		{"log-format-upstream", "", false, nil},
		{"log-format-escape-json", "true", true, func(c model.Config) bool { return c.LogEscapeJSON }},
		{"log-format-escape-json", "FALSE", true, func(c model.Config) bool { return !c.LogEscapeJSON }},
		{"log-format-escape-json", "yes", false, nil},
		{"log-format-escape-none", "true", true, func(c model.Config) bool { return c.LogEscapeNone }},
		{"log-format-escape-none", "on", false, nil},
		{"skip-access-log-urls", "/healthz,/ready", true, func(c model.Config) bool { return slices.Equal(c.SkipLogPaths, []string{"/healthz", "/ready"}) }},
		{"skip-access-log-urls", "", true, func(c model.Config) bool { return c.SkipLogPaths == nil }},
		{"skip-access-log-urls", "/a?b", false, nil},
		{"skip-access-log-urls", "~/health", false, nil},
		{"enable-access-log-for-default-backend", "true", true, func(c model.Config) bool { return c.LogDefaultBackend }},
		{"enable-access-log-for-default-backend", "2", false, nil},
		{"access-log-params", "buffer=16k flush=5s", true, func(c model.Config) bool {
			return c.LogParams == model.AccessLogParams{Buffer: 16 << 10, Flush: 5 * time.Second}
		}},
		{"access-log-params", " buffer=1m ", true, func(c model.Config) bool { return c.LogParams.Buffer == 1<<20 && c.LogParams.Flush == 0 }},
		{"access-log-params", "", true, func(c model.Config) bool { return c.LogParams == model.AccessLogParams{} }},
		{"access-log-params", "flush=5s", false, nil},
		{"access-log-params", "buffer=16k gzip=2", false, nil},
		{"access-log-params", "buffer=16k buffer=32k", false, nil},
		{"access-log-params", "buffer=9m", false, nil},
		{"access-log-params", "buffer=0", false, nil},
		{"access-log-params", "buffer=16k flush=0", false, nil},
		{"access-log-params", "buffer=16k if=$x", false, nil},
		{"access-log-params", "buffer=16k; error_log /tmp/x", false, nil},
		{"access-log-params", "buffer=16k\nflush=1s", true, func(c model.Config) bool { return c.LogParams.Flush == time.Second }},
	} {
		cfg, problems := parseOne(tc.key, tc.value)
		if !tc.ok {
			if len(problems) != 1 || !strings.Contains(problems[0].Message, "the default is used") {
				t.Errorf("%s=%q: problems %v, want one", tc.key, tc.value, problems)
			}
			if cfg.LogFormat.String() != model.DefaultLogFormat || cfg.LogEscapeJSON || cfg.LogEscapeNone || cfg.SkipLogPaths != nil || cfg.LogDefaultBackend {
				t.Errorf("%s=%q: a refused value changed the config", tc.key, tc.value)
			}
			continue
		}
		if len(problems) != 0 || !tc.check(cfg) {
			t.Errorf("%s=%q: problems %v, config %+v", tc.key, tc.value, problems, cfg)
		}
	}
	for _, k := range []string{"access-log-path", "error-log-path"} {
		if key, _ := LookupKey(k); key.Status != KeyNotApplicable {
			t.Errorf("%s: %s", k, key.Status)
		}
	}
	if key, _ := LookupKey("log-format-stream"); key.Status != KeyNotYetSupported {
		t.Errorf("log-format-stream: %s", key.Status)
	}
}

// TestAccessLogKeysHostile: the injection corpus never changes the
// access log's settings without a Problem unless the value is valid.
func TestAccessLogKeysHostile(t *testing.T) {
	for key := range accessLogKeys {
		for _, v := range testcorpus.Injection {
			cfg, problems := parseOne(key, v)
			if len(problems) == 0 {
				if strings.ContainsAny(cfg.LogFormat.String(), "'\\\n\r\x00") && key == "log-format-upstream" {
					t.Errorf("%s=%q accepted as %q", key, v, cfg.LogFormat.String())
				}
				continue
			}
			def := model.DefaultConfig()
			if cfg.LogFormat.String() != def.LogFormat.String() || cfg.SkipLogPaths != nil {
				t.Errorf("%s=%q: refused but the config changed", key, v)
			}
		}
	}
}
