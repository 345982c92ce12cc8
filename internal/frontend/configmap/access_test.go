package configmap

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/testcorpus"
)

func TestAccessKeys(t *testing.T) {
	p := func(s ...string) []netip.Prefix {
		var out []netip.Prefix
		for _, x := range s {
			out = append(out, netip.MustParsePrefix(x))
		}
		return out
	}
	type want struct {
		allow, deny, block []netip.Prefix
		closed             []string
	}
	for _, tc := range []struct {
		name string
		data map[string]string
		want want
	}{
		// good
		{"allow list", map[string]string{"whitelist-source-range": "10.0.0.0/8, 192.0.2.1"}, want{allow: p("10.0.0.0/8", "192.0.2.1/32")}},
		{"deny list", map[string]string{"denylist-source-range": "2001:db8::/32"}, want{deny: p("2001:db8::/32")}},
		{"block list", map[string]string{"block-cidrs": "198.51.100.0/24,203.0.113.5"}, want{block: p("198.51.100.0/24", "203.0.113.5/32")}},
		// edge
		{"empty is no list", map[string]string{"whitelist-source-range": "", "block-cidrs": " "}, want{}},
		{"duplicates dropped", map[string]string{"block-cidrs": "10.0.0.1,10.0.0.1/32"}, want{block: p("10.0.0.1/32")}},
		// bad: closed, never open
		{"host bits", map[string]string{"whitelist-source-range": "10.0.0.1/8"}, want{closed: []string{"whitelist-source-range"}}},
		{"empty item", map[string]string{"denylist-source-range": "10.0.0.0/8,,"}, want{closed: []string{"denylist-source-range"}}},
		{"hostname", map[string]string{"block-cidrs": "evil.example"}, want{closed: []string{"block-cidrs"}}},
		{"too many", map[string]string{"block-cidrs": manyCIDRs(1001)}, want{closed: []string{"block-cidrs"}}},
		{"one bad, one good", map[string]string{"block-cidrs": "bad", "whitelist-source-range": "10.0.0.0/8"},
			want{allow: p("10.0.0.0/8"), closed: []string{"block-cidrs"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, problems := Parse(&corev1.ConfigMap{Data: tc.data})
			got := want{cfg.DefaultAccess.Allow, cfg.DefaultAccess.Deny, cfg.BlockCIDRs, cfg.FailClosed}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			if len(problems) != len(tc.want.closed) {
				t.Fatalf("problems = %v", problems)
			}
			for i, pr := range problems {
				if pr.Reason != model.ReasonInvalidConfig || !strings.Contains(pr.Message, `key "`+tc.want.closed[i]+`"`) || !strings.Contains(pr.Message, "answers 503") {
					t.Fatalf("problem %v", pr)
				}
			}
		})
	}
}

func manyCIDRs(n int) string {
	var b []string
	for i := 0; i < n; i++ {
		b = append(b, netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}).String())
	}
	return strings.Join(b, ",")
}

func TestAccessKeysInjection(t *testing.T) {
	for _, v := range testcorpus.Injection {
		for _, k := range []string{"whitelist-source-range", "denylist-source-range", "block-cidrs"} {
			cfg, problems := Parse(&corev1.ConfigMap{Data: map[string]string{k: "10.0.0.0/8," + v}})
			if len(cfg.FailClosed) != 1 || len(problems) != 1 {
				t.Fatalf("%s %q: FailClosed %v, problems %v", k, v, cfg.FailClosed, problems)
			}
		}
	}
}

func TestBlockListKeys(t *testing.T) {
	for _, tc := range []struct {
		data    map[string]string
		ua, ref []model.HeaderMatch
		closed  []string
	}{
		{data: map[string]string{"block-user-agents": "curl, ~*bot"}, ua: []model.HeaderMatch{{Value: "curl"}, {Value: "bot", Regex: true, Fold: true}}},
		{data: map[string]string{"block-referers": "~^https://spam\\.example/"}, ref: []model.HeaderMatch{{Value: `^https://spam\.example/`, Regex: true}}},
		{data: map[string]string{"block-user-agents": " ", "block-referers": ""}},
		{data: map[string]string{"block-user-agents": "default"}, closed: []string{"block-user-agents"}},
		{data: map[string]string{"block-referers": "~(?i)x", "block-user-agents": "curl"}, ua: []model.HeaderMatch{{Value: "curl"}}, closed: []string{"block-referers"}},
	} {
		cfg, problems := Parse(&corev1.ConfigMap{Data: tc.data})
		if !reflect.DeepEqual(cfg.BlockUserAgents, tc.ua) || !reflect.DeepEqual(cfg.BlockReferers, tc.ref) || !reflect.DeepEqual(cfg.FailClosed, tc.closed) {
			t.Errorf("%v: got %+v %+v closed %v", tc.data, cfg.BlockUserAgents, cfg.BlockReferers, cfg.FailClosed)
		}
		if len(problems) != len(tc.closed) {
			t.Errorf("%v: problems %v", tc.data, problems)
		}
	}
	for _, v := range testcorpus.Injection {
		cfg, _ := Parse(&corev1.ConfigMap{Data: map[string]string{"block-user-agents": "~" + v}})
		for _, m := range cfg.BlockUserAgents {
			if strings.ContainsAny(m.Value, "$\"\n\r") {
				t.Errorf("%q accepted", v)
			}
		}
	}
}
