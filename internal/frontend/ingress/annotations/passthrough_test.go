package annotations

import "testing"

func TestSSLPassthrough(t *testing.T) {
	runCases(t, []annotationCase{
		{name: "true", values: map[string]string{"ssl-passthrough": "true"}, want: Result{SSLPassthrough: true}},
		{name: "TRUE", values: map[string]string{"ssl-passthrough": "TRUE"}, want: Result{SSLPassthrough: true}},
		{name: "1", values: map[string]string{"ssl-passthrough": "1"}, want: Result{SSLPassthrough: true}},
		{name: "false", values: map[string]string{"ssl-passthrough": "false"}},
		{name: "yes is invalid", values: map[string]string{"ssl-passthrough": "yes"}, problems: []problem{invalid("ssl-passthrough")}},
		{name: "empty is invalid", values: map[string]string{"ssl-passthrough": ""}, problems: []problem{invalid("ssl-passthrough")}},
	})
}
