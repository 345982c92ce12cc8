package model

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/testcorpus"
)

func TestParseLogFormat(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // "" when refused; else the parts, | between, $ for a variable
	}{
		{DefaultLogFormat, `$remote_addr| - |$remote_user| [|$time_local|] "|$request|" |$status| |$body_bytes_sent| "|$http_referer|" "|$http_user_agent|" |$request_length| |$request_time| [|$proxy_upstream_name|] [|$proxy_alternative_upstream_name|] |$upstream_addr| |$upstream_response_length| |$upstream_response_time| |$upstream_status| |$req_id`},
		{`{"time":"$time_iso8601","ns":"$namespace","status":$status}`, `{"time":"|$time_iso8601|","ns":"|$namespace|","status":|$status|}`},
		{"$status$request_id", "$status|$request_id"},
		{"$pid $hostname $remote_port $server_addr $upstream_cache_status $ssl_server_name",
			"$pid| |$hostname| |$remote_port| |$server_addr| |$upstream_cache_status| |$ssl_server_name"},
		{"$status-$uri", "$status|-|$uri"},
		{"x", "x"},
		{"$status", "$status"},
		{"ok; } {#", "ok; } {#"},
		// Refused.
		{"", ""},
		{"$statusx", ""},
		{"${status}", ""},
		{"$", ""},
		{"a $ b", ""},
		{"$1", ""},
		{"$http_cookie", ""},
		{"$proxy_add_x_forwarded_for", ""},
		{"$ssl_client_raw_cert", ""},
		{"'; access_log /etc/passwd; '", ""},
		{`a\'b`, ""},
		{`\x24status`, ""},
		{"a\nb", ""},
		{"a\tb", ""},
		{"caf\u00e9", ""},
		{"a\x00", ""},
		{strings.Repeat("a", 4001), ""},
	} {
		f, err := ParseLogFormat(tc.in)
		if tc.want == "" {
			if err == nil {
				t.Errorf("ParseLogFormat(%q) = %v, want an error", tc.in, f)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseLogFormat(%q): %v", tc.in, err)
			continue
		}
		var parts []string
		for _, p := range f {
			if p.Variable != "" {
				parts = append(parts, "$"+p.Variable)
			} else {
				parts = append(parts, p.Literal)
			}
		}
		if got := strings.Join(parts, "|"); got != tc.want {
			t.Errorf("ParseLogFormat(%q) = %s, want %s", tc.in, got, tc.want)
		}
		if f.String() != tc.in {
			t.Errorf("String() = %q, want %q", f.String(), tc.in)
		}
	}
	if !MustLogFormat(DefaultLogFormat).Uses("proxy_upstream_name") || MustLogFormat(DefaultLogFormat).Uses("namespace") {
		t.Error("Uses")
	}
}

// TestParseLogFormatHostile: whatever the corpus holds, an accepted
// format has only allowed variables and literals free of quotes,
// backslashes, dollars and control bytes.
func TestParseLogFormatHostile(t *testing.T) {
	for _, in := range testcorpus.Injection {
		for _, s := range []string{in, "$status " + in, in + " $status"} {
			f, err := ParseLogFormat(s)
			if err != nil {
				continue
			}
			for _, p := range f {
				if p.Variable != "" {
					if _, ok := LogVariables[p.Variable]; !ok {
						t.Errorf("%q: variable %q accepted", s, p.Variable)
					}
				} else if strings.ContainsAny(p.Literal, "'\\$\n\r\x00") {
					t.Errorf("%q: literal %q accepted", s, p.Literal)
				}
			}
		}
	}
}

func TestParseSkipLogPaths(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // joined by " "; "!" when refused
	}{
		{"", ""},
		{"/healthz", "/healthz"},
		{"/healthz, /metrics,/healthz", "/healthz /metrics"},
		{"/a/b.c~d", "/a/b.c~d"},
		{"/", "/"},
		{"healthz", "!"},
		{"/a,,/b", "!"},
		{"/a?x=1", "!"},
		{"/a b", "!"},
		{"/%2e", "!"},
		{"~^/health", "!"},
		{`/"a`, "!"},
		{"/$host", "!"},
		{"/a;", "!"},
		{"/a\n/b", "!"},
		{"/" + strings.Repeat("a", 1024), "!"},
		{strings.Repeat("/a,", 256) + "/b", "!"},
	} {
		got, err := ParseSkipLogPaths(tc.in)
		switch {
		case tc.want == "!" && err == nil:
			t.Errorf("ParseSkipLogPaths(%q) = %q, want an error", tc.in, got)
		case tc.want != "!" && err != nil:
			t.Errorf("ParseSkipLogPaths(%q): %v", tc.in, err)
		case tc.want != "!" && strings.Join(got, " ") != tc.want:
			t.Errorf("ParseSkipLogPaths(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, in := range testcorpus.Injection {
		if got, err := ParseSkipLogPaths(in); err == nil {
			for _, p := range got {
				if strings.ContainsAny(p, "\"'$;{}#\\ \n") {
					t.Errorf("ParseSkipLogPaths(%q) accepted %q", in, p)
				}
			}
		}
	}
}

// TestLogVariablesDocumented: the list in docs/configuration.md names
// exactly the variables a log format may use.
func TestLogVariablesDocumented(t *testing.T) {
	data, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	const from, to = "A format may use these variables and no others", "Differences from ingress-nginx: a format with any other variable"
	doc := string(data)
	start, end := strings.Index(doc, from), strings.Index(doc, to)
	if start < 0 || end < start {
		t.Fatalf("docs/configuration.md has no list from %q to %q", from, to)
	}
	list := doc[start:end]
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`([a-z0-9_]+)`").FindAllStringSubmatch(list, -1) {
		named[m[1]] = true
	}
	for name := range baseLogVariables {
		if !named[name] {
			t.Errorf("the list does not name the log variable `%s`", name)
		}
	}
	for name := range named {
		if _, ok := baseLogVariables[name]; !ok {
			t.Errorf("the list names `%s`, which a log format may not use", name)
		}
	}
}
