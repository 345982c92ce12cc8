package model

import (
	"strings"
	"testing"
)

func TestParseSigninURL(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"https://login.example.com/start", "https://login.example.com/start", ""},
		// oauth2-proxy's recipes.
		{"https://$host/oauth2/start?rd=$escaped_request_uri", "https://${host}/oauth2/start?rd=${escaped_request_uri}", ""},
		{"https://auth.example.com/oauth2/start?rd=https://$host$escaped_request_uri", "https://auth.example.com/oauth2/start?rd=https://${host}${escaped_request_uri}", ""},
		{"$scheme://$best_http_host/start?rd=$scheme://$host$request_uri", "${scheme}://${best_http_host}/start?rd=${scheme}://${host}${request_uri}", ""},
		{"https://$host:$server_port/s", "https://${host}:${server_port}/s", ""},
		{"https://$host:8443/s", "https://${host}:8443/s", ""},
		{"https://a.example$request_uri", "https://a.example${request_uri}", ""},
		{"https://a.example/start?u=$http_x_user&x=$arg_X", "https://a.example/start?u=${http_x_user}&x=${arg_x}", ""},
		{"https://$host/$escaped_request_uri", "", "only stand in the query"},
		{"https://a.example/x$request_uri/y", "", "must end the URL"},
		{"https://$http_x_host/start", "", "host may only be"},
		{"https://$host/start?rd=$uri", "", "not allowed"},
		{"https://$host/start?rd=$request_uri\"; return 200", "", "must not contain"},
		{"https://$host/start?rd={$host}", "", "must not contain"},
		{"https://$host/start?rd=$host\nX: y", "", "must not contain"},
		{"https://$host/start#$host", "", "fragment"},
		{"https://$host:0/", "", "port"},
		{"https://$host:$port/", "", "port may only be"},
		{"https://$host/" + strings.Repeat("a", 2048), "", "more than 2048"},
	} {
		got, err := ParseSigninURL(tc.in)
		checkErrorMessage(t, tc.in, err)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseSigninURL(%q) = %q, %v; want an error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseSigninURL(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// TestURLTemplateQuery: where a sign-in URL's redirect parameter goes.
func TestURLTemplateQuery(t *testing.T) {
	for _, tc := range []struct {
		in                string
		hasRD, known, uri bool
	}{
		{"https://$host/start", false, false, false},
		{"https://$host/start?rd=$escaped_request_uri", true, true, false},
		{"https://$host/start?client=a&rd=x", true, true, false},
		{"https://$host/start?xrd=1", false, true, false},
		{"https://$host/start?a=$arg_rd", false, true, false},
		{"https://a.example$request_uri", false, false, true},
		{"https://a.example/p?q=$request_uri&rd=1", true, true, false},
		{"https://a.example/p$request_uri", false, false, true},
	} {
		tm, err := ParseURLTemplate(tc.in)
		if err != nil {
			t.Fatalf("%q: %v", tc.in, err)
		}
		if tm.QueryHas("rd") != tc.hasRD || tm.QueryKnown() != tc.known || tm.RequestURIInPath() != tc.uri {
			t.Errorf("%q: QueryHas %v, QueryKnown %v, RequestURIInPath %v; want %v, %v, %v", tc.in,
				tm.QueryHas("rd"), tm.QueryKnown(), tm.RequestURIInPath(), tc.hasRD, tc.known, tc.uri)
		}
	}
}
