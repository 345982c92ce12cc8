package snippet

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

func prefixes(ss ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range ss {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}

// TestParseAccess: allow and deny in the orders whose meaning under
// nginx's first match the model's deny-then-allow list keeps, one row per
// order; the rest are refused with what to write instead.
func TestParseAccess(t *testing.T) {
	all := prefixes("0.0.0.0/0", "::/0")
	for _, tc := range []struct {
		name, src string
		want      *model.AccessList
		err       string
	}{
		{"deny one address", "deny 192.0.2.1;", &model.AccessList{Deny: prefixes("192.0.2.1/32")}, ""},
		{"deny a CIDR, IPv6 too", "deny 10.0.0.0/8;\ndeny 2001:db8::/32;", &model.AccessList{Deny: prefixes("10.0.0.0/8", "2001:db8::/32")}, ""},
		{"deny, then allow all", "deny 10.0.0.0/8;\nallow all;", &model.AccessList{Deny: prefixes("10.0.0.0/8")}, ""},
		{"allow lines, then deny all", "allow 10.0.0.0/8;\nallow 192.168.0.0/16;\ndeny all;", &model.AccessList{Allow: prefixes("10.0.0.0/8", "192.168.0.0/16")}, ""},
		{"deny, allow, deny all", "deny 10.1.0.0/16;\nallow 10.0.0.0/8;\ndeny all;", &model.AccessList{Deny: prefixes("10.1.0.0/16"), Allow: prefixes("10.0.0.0/8")}, ""},
		{"deny all alone", "deny all;", &model.AccessList{Deny: all}, ""},
		{"allow all alone: nothing", "allow all; add_header X a;", nil, ""},
		{"allow lines and allow all: nothing but the denies", "deny 192.0.2.1; allow 10.0.0.0/8; allow all;", &model.AccessList{Deny: prefixes("192.0.2.1/32")}, ""},
		{"beside headers", "add_header X a;\ndeny 192.0.2.1;", &model.AccessList{Deny: prefixes("192.0.2.1/32")}, ""},
		{"with a refusing if", "deny 192.0.2.1;\nif ($http_x_bot) { return 403; }", &model.AccessList{Deny: prefixes("192.0.2.1/32")}, ""},

		{"allow without deny all", "allow 10.0.0.0/8;", nil, `without a final "deny all"`},
		{"deny after allow", "allow 10.0.0.0/8;\ndeny 10.1.0.0/16;\ndeny all;", nil, `"deny 10.1.0.0/16" after an allow line`},
		{"rules after deny all", "deny all;\nallow 10.0.0.0/8;", nil, `can never match`},
		{"rules after allow all", "allow all;\ndeny 10.0.0.0/8;", nil, `can never match`},
		{"host bits", "deny 10.0.0.1/8;", nil, `host bits`},
		{"a name", "deny example.com;", nil, `not an IP address`},
		{"unix:", "deny unix:;", nil, `not an IP address`},
		{"a zone", "deny fe80::1%eth0;", nil, `not an IP address`},
		{"two arguments", "deny 10.0.0.0/8 192.0.2.1;", nil, `want 1 arguments`},
		{"inside if", "if ($http_x) { deny all; }", nil, `not allowed in an if block`},
		{"beside a return below 400", "deny 192.0.2.1;\nreturn 200 ok;", nil, `answers before it checks the address`},
		{"beside a redirect", "allow 10.0.0.0/8; deny all;\nrewrite ^/a https://example.com/ permanent;", nil, `answers before it checks the address`},
		{"beside an if that serves", "deny 192.0.2.1;\nif ($http_x) { return 302 /login; }", nil, `answers before it checks the address`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := parseOrRefuse(t, tc.src, Location, tc.err)
			if got == nil {
				return
			}
			if !reflect.DeepEqual(got.Access, tc.want) {
				t.Fatalf("Parse(%q).Access = %+v, want %+v", tc.src, got.Access, tc.want)
			}
			// The list decides as nginx's first match over the rules
			// would, for a few addresses.
			for _, a := range []string{"10.1.2.3", "10.2.3.4", "192.0.2.1", "192.168.1.1", "172.16.0.1", "2001:db8::1"} {
				addr := netip.MustParseAddr(a)
				if want := firstMatch(tc.src, addr); got.Access.Allows(addr) != want {
					t.Errorf("%s: the list says %v, nginx's first match %v", a, !want, want)
				}
			}
		})
	}
	for _, ctx := range []Context{Server, HTTP} {
		if s, err := Parse("deny 192.0.2.1;", ctx); err != nil || s.Access == nil {
			t.Errorf("%s context: %v", ctx, err)
		}
	}
	if _, err := Parse("deny 192.0.2.1;", Auth); err == nil {
		t.Error("auth context accepted deny")
	}
}

// parseOrRefuse parses src, and wants it refused with an error holding
// err when err is set (returning nil), or accepted otherwise.
func parseOrRefuse(t *testing.T, src string, ctx Context, err string) *model.Snippet {
	t.Helper()
	got, perr := Parse(src, ctx)
	if err != "" {
		if perr == nil || !strings.Contains(perr.Error(), err) {
			t.Fatalf("Parse(%q) = %+v, %v; want an error containing %q", src, got, perr, err)
		}
		return nil
	}
	if perr != nil {
		t.Fatalf("Parse(%q): %v", src, perr)
	}
	return got
}

// firstMatch is nginx's access module over the allow and deny lines of
// src: the first rule matching addr decides; none lets it in.
func firstMatch(src string, addr netip.Addr) bool {
	for _, stmt := range strings.FieldsFunc(src, func(r rune) bool { return r == ';' || r == '\n' }) {
		f := strings.Fields(stmt)
		if len(f) != 2 || f[0] != "allow" && f[0] != "deny" {
			continue
		}
		p, err := netip.ParsePrefix(f[1])
		if err != nil {
			if a, aerr := netip.ParseAddr(f[1]); aerr == nil {
				p = netip.PrefixFrom(a, a.BitLen())
			}
		}
		if f[1] == "all" || p.IsValid() && p.Contains(addr) {
			return f[0] == "allow"
		}
	}
	return true
}
