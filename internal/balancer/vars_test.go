package balancer_test

import (
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// TestVarsNumber checks causeway.vars.number, which parses a variable's
// bytes in place, against tonumber(ngx.var[...]) in a real nginx, for the
// shapes nginx's numeric variables take and for values they never take.
func TestVarsNumber(t *testing.T) {
	const loc = `
        location = /vars {
            set $causeway_test "";
            content_by_lua_block {
                local vars = require("causeway.vars")
                ngx.var.causeway_test = ngx.unescape_uri(ngx.var.arg_v or "")
                local function show(x)
                    if x == nil then return "nil" end
                    return string.format("%.17g", x)
                end
                local name = ngx.var.arg_name or "causeway_test"
                local raw = ngx.var[name]
                ngx.print(show(vars.number(name)), " ", show(raw and tonumber(raw)), " ", tostring(vars.ffi))
            }
        }
`
	n := startNginx(t, nginxOptions{keys: []string{"k"}, editConf: func(c string) string {
		return strings.Replace(c, "        proxy_read_timeout 10s;\n", "        proxy_read_timeout 10s;\n"+loc, 1)
	}})
	get := func(q url.Values) string {
		t.Helper()
		resp, err := n.http.Get("http://127.0.0.1:" + strconv.Itoa(n.port) + "/vars?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s\n%s", resp.StatusCode, b, n.logs())
		}
		return string(b)
	}
	for _, tc := range []struct {
		value, want string
	}{
		// What $upstream_*_time, $request_time and the sizes look like.
		{"0.001", "0.001"},
		{"0.005", "0.0050000000000000001"},
		{"2.500", "2.5"},
		{"12.345", "12.345000000000001"},
		{"0", "0"},
		{"94", "94"},
		{"4294967296", "4294967296"},
		// More than one attempt, or none: ingress-nginx skips these.
		{"0.004, 0.010", "nil"},
		{"0.004 : 0.010", "nil"},
		{"-", "nil"},
		{"", "nil"},
		// Shapes nginx does not produce, still read as tonumber reads them.
		{"5.", "5"},
		{".5", "0.5"},
		{"00.500", "0.5"},
		{".", "nil"},
		{"1.2.3", "nil"},
		{"0.00a", "nil"},
		{"a.001", "nil"},
		{"1 ", "nil"},
	} {
		got := strings.Fields(get(url.Values{"v": {tc.value}}))
		if len(got) != 3 {
			t.Fatalf("%q: answer %q", tc.value, got)
		}
		if got[0] != tc.want {
			t.Errorf("number(%q) = %s, want %s", tc.value, got[0], tc.want)
		}
		// tonumber trims spaces; nginx's values have none.
		if got[0] != got[1] && tc.value != "1 " {
			t.Errorf("number(%q) = %s, tonumber = %s", tc.value, got[0], got[1])
		}
		if got[2] != "true" {
			t.Errorf("number(%q): read through ngx.var (ffi = %s), not in place", tc.value, got[2])
		}
	}
	// A variable of nginx's own, and one that does not exist.
	if got := strings.Fields(get(url.Values{"name": {"request_length"}})); len(got) != 3 || got[0] != got[1] || got[0] == "nil" {
		t.Errorf("request_length: %q", got)
	}
	if got := strings.Fields(get(url.Values{"name": {"causeway_no_such_variable"}})); len(got) < 1 || got[0] != "nil" {
		t.Errorf("undefined variable: %q", got)
	}
}

// TestVarsText checks causeway.vars.text in a real nginx: a value as a
// string, nil for an empty value and for a variable that does not exist.
func TestVarsText(t *testing.T) {
	const loc = `
        location = /text {
            set $causeway_test "";
            content_by_lua_block {
                local vars = require("causeway.vars")
                ngx.var.causeway_test = ngx.unescape_uri(ngx.var.arg_v or "")
                local v = vars.text(ngx.var.arg_name or "causeway_test")
                ngx.print(v == nil and "nil" or "[" .. v .. "]")
            }
        }
`
	n := startNginx(t, nginxOptions{keys: []string{"k"}, editConf: func(c string) string {
		return strings.Replace(c, "        proxy_read_timeout 10s;\n", "        proxy_read_timeout 10s;\n"+loc, 1)
	}})
	for _, tc := range []struct {
		q    url.Values
		want string
	}{
		{url.Values{"v": {"client-7"}}, "[client-7]"},
		{url.Values{"v": {"a b|c"}}, "[a b|c]"},
		{url.Values{"v": {""}}, "nil"},
		{url.Values{"name": {"causeway_no_such_variable"}}, "nil"},
	} {
		resp, err := n.http.Get("http://127.0.0.1:" + strconv.Itoa(n.port) + "/text?" + tc.q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(b) != tc.want {
			t.Errorf("text(%v): %d %q, want %q\n%s", tc.q, resp.StatusCode, b, tc.want, n.logs())
		}
	}
}
