package annotations

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

func TestLimits(t *testing.T) {
	size := func(n int64) *model.Size { s := model.Size(n); return &s }
	prefixes := func(ss ...string) []netip.Prefix {
		out := make([]netip.Prefix, len(ss))
		for i, s := range ss {
			out[i] = netip.MustParsePrefix(s)
		}
		return out
	}
	kv := func(pairs ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(pairs); i += 2 {
			m[pairs[i]] = pairs[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name     string
		ann      map[string]string
		want     *model.Limits
		problems []problem
	}{
		// limit-rps, limit-rpm, limit-burst-multiplier: ingress-nginx's
		// burst is the rate times the multiplier, 5 by default.
		{"rps", kv("limit-rps", "2"), &model.Limits{RPS: 2, BurstRPS: 10}, nil},
		{"rpm", kv("limit-rpm", "30"), &model.Limits{RPM: 30, BurstRPM: 150}, nil},
		{"rps and rpm with a multiplier", kv("limit-rps", "2", "limit-rpm", "30", "limit-burst-multiplier", "1"),
			&model.Limits{RPS: 2, BurstRPS: 2, RPM: 30, BurstRPM: 30}, nil},
		{"rps 0 is no limit", kv("limit-rps", "0"), nil, nil},
		{"rps at the bound", kv("limit-rps", "100000"), &model.Limits{RPS: 100000, BurstRPS: 500000}, nil},
		{"rps over the bound", kv("limit-rps", "100001"), nil, []problem{invalid("limit-rps")}},
		{"rps negative", kv("limit-rps", "-1"), nil, []problem{invalid("limit-rps")}},
		{"rps with a unit", kv("limit-rps", "2r/s"), nil, []problem{invalid("limit-rps")}},
		{"rps decimal", kv("limit-rps", "1.5"), nil, []problem{invalid("limit-rps")}},
		{"rps overflow", kv("limit-rps", "99999999999999999999"), nil, []problem{invalid("limit-rps")}},
		{"bad rps keeps rpm", kv("limit-rps", "x", "limit-rpm", "60"), &model.Limits{RPM: 60, BurstRPM: 300}, []problem{invalid("limit-rps")}},
		{"rpm over the bound", kv("limit-rpm", "6000001"), nil, []problem{invalid("limit-rpm")}},
		{"multiplier 0 keeps 5", kv("limit-rps", "1", "limit-burst-multiplier", "0"), &model.Limits{RPS: 1, BurstRPS: 5},
			[]problem{invalid("limit-burst-multiplier")}},
		{"multiplier over the bound keeps 5", kv("limit-rps", "1", "limit-burst-multiplier", "101"), &model.Limits{RPS: 1, BurstRPS: 5},
			[]problem{invalid("limit-burst-multiplier")}},
		{"multiplier alone is ignored", kv("limit-burst-multiplier", "2"), nil, []problem{ignored("limit-burst-multiplier")}},
		{"multiplier with connections only is ignored", kv("limit-connections", "3", "limit-burst-multiplier", "2"),
			&model.Limits{Connections: 3}, []problem{ignored("limit-burst-multiplier")}},

		// limit-connections
		{"connections", kv("limit-connections", "10"), &model.Limits{Connections: 10}, nil},
		{"connections over the bound", kv("limit-connections", "100001"), nil, []problem{invalid("limit-connections")}},
		{"connections empty", kv("limit-connections", ""), nil, []problem{invalid("limit-connections")}},

		// limit-rate, limit-rate-after: whole kilobytes as ingress-nginx,
		// or a size; only with proxy-buffering on, which nginx needs.
		{"rate without buffering is ignored", kv("limit-rate", "100"), nil, []problem{ignored("limit-rate")}},
		{"rate with buffering off is ignored", kv("limit-rate", "100", "limit-rate-after", "1", "proxy-buffering", "off"), nil,
			[]problem{ignored("limit-rate"), ignored("limit-rate-after")}},
		{"rate in kilobytes", kv("limit-rate", "100", "proxy-buffering", "on"), &model.Limits{Rate: size(100 << 10)}, nil},
		{"rate 0 turns the ConfigMap's off", kv("limit-rate", "0", "proxy-buffering", "on"), &model.Limits{Rate: size(0)}, nil},
		{"rate with a unit", kv("limit-rate", "2m", "proxy-buffering", "on"), &model.Limits{Rate: size(2 << 20)}, nil},
		{"rate at the bound", kv("limit-rate", "1048576", "proxy-buffering", "on"), &model.Limits{Rate: size(1 << 30)}, nil},
		{"rate over the bound", kv("limit-rate", "1048577", "proxy-buffering", "on"), nil, []problem{invalid("limit-rate")}},
		{"rate 2g", kv("limit-rate", "2g", "proxy-buffering", "on"), nil, []problem{invalid("limit-rate")}},
		{"rate with another unit", kv("limit-rate", "100kb", "proxy-buffering", "on"), nil, []problem{invalid("limit-rate")}},
		{"rate after", kv("limit-rate-after", "512", "limit-rate", "10", "proxy-buffering", "on"), &model.Limits{Rate: size(10 << 10), RateAfter: size(512 << 10)}, nil},
		{"rate after negative", kv("limit-rate-after", "-5", "proxy-buffering", "on"), nil, []problem{invalid("limit-rate-after")}},

		// limit-allowlist and its former name limit-whitelist.
		{"allowlist", kv("limit-rps", "1", "limit-allowlist", "10.0.0.0/8, 192.168.1.1,2001:db8::/32"),
			&model.Limits{RPS: 1, BurstRPS: 5, Exempt: prefixes("10.0.0.0/8", "192.168.1.1/32", "2001:db8::/32")}, nil},
		{"whitelist", kv("limit-connections", "1", "limit-whitelist", "127.0.0.2"),
			&model.Limits{Connections: 1, Exempt: prefixes("127.0.0.2/32")}, nil},
		{"both names: allowlist wins", kv("limit-rps", "1", "limit-whitelist", "10.0.0.0/8", "limit-allowlist", "127.0.0.0/8"),
			&model.Limits{RPS: 1, BurstRPS: 5, Exempt: prefixes("127.0.0.0/8")}, []problem{ignored("limit-whitelist")}},
		{"allowlist duplicates", kv("limit-rps", "1", "limit-allowlist", "10.0.0.0/8,10.0.0.0/8"),
			&model.Limits{RPS: 1, BurstRPS: 5, Exempt: prefixes("10.0.0.0/8")}, nil},
		{"allowlist with host bits: no one exempt", kv("limit-rps", "1", "limit-allowlist", "10.0.0.1/8"),
			&model.Limits{RPS: 1, BurstRPS: 5}, []problem{invalid("limit-allowlist")}},
		{"allowlist not an address", kv("limit-rps", "1", "limit-allowlist", "example.com"),
			&model.Limits{RPS: 1, BurstRPS: 5}, []problem{invalid("limit-allowlist")}},
		{"allowlist with a zone", kv("limit-rps", "1", "limit-allowlist", "fe80::1%eth0"),
			&model.Limits{RPS: 1, BurstRPS: 5}, []problem{invalid("limit-allowlist")}},
		{"allowlist empty", kv("limit-rps", "1", "limit-allowlist", " , "),
			&model.Limits{RPS: 1, BurstRPS: 5}, []problem{invalid("limit-allowlist")}},
		{"allowlist too long", kv("limit-rps", "1", "limit-allowlist", manyAddresses(1001)),
			&model.Limits{RPS: 1, BurstRPS: 5}, []problem{invalid("limit-allowlist")}},
		{"allowlist of 1000", kv("limit-rps", "1", "limit-allowlist", manyAddresses(1000)),
			&model.Limits{RPS: 1, BurstRPS: 5, Exempt: prefixes(strings.Split(manyPrefixes(1000), ",")...)}, nil},
		{"allowlist alone is ignored", kv("limit-allowlist", "10.0.0.0/8"), nil, []problem{ignored("limit-allowlist")}},
		{"allowlist with a bandwidth limit only is ignored", kv("limit-rate", "1", "limit-whitelist", "10.0.0.0/8", "proxy-buffering", "on"),
			&model.Limits{Rate: size(1 << 10)}, []problem{ignored("limit-whitelist")}},

		{"everything", kv("limit-rps", "5", "limit-rpm", "100", "limit-burst-multiplier", "2", "limit-connections", "4",
			"limit-rate", "100", "limit-rate-after", "1m", "limit-allowlist", "127.0.0.2", "proxy-buffering", "on"),
			&model.Limits{RPS: 5, BurstRPS: 10, RPM: 100, BurstRPM: 200, Connections: 4, Rate: size(100 << 10), RateAfter: size(1 << 20),
				Exempt: prefixes("127.0.0.2/32")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, problems := parseNames(tc.ann)
			checkProblems(t, problems, tc.problems)
			checkClosed(t, res, tc.problems)
			if !reflect.DeepEqual(res.Location.Limits, tc.want) {
				t.Fatalf("Limits = %s, want %s", dumpLimits(res.Location.Limits), dumpLimits(tc.want))
			}
		})
	}
}

// TestLimitsRefuseHostileValues: no value of the injection corpus sets a
// limit or an exemption.
func TestLimitsRefuseHostileValues(t *testing.T) {
	for _, name := range []string{"limit-rps", "limit-rpm", "limit-connections", "limit-burst-multiplier", "limit-rate",
		"limit-rate-after", "limit-allowlist", "limit-whitelist"} {
		for _, v := range hostile {
			ann := map[string]string{"limit-connections": "1", name: v}
			res, problems := parseNames(ann)
			if len(problems) == 0 {
				t.Errorf("%s=%q: no Problem", name, v)
			}
			for _, p := range problems {
				checkMessage(t, p.Message)
			}
			if l := res.Location.Limits; l != nil && !reflect.DeepEqual(*l, model.Limits{Connections: 1}) {
				t.Errorf("%s=%q: limits %s", name, v, dumpLimits(l))
			}
		}
	}
}

func dumpLimits(l *model.Limits) string {
	if l == nil {
		return "nil"
	}
	return deref(reflect.ValueOf(l))
}

// manyAddresses lists n distinct addresses 10.0.x.y.
func manyAddresses(n int) string {
	out := make([]string, n)
	for i := range out {
		out[i] = netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}).String()
	}
	return strings.Join(out, ",")
}

// manyPrefixes is manyAddresses as /32 prefixes.
func manyPrefixes(n int) string {
	return strings.ReplaceAll(manyAddresses(n), ",", "/32,") + "/32"
}
