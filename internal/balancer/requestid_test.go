package balancer_test

import (
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestRequestID checks causeway.requestid in a real nginx: fresh IDs are
// 32 lowercase hex digits and never repeat, also across the batches of
// random bytes it draws (256 IDs each), and they come from OpenSSL
// through the FFI, not from the $request_id fallback.
func TestRequestID(t *testing.T) {
	const loc = `
        location = /ids {
            content_by_lua_block {
                local rid = require("causeway.requestid")
                local out = {}
                for i = 1, tonumber(ngx.var.arg_n) do
                    out[i] = rid.fresh()
                end
                ngx.print(tostring(rid.ffi), " ", table.concat(out, " "))
            }
        }
        location = /get {
            content_by_lua_block {
                local rid = require("causeway.requestid")
                ngx.print(rid.get())
            }
        }
`
	n := startNginx(t, nginxOptions{keys: []string{"k"}, editConf: func(c string) string {
		return strings.Replace(c, "        proxy_read_timeout 10s;\n", "        proxy_read_timeout 10s;\n"+loc, 1)
	}})
	get := func(path string) string {
		t.Helper()
		resp, err := n.http.Get("http://127.0.0.1:" + strconv.Itoa(n.port) + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d: %s\n%s", path, resp.StatusCode, b, n.logs())
		}
		return string(b)
	}
	hex32 := regexp.MustCompile(`^[0-9a-f]{32}$`)
	seen := map[string]bool{}
	for round := range 3 {
		f := strings.Fields(get("/ids?n=1000"))
		if len(f) != 1001 || f[0] != "true" {
			t.Fatalf("round %d: %d fields, ffi %q: want 1000 IDs drawn through the FFI", round, len(f)-1, f[0])
		}
		for _, id := range f[1:] {
			if !hex32.MatchString(id) {
				t.Fatalf("ID %q is not 32 lowercase hex digits", id)
			}
			if seen[id] {
				t.Fatalf("ID %q handed out twice", id)
			}
			seen[id] = true
		}
	}
	// 48,000 random bits per ID set: a byte value absent from every
	// position would mean the hex digits do not cover their range.
	digits := map[rune]bool{}
	for id := range seen {
		for _, r := range id {
			digits[r] = true
		}
	}
	if len(digits) != 16 {
		t.Errorf("IDs use %d distinct hex digits, want 16", len(digits))
	}
	if got := get("/get"); !hex32.MatchString(got) || seen[got] {
		t.Errorf("get() = %q, want a fresh ID", got)
	}
}
