package annotations

import (
	"strings"
	"testing"
)

func TestServerTLS(t *testing.T) {
	on, off := true, false
	keys := func(names ...string) []string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = key(n)
		}
		return out
	}
	runCases(t, []annotationCase{
		{name: "a cipher list", values: map[string]string{"ssl-ciphers": "ECDHE-ECDSA-AES256-GCM-SHA384:!aNULL"},
			want: Result{Server: ServerSettings{SSLCiphers: "ECDHE-ECDSA-AES256-GCM-SHA384:!aNULL", Keys: keys("ssl-ciphers")}}},
		{name: "aliases and commands", values: map[string]string{"ssl-ciphers": "HIGH:!MD5:+ECDHE+AESGCM:-RSA:@SECLEVEL=0:@STRENGTH"},
			want: Result{Server: ServerSettings{SSLCiphers: "HIGH:!MD5:+ECDHE+AESGCM:-RSA:@SECLEVEL=0:@STRENGTH", Keys: keys("ssl-ciphers")}}},
		{name: "prefer true", values: map[string]string{"ssl-prefer-server-ciphers": "true"},
			want: Result{Server: ServerSettings{PreferServerCiphers: &on, Keys: keys("ssl-prefer-server-ciphers")}}},
		{name: "prefer False", values: map[string]string{"ssl-prefer-server-ciphers": "False"},
			want: Result{Server: ServerSettings{PreferServerCiphers: &off, Keys: keys("ssl-prefer-server-ciphers")}}},
		{name: "both", values: map[string]string{"ssl-ciphers": "HIGH", "ssl-prefer-server-ciphers": "0"},
			want: Result{Server: ServerSettings{SSLCiphers: "HIGH", PreferServerCiphers: &off, Keys: keys("ssl-ciphers", "ssl-prefer-server-ciphers")}}},
		{name: "prefer on is not a boolean", values: map[string]string{"ssl-prefer-server-ciphers": "on"}, problems: []problem{invalid("ssl-prefer-server-ciphers")}},
		{name: "empty list", values: map[string]string{"ssl-ciphers": ""}, problems: []problem{invalid("ssl-ciphers")}},
		{name: "empty item", values: map[string]string{"ssl-ciphers": "HIGH::!aNULL"}, problems: []problem{invalid("ssl-ciphers")}},
		{name: "a space", values: map[string]string{"ssl-ciphers": "HIGH !aNULL"}, problems: []problem{invalid("ssl-ciphers")}},
		{name: "a directive injected", values: map[string]string{"ssl-ciphers": "HIGH; return 200"}, problems: []problem{invalid("ssl-ciphers")}},
		{name: "a variable", values: map[string]string{"ssl-ciphers": "$host"}, problems: []problem{invalid("ssl-ciphers")}},
		{name: "a quote", values: map[string]string{"ssl-ciphers": `HIGH"`}, problems: []problem{invalid("ssl-ciphers")}},
		{name: "a bad security level", values: map[string]string{"ssl-ciphers": "HIGH:@SECLEVEL=9"}, problems: []problem{invalid("ssl-ciphers")}},
		{name: "too long", values: map[string]string{"ssl-ciphers": strings.Repeat("A", 1025)}, problems: []problem{invalid("ssl-ciphers")}},
	})
}
