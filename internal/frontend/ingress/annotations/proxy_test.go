package annotations

import (
	"testing"
	"time"

	"github.com/causeway/causeway/internal/model"
)

func TestProxy(t *testing.T) {
	loc := func(p model.Policy) Result { return Result{Location: p} }
	buf := func(b model.Buffering) Result { return Result{Location: model.Policy{Buffering: b}} }
	size := func(n int64) *model.Size { return new(model.Size(n)) }
	retry := func(r model.Retry) Result { return Result{Location: model.Policy{Retry: r}} }
	bad := func(name, value string) annotationCase {
		return annotationCase{name: name + " " + value, values: map[string]string{name: value}, problems: []problem{invalid(name)}}
	}
	runCases(t, []annotationCase{
		// Sizes.
		{name: "proxy-body-size 8m", values: map[string]string{"proxy-body-size": "8m"}, want: buf(model.Buffering{BodySize: size(8 << 20)})},
		{name: "proxy-body-size 0 is unlimited", values: map[string]string{"proxy-body-size": "0"}, want: buf(model.Buffering{BodySize: size(0)})},
		{name: "proxy-body-size 1G", values: map[string]string{"proxy-body-size": "1G"}, want: buf(model.Buffering{BodySize: size(1 << 30)})},
		{name: "proxy-body-size largest", values: map[string]string{"proxy-body-size": "999999999g"},
			want: buf(model.Buffering{BodySize: size(999999999 << 30)})},
		bad("proxy-body-size", "1234567890"),
		bad("proxy-body-size", "15r"),
		bad("proxy-body-size", "1b"),
		bad("proxy-body-size", "1.5m"),
		bad("proxy-body-size", "-1"),
		bad("proxy-body-size", ""),
		bad("proxy-body-size", "1m;"),
		{name: "client-body-buffer-size 1000", values: map[string]string{"client-body-buffer-size": "1000"},
			want: buf(model.Buffering{ClientBodyBuffer: size(1000)})},
		{name: "client-body-buffer-size 1K", values: map[string]string{"client-body-buffer-size": "1K"},
			want: buf(model.Buffering{ClientBodyBuffer: size(1 << 10)})},
		{name: "client-body-buffer-size 1 byte", values: map[string]string{"client-body-buffer-size": "1"},
			want: buf(model.Buffering{ClientBodyBuffer: size(1)})},
		{name: "client-body-buffer-size 1g", values: map[string]string{"client-body-buffer-size": "1g"},
			want: buf(model.Buffering{ClientBodyBuffer: size(1 << 30)})},
		bad("client-body-buffer-size", "1025m"),
		bad("client-body-buffer-size", "0"),
		bad("client-body-buffer-size", "1b"),

		// Timeouts.
		{name: "timeouts in bare seconds", values: map[string]string{"proxy-connect-timeout": "5", "proxy-send-timeout": "60", "proxy-read-timeout": "3600"},
			want: loc(model.Policy{Timeouts: model.Timeouts{Connect: 5 * time.Second, Send: time.Minute, Read: time.Hour}})},
		{name: "timeouts with units", values: map[string]string{"proxy-connect-timeout": "500ms", "proxy-send-timeout": "2m", "proxy-read-timeout": "24h"},
			want: loc(model.Policy{Timeouts: model.Timeouts{Connect: 500 * time.Millisecond, Send: 2 * time.Minute, Read: 24 * time.Hour}})},
		{name: "timeout of 86400", values: map[string]string{"proxy-read-timeout": "86400"},
			want: loc(model.Policy{Timeouts: model.Timeouts{Read: 24 * time.Hour}})},
		bad("proxy-read-timeout", "86401"),
		bad("proxy-read-timeout", "25h"),
		bad("proxy-connect-timeout", "0"),
		bad("proxy-connect-timeout", "-5"),
		bad("proxy-send-timeout", "50k"),
		bad("proxy-send-timeout", "1m30s"),
		bad("proxy-send-timeout", "1M"),
		bad("proxy-send-timeout", " 60"),

		// Retries.
		{name: "proxy-next-upstream as in the e2e test", values: map[string]string{"proxy-next-upstream": "error timeout http_502"},
			want: retry(model.Retry{On: []string{"error", "timeout", "http_502"}})},
		{name: "proxy-next-upstream with commas, case and duplicates", values: map[string]string{"proxy-next-upstream": "Error, timeout,error non_idempotent"},
			want: retry(model.Retry{On: []string{"error", "timeout", "non_idempotent"}})},
		{name: "proxy-next-upstream off", values: map[string]string{"proxy-next-upstream": "off"}, want: retry(model.Retry{On: []string{"off"}})},
		{name: "proxy-next-upstream every condition",
			values: map[string]string{"proxy-next-upstream": "error timeout invalid_header http_500 http_502 http_503 http_504 http_403 http_404 http_429 non_idempotent"},
			want: retry(model.Retry{On: []string{"error", "timeout", "invalid_header", "http_500", "http_502", "http_503", "http_504",
				"http_403", "http_404", "http_429", "non_idempotent"}})},
		bad("proxy-next-upstream", "error timeout invalid_header http_500 http_502 http_503 http_504 http_403 http_404 http_429 non_idempotent error"),
		bad("proxy-next-upstream", "error off"),
		bad("proxy-next-upstream", "http_501"),
		bad("proxy-next-upstream", "errortimeout"),
		bad("proxy-next-upstream", ""),
		bad("proxy-next-upstream", "error,,timeout"),
		{name: "proxy-next-upstream-timeout 0", values: map[string]string{"proxy-next-upstream-timeout": "0"}},
		{name: "proxy-next-upstream-timeout 30", values: map[string]string{"proxy-next-upstream-timeout": "30"},
			want: retry(model.Retry{Timeout: 30 * time.Second})},
		{name: "proxy-next-upstream-timeout 999999 (e2e) is more than 24h", values: map[string]string{"proxy-next-upstream-timeout": "999999"},
			problems: []problem{invalid("proxy-next-upstream-timeout")}},
		bad("proxy-next-upstream-timeout", "-1"),
		{name: "proxy-next-upstream-tries 1", values: map[string]string{"proxy-next-upstream-tries": "1"}, want: retry(model.Retry{Tries: 1})},
		bad("proxy-next-upstream-tries", "0"),
		{name: "proxy-next-upstream-tries 100", values: map[string]string{"proxy-next-upstream-tries": "100"}, want: retry(model.Retry{Tries: 100})},
		bad("proxy-next-upstream-tries", "101"),
		bad("proxy-next-upstream-tries", "888888"),
		bad("proxy-next-upstream-tries", "-1"),
		bad("proxy-next-upstream-tries", "3x"),

		// Buffering.
		{name: "buffering on as in the e2e test",
			values: map[string]string{"proxy-buffering": "on", "proxy-buffers-number": "8", "proxy-buffer-size": "8k", "proxy-request-buffering": "on"},
			want:   buf(model.Buffering{Response: new(true), Request: new(true), Buffers: 8, BufferSize: size(8 << 10)})},
		{name: "buffering off", values: map[string]string{"proxy-buffering": "off", "proxy-request-buffering": "off"},
			want: buf(model.Buffering{Response: new(false), Request: new(false)})},
		bad("proxy-buffering", "On"),
		bad("proxy-buffering", "true"),
		bad("proxy-request-buffering", "1"),
		{name: "proxy-buffers-number 3", values: map[string]string{"proxy-buffers-number": "3"}, want: buf(model.Buffering{Buffers: 3})},
		{name: "proxy-buffers-number 64", values: map[string]string{"proxy-buffers-number": "64"}, want: buf(model.Buffering{Buffers: 64})},
		bad("proxy-buffers-number", "2"),
		bad("proxy-buffers-number", "0"),
		bad("proxy-buffers-number", "65"),
		{name: "proxy-buffer-size 1g", values: map[string]string{"proxy-buffer-size": "1g"}, want: buf(model.Buffering{BufferSize: size(1 << 30)})},
		bad("proxy-buffer-size", "0"),
		bad("proxy-buffer-size", "2g"),
		{name: "proxy-busy-buffers-size within the default buffers", values: map[string]string{"proxy-busy-buffers-size": "8k"},
			want: buf(model.Buffering{BusyBuffers: size(8 << 10)})},
		{name: "proxy-busy-buffers-size all default buffers but one", values: map[string]string{"proxy-busy-buffers-size": "12k"},
			want: buf(model.Buffering{BusyBuffers: size(12 << 10)})},
		bad("proxy-busy-buffers-size", "16k"),
		bad("proxy-busy-buffers-size", "2k"),
		bad("proxy-busy-buffers-size", "0"),
		bad("proxy-busy-buffers-size", "big"),
		{name: "proxy-busy-buffers-size against the Ingress's buffers", values: map[string]string{
			"proxy-busy-buffers-size": "112k", "proxy-buffers-number": "8", "proxy-buffer-size": "16k"},
			want: buf(model.Buffering{Buffers: 8, BufferSize: size(16 << 10), BusyBuffers: size(112 << 10)})},
		{name: "proxy-busy-buffers-size below the Ingress's buffer size", values: map[string]string{
			"proxy-busy-buffers-size": "8k", "proxy-buffer-size": "16k"},
			want: buf(model.Buffering{BufferSize: size(16 << 10)}), problems: []problem{invalid("proxy-busy-buffers-size")}},
		{name: "proxy-busy-buffers-size beyond the Ingress's buffers", values: map[string]string{
			"proxy-busy-buffers-size": "64k", "proxy-buffers-number": "3", "proxy-buffer-size": "16k"},
			want: buf(model.Buffering{Buffers: 3, BufferSize: size(16 << 10)}), problems: []problem{invalid("proxy-busy-buffers-size")}},
		{name: "proxy-max-temp-file-size 1024m", values: map[string]string{"proxy-max-temp-file-size": "1024m"},
			want: buf(model.Buffering{MaxTempFile: size(1 << 30)})},
		{name: "proxy-max-temp-file-size 0 turns temporary files off", values: map[string]string{"proxy-max-temp-file-size": "0"},
			want: buf(model.Buffering{MaxTempFile: size(0)})},
		{name: "proxy-max-temp-file-size 4k, the default buffer size", values: map[string]string{"proxy-max-temp-file-size": "4k"},
			want: buf(model.Buffering{MaxTempFile: size(4 << 10)})},
		bad("proxy-max-temp-file-size", "2k"),
		{name: "proxy-max-temp-file-size below proxy-buffer-size", values: map[string]string{"proxy-max-temp-file-size": "16k", "proxy-buffer-size": "32k"},
			want: buf(model.Buffering{BufferSize: size(32 << 10)}), problems: []problem{invalid("proxy-max-temp-file-size")}},
		{name: "proxy-max-temp-file-size equal to proxy-buffer-size", values: map[string]string{"proxy-max-temp-file-size": "4k", "proxy-buffer-size": "4k"},
			want: buf(model.Buffering{BufferSize: size(4 << 10), MaxTempFile: size(4 << 10)})},

		// HTTP version.
		{name: "proxy-http-version 1.0", values: map[string]string{"proxy-http-version": "1.0"}, want: loc(model.Policy{HTTPVersion: "1.0"})},
		{name: "proxy-http-version 1.1", values: map[string]string{"proxy-http-version": "1.1"}, want: loc(model.Policy{HTTPVersion: "1.1"})},
		bad("proxy-http-version", "2"),
		bad("proxy-http-version", "1.1 "),

		// Cookie rewriting.
		{name: "proxy-cookie-domain off", values: map[string]string{"proxy-cookie-domain": "off"},
			want: loc(model.Policy{CookieDomain: &model.Replace{Off: true}})},
		{name: "proxy-cookie-domain pair", values: map[string]string{"proxy-cookie-domain": "localhost example.org"},
			want: loc(model.Policy{CookieDomain: &model.Replace{From: "localhost", To: "example.org"}})},
		{name: "proxy-cookie-domain leading dots and a tab", values: map[string]string{"proxy-cookie-domain": ".internal.svc\t.example.org"},
			want: loc(model.Policy{CookieDomain: &model.Replace{From: ".internal.svc", To: ".example.org"}})},
		bad("proxy-cookie-domain", "example.org"),
		bad("proxy-cookie-domain", "a.example b.example c.example"),
		bad("proxy-cookie-domain", "~\\.internal$ example.org"),
		bad("proxy-cookie-domain", "$host example.org"),
		bad("proxy-cookie-domain", "Example.org example.org"),
		bad("proxy-cookie-domain", "*.a.example example.org"),
		bad("proxy-cookie-domain", "..a.example example.org"),
		bad("proxy-cookie-domain", "OFF"),
		bad("proxy-cookie-domain", ""),
		{name: "proxy-cookie-path pair (e2e)", values: map[string]string{"proxy-cookie-path": "/one/ /"},
			want: loc(model.Policy{CookiePath: &model.Replace{From: "/one/", To: "/"}})},
		{name: "proxy-cookie-path off", values: map[string]string{"proxy-cookie-path": "off"},
			want: loc(model.Policy{CookiePath: &model.Replace{Off: true}})},
		bad("proxy-cookie-path", "/one"),
		bad("proxy-cookie-path", "one /"),
		bad("proxy-cookie-path", "~^/one(.*) /$1"),
		bad("proxy-cookie-path", "/one /two?x"),

		// Redirect rewriting.
		{name: "proxy-redirect-from off (e2e)", values: map[string]string{"proxy-redirect-from": "off", "proxy-redirect-to": "goodbye.com"},
			want: loc(model.Policy{RedirectRewrite: &model.Replace{Off: true}}), problems: []problem{ignored("proxy-redirect-to")}},
		{name: "proxy-redirect-from off alone", values: map[string]string{"proxy-redirect-from": "off"},
			want: loc(model.Policy{RedirectRewrite: &model.Replace{Off: true}})},
		{name: "proxy-redirect-from default keeps nginx's default", values: map[string]string{"proxy-redirect-from": "default"}},
		{name: "proxy-redirect URLs", values: map[string]string{"proxy-redirect-from": "http://backend.internal:8080/", "proxy-redirect-to": "https://App.example.com/app/"},
			want: loc(model.Policy{RedirectRewrite: &model.Replace{From: "http://backend.internal:8080/", To: "https://app.example.com/app/"}})},
		{name: "proxy-redirect paths", values: map[string]string{"proxy-redirect-from": "/", "proxy-redirect-to": "/app/"},
			want: loc(model.Policy{RedirectRewrite: &model.Replace{From: "/", To: "/app/"}})},
		{name: "proxy-redirect URL to path", values: map[string]string{"proxy-redirect-from": "http://backend/", "proxy-redirect-to": "/"},
			want: loc(model.Policy{RedirectRewrite: &model.Replace{From: "http://backend/", To: "/"}})},
		{name: "proxy-redirect bare host names (e2e) are refused", values: map[string]string{"proxy-redirect-from": "hello.com", "proxy-redirect-to": "goodbye.com"},
			problems: []problem{invalid("proxy-redirect-from"), invalid("proxy-redirect-to")}},
		{name: "proxy-redirect-from without to", values: map[string]string{"proxy-redirect-from": "/a"},
			problems: []problem{ignored("proxy-redirect-from")}},
		{name: "proxy-redirect-to off", values: map[string]string{"proxy-redirect-from": "/a", "proxy-redirect-to": "off"},
			problems: []problem{ignored("proxy-redirect-from")}},
		{name: "proxy-redirect-to without from", values: map[string]string{"proxy-redirect-to": "/b"},
			problems: []problem{ignored("proxy-redirect-to")}},
		{name: "proxy-redirect-to default is not a value", values: map[string]string{"proxy-redirect-from": "/a", "proxy-redirect-to": "default"},
			problems: []problem{invalid("proxy-redirect-to")}},
		{name: "proxy-redirect-from invalid", values: map[string]string{"proxy-redirect-from": "/a b", "proxy-redirect-to": "/b"},
			problems: []problem{invalid("proxy-redirect-from")}},
		{name: "proxy-redirect-to with a variable", values: map[string]string{"proxy-redirect-from": "/a", "proxy-redirect-to": "$scheme://$host/"},
			problems: []problem{invalid("proxy-redirect-to")}},

		// service-upstream.
		{name: "service-upstream true", values: map[string]string{"service-upstream": "true"}, want: Result{ServiceUpstream: true}},
		{name: "service-upstream false", values: map[string]string{"service-upstream": "false"}},
		bad("service-upstream", "yes"),

		// One bad value among good ones.
		{name: "one invalid value drops only its setting",
			values: map[string]string{"proxy-body-size": "8m", "proxy-read-timeout": "forever", "proxy-buffering": "on"},
			want:   buf(model.Buffering{BodySize: size(8 << 20), Response: new(true)}), problems: []problem{invalid("proxy-read-timeout")}},
	})
}

func TestProxyHostile(t *testing.T) {
	checkHostile(t, proxyGroup,
		hostileSetup{
			"proxy-redirect-from": {"proxy-redirect-to": "/b"},
			"proxy-redirect-to":   {"proxy-redirect-from": "/a"},
		},
		map[string][]string{
			"proxy-body-size":     {"1%s", "%sm"},
			"proxy-read-timeout":  {"60%s", "%s60"},
			"proxy-next-upstream": {"error %s", "%s timeout", "error,%s"},
			"proxy-cookie-domain": {"a.example %s", "%s b.example", "a.example %s.example"},
			"proxy-cookie-path":   {"/a %s", "%s /b", "/a /b%s"},
			"proxy-redirect-from": {"https://a.example/%s", "/a%s"},
			"proxy-redirect-to":   {"https://a.example/%s", "/a%s"},
		}, nil)
}
