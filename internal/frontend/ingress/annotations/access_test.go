package annotations

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/testcorpus"
)

func prefixes(s ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, p := range s {
		out = append(out, netip.MustParsePrefix(p))
	}
	return out
}

func TestAccess(t *testing.T) {
	many := func(n int) string {
		var b []string
		for i := 0; i < n; i++ {
			b = append(b, netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}).String())
		}
		return strings.Join(b, ",")
	}
	for _, tc := range []struct {
		name     string
		ann      map[string]string
		want     *model.AccessList
		problems []problem
	}{
		// good
		{"allow list", map[string]string{"allowlist-source-range": "10.0.0.0/24,172.10.0.1"},
			&model.AccessList{Allow: prefixes("10.0.0.0/24", "172.10.0.1/32")}, nil},
		{"old name", map[string]string{"whitelist-source-range": "10.0.0.0/24"},
			&model.AccessList{Allow: prefixes("10.0.0.0/24")}, nil},
		{"deny list", map[string]string{"denylist-source-range": "192.0.2.0/24, 2001:db8::/32"},
			&model.AccessList{Deny: prefixes("192.0.2.0/24", "2001:db8::/32")}, nil},
		{"both lists", map[string]string{"denylist-source-range": "10.0.0.7", "allowlist-source-range": "10.0.0.0/8"},
			&model.AccessList{Deny: prefixes("10.0.0.7/32"), Allow: prefixes("10.0.0.0/8")}, nil},
		{"IPv6 address", map[string]string{"allowlist-source-range": "::1"},
			&model.AccessList{Allow: prefixes("::1/128")}, nil},

		// edge
		{"new name wins over the old", map[string]string{"allowlist-source-range": "10.0.0.0/8", "whitelist-source-range": "192.0.2.0/24"},
			&model.AccessList{Allow: prefixes("10.0.0.0/8")}, []problem{ignored("whitelist-source-range")}},
		{"duplicates dropped, order kept", map[string]string{"allowlist-source-range": "10.0.0.2, 10.0.0.1,10.0.0.2/32"},
			&model.AccessList{Allow: prefixes("10.0.0.2/32", "10.0.0.1/32")}, nil},
		{"everyone", map[string]string{"allowlist-source-range": "0.0.0.0/0,::/0"},
			&model.AccessList{Allow: prefixes("0.0.0.0/0", "::/0")}, nil},
		{"256 entries", map[string]string{"allowlist-source-range": many(256)},
			&model.AccessList{Allow: func() []netip.Prefix {
				l, _ := model.ParseCIDRList(many(256), 256)
				return l
			}()}, nil},
		{"257 entries close", map[string]string{"allowlist-source-range": many(257)}, nil, []problem{closes("allowlist-source-range")}},

		// bad: fail closed, never open
		{"empty closes", map[string]string{"allowlist-source-range": ""}, nil, []problem{closes("allowlist-source-range")}},
		{"empty item closes", map[string]string{"allowlist-source-range": "10.0.0.0/8,,"}, nil, []problem{closes("allowlist-source-range")}},
		{"host bits close", map[string]string{"allowlist-source-range": "10.0.0.1/8"}, nil, []problem{closes("allowlist-source-range")}},
		{"one bad entry closes", map[string]string{"allowlist-source-range": "10.0.0.0/8, 300.1.1.1"}, nil, []problem{closes("allowlist-source-range")}},
		{"hostname closes", map[string]string{"denylist-source-range": "evil.example.com"}, nil, []problem{closes("denylist-source-range")}},
		{"zone closes", map[string]string{"allowlist-source-range": "fe80::1%eth0"}, nil, []problem{closes("allowlist-source-range")}},
		{"mapped IPv4 closes", map[string]string{"allowlist-source-range": "::ffff:10.0.0.1"}, nil, []problem{closes("allowlist-source-range")}},
		{"leading zeros close", map[string]string{"allowlist-source-range": "010.0.0.1"}, nil, []problem{closes("allowlist-source-range")}},
		{"range closes", map[string]string{"allowlist-source-range": "10.0.0.1-10.0.0.9"}, nil, []problem{closes("allowlist-source-range")}},
		{"bad deny list closes even with a good allow list", map[string]string{"denylist-source-range": "all", "allowlist-source-range": "10.0.0.0/8"},
			nil, []problem{closes("denylist-source-range")}},
		{"bad old name closes", map[string]string{"whitelist-source-range": "10.0.0.0/33"}, nil, []problem{closes("whitelist-source-range")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, problems := parseNames(tc.ann)
			checkProblems(t, problems, tc.problems)
			checkClosed(t, res, tc.problems)
			if !reflect.DeepEqual(res.Location.Access, tc.want) {
				t.Fatalf("Access = %+v, want %+v", res.Location.Access, tc.want)
			}
		})
	}
}

// TestAccessProblemNamesEntry checks that the Problem names the bad entry,
// not only the annotation.
func TestAccessProblemNamesEntry(t *testing.T) {
	_, problems := parseNames(map[string]string{"denylist-source-range": "10.0.0.0/8, 10.0.0.1/8"})
	if len(problems) != 1 || !strings.Contains(problems[0].Message, `"10.0.0.1/8" has host bits set`) {
		t.Fatalf("problems = %v", problems)
	}
}

// TestAccessInjection tries the shared corpus, alone and after a good
// entry: every value closes the paths.
func TestAccessInjection(t *testing.T) {
	for _, v := range testcorpus.Injection {
		for _, val := range []string{v, "10.0.0.0/8," + v} {
			res, problems := parseNames(map[string]string{"allowlist-source-range": val})
			checkProblems(t, problems, []problem{closes("allowlist-source-range")})
			if res.Location.Access != nil {
				t.Fatalf("%q: Access = %+v", val, res.Location.Access)
			}
		}
	}
}
