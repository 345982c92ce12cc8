package annotations

import (
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

func TestHeaders(t *testing.T) {
	host := func(h string) Result { return Result{Location: model.Policy{UpstreamHost: new(model.HeaderValue(h))}} }
	bad := func(name, value string) annotationCase {
		return annotationCase{name: name + " " + value, values: map[string]string{name: value}, problems: []problem{invalid(name)}}
	}
	long := strings.Repeat("a", 253)
	runCases(t, []annotationCase{
		// custom-headers
		{name: "custom-headers namespace/name", values: map[string]string{"custom-headers": "default/custom-headers"},
			want: Result{CustomHeaders: &ObjectName{Namespace: "default", Name: "custom-headers"}}},
		{name: "custom-headers name alone is in the Ingress's namespace", values: map[string]string{"custom-headers": "custom-headers"},
			want: Result{CustomHeaders: &ObjectName{Namespace: "default", Name: "custom-headers"}}},
		{name: "custom-headers dotted name", values: map[string]string{"custom-headers": "default/a.b-c"},
			want: Result{CustomHeaders: &ObjectName{Namespace: "default", Name: "a.b-c"}}},
		{name: "custom-headers name of 253 bytes", values: map[string]string{"custom-headers": long},
			want: Result{CustomHeaders: &ObjectName{Namespace: "default", Name: long}}},
		bad("custom-headers", long+"a"),
		bad("custom-headers", "other/custom-headers"),
		bad("custom-headers", "default/"),
		bad("custom-headers", "/custom-headers"),
		bad("custom-headers", "default/a/b"),
		bad("custom-headers", "Default/custom-headers"),
		bad("custom-headers", "default/Custom"),
		bad("custom-headers", "default/custom_headers"),
		bad("custom-headers", ""),

		// upstream-vhost
		{name: "upstream-vhost (e2e)", values: map[string]string{"upstream-vhost": "upstreamvhost.bar.com"}, want: host("upstreamvhost.bar.com")},
		{name: "upstream-vhost with a port", values: map[string]string{"upstream-vhost": "app.default.svc:8080"}, want: host("app.default.svc:8080")},
		{name: "upstream-vhost single label", values: map[string]string{"upstream-vhost": "backend"}, want: host("backend")},
		{name: "upstream-vhost IPv4", values: map[string]string{"upstream-vhost": "10.0.0.1"}, want: host("10.0.0.1")},
		{name: "upstream-vhost IPv4 and port 65535", values: map[string]string{"upstream-vhost": "10.0.0.1:65535"}, want: host("10.0.0.1:65535")},
		{name: "upstream-vhost name of 253 bytes", values: map[string]string{"upstream-vhost": long}, want: host(long)},
		bad("upstream-vhost", long+"a"),
		bad("upstream-vhost", "a.example:0"),
		bad("upstream-vhost", "a.example:65536"),
		bad("upstream-vhost", "a.example:080"),
		bad("upstream-vhost", "a.example:"),
		bad("upstream-vhost", "a.example:+80"),
		bad("upstream-vhost", "a.example:80:80"),
		bad("upstream-vhost", "$host"),
		bad("upstream-vhost", "$service_name.$namespace.svc.cluster.local"),
		bad("upstream-vhost", "A.example"),
		bad("upstream-vhost", "*.a.example"),
		bad("upstream-vhost", "::1"),
		bad("upstream-vhost", "[::1]:80"),
		bad("upstream-vhost", "a.example/path"),
		bad("upstream-vhost", "a example"),
		bad("upstream-vhost", ""),

		// enable-access-log
		{name: "enable-access-log false", values: map[string]string{"enable-access-log": "false"},
			want: Result{Location: model.Policy{AccessLog: new(false)}}},
		{name: "enable-access-log true", values: map[string]string{"enable-access-log": "true"},
			want: Result{Location: model.Policy{AccessLog: new(true)}}},
		bad("enable-access-log", "off"),

		{name: "all together", values: map[string]string{"custom-headers": "h", "upstream-vhost": "a.example", "enable-access-log": "0"},
			want: Result{CustomHeaders: &ObjectName{Namespace: "default", Name: "h"},
				Location: model.Policy{UpstreamHost: new(model.HeaderValue("a.example")), AccessLog: new(false)}}},
	})
}

func TestHeadersHostile(t *testing.T) {
	checkHostile(t, headersGroup, nil,
		map[string][]string{
			"custom-headers": {"default/%s", "%s/h", "default/h%s"},
			"upstream-vhost": {"a.example:%s", "%s:80", "%s.example", "a.example%s"},
		}, nil)
}
