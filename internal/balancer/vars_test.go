package balancer_test

import (
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

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
