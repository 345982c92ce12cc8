package annotations

import (
	"reflect"
	"slices"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

// stickyBalance is what affinity: cookie gives with the cookie edited and
// the further annotation names that took effect.
func stickyBalance(edit func(c *model.StickyCookie), set ...string) *BalanceSettings {
	c := &model.StickyCookie{Name: "INGRESSCOOKIE"}
	if edit != nil {
		edit(c)
	}
	return &BalanceSettings{Method: model.Sticky, Sticky: c, Keys: keys(append(set, "affinity")...)}
}

// keys returns the full keys of names, sorted.
func keys(names ...string) []string {
	var out []string
	for _, n := range names {
		out = append(out, key(n))
	}
	slices.Sort(out)
	return out
}

func TestBalance(t *testing.T) {
	cookie := func(kv ...string) map[string]string {
		m := map[string]string{"affinity": "cookie"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name     string
		ann      map[string]string
		want     *BalanceSettings
		problems []problem
	}{
		// load-balance
		{"round_robin", map[string]string{"load-balance": "round_robin"},
			&BalanceSettings{Method: model.RoundRobin, Keys: keys("load-balance")}, nil},
		{"ewma", map[string]string{"load-balance": "ewma"}, &BalanceSettings{Method: model.EWMA, Keys: keys("load-balance")}, nil},
		{"least_conn, Causeway's", map[string]string{"load-balance": "least_conn"},
			&BalanceSettings{Method: model.LeastConn, Keys: keys("load-balance")}, nil},
		{"p2c, Causeway's", map[string]string{"load-balance": "p2c"}, &BalanceSettings{Method: model.P2C, Keys: keys("load-balance")}, nil},
		{"case matters, as in ingress-nginx", map[string]string{"load-balance": "EWMA"}, nil, []problem{invalid("load-balance")}},
		{"chash without upstream-hash-by", map[string]string{"load-balance": "chash"}, nil, []problem{invalid("load-balance")}},
		{"sticky_balanced without affinity", map[string]string{"load-balance": "sticky_balanced"}, nil, []problem{invalid("load-balance")}},
		{"unknown method", map[string]string{"load-balance": "random"}, nil, []problem{invalid("load-balance")}},
		{"trailing space", map[string]string{"load-balance": "ewma "}, nil, []problem{invalid("load-balance")}},

		// upstream-hash-by
		{"hash by request URI", map[string]string{"upstream-hash-by": "$request_uri"},
			&BalanceSettings{Method: model.CHash, HashKey: "$request_uri", Keys: keys("upstream-hash-by")}, nil},
		{"hash by two variables", map[string]string{"upstream-hash-by": "$remote_addr$http_x_user"},
			&BalanceSettings{Method: model.CHash, HashKey: "$remote_addr$http_x_user", Keys: keys("upstream-hash-by")}, nil},
		{"hash with literal text refused", map[string]string{"upstream-hash-by": "${request_uri}-text"}, nil, []problem{invalid("upstream-hash-by")}},
		{"hash on a variable not allowed", map[string]string{"upstream-hash-by": "$ssl_client_cert"}, nil, []problem{invalid("upstream-hash-by")}},
		{"hash by wins over load-balance", map[string]string{"upstream-hash-by": "$host", "load-balance": "ewma"},
			&BalanceSettings{Method: model.CHash, HashKey: "$host", Keys: keys("upstream-hash-by")}, []problem{ignored("load-balance")}},
		{"hash by with load-balance chash agrees", map[string]string{"upstream-hash-by": "$host", "load-balance": "chash"},
			&BalanceSettings{Method: model.CHash, HashKey: "$host", Keys: keys("upstream-hash-by", "load-balance")}, nil},
		{"invalid hash falls back to load-balance", map[string]string{"upstream-hash-by": "$nope", "load-balance": "ewma"},
			&BalanceSettings{Method: model.EWMA, Keys: keys("load-balance")}, []problem{invalid("upstream-hash-by")}},
		{"subset is not supported yet", map[string]string{"upstream-hash-by": "$host", "upstream-hash-by-subset": "true"},
			&BalanceSettings{Method: model.CHash, HashKey: "$host", Keys: keys("upstream-hash-by")}, []problem{ignored("upstream-hash-by-subset")}},

		// affinity
		{"affinity alone", cookie(), stickyBalance(nil), nil},
		{"affinity wins over hash and load-balance", cookie("upstream-hash-by", "$host", "load-balance", "ewma"), stickyBalance(nil),
			[]problem{ignored("upstream-hash-by"), ignored("load-balance")}},
		{"affinity with load-balance sticky_persistent agrees", cookie("load-balance", "sticky_persistent"), stickyBalance(nil, "load-balance"), nil},
		{"affinity other than cookie", map[string]string{"affinity": "ip", "session-cookie-name": "a"}, nil,
			[]problem{invalid("affinity"), ignored("session-cookie-name")}},
		{"cookie options without affinity", map[string]string{"session-cookie-name": "a", "affinity-mode": "persistent"}, nil,
			[]problem{ignored("affinity-mode"), ignored("session-cookie-name")}},
		{"persistent mode", cookie("affinity-mode", "persistent"), stickyBalance(nil, "affinity-mode"), nil},
		{"balanced mode is not supported", cookie("affinity-mode", "balanced"), stickyBalance(nil), []problem{ignored("affinity-mode")}},
		{"unknown mode", cookie("affinity-mode", "Persistent"), stickyBalance(nil), []problem{invalid("affinity-mode")}},
		{"canary behavior is not supported yet", cookie("affinity-canary-behavior", "legacy"), stickyBalance(nil),
			[]problem{ignored("affinity-canary-behavior")}},

		// the cookie
		{"every cookie option", cookie("session-cookie-name", "SERVERID", "session-cookie-path", "/app", "session-cookie-max-age", "172800",
			"session-cookie-samesite", "strict", "session-cookie-secure", "true", "session-cookie-change-on-failure", "true"),
			stickyBalance(func(c *model.StickyCookie) {
				*c = model.StickyCookie{Name: "SERVERID", Path: "/app", MaxAge: 172800, SameSite: "Strict", Secure: true}
			}, "session-cookie-name", "session-cookie-path", "session-cookie-max-age", "session-cookie-samesite",
				"session-cookie-secure", "session-cookie-change-on-failure"), nil},
		{"name of 64 bytes", cookie("session-cookie-name", "a123456789b123456789c123456789d123456789e123456789f123456789g123"),
			stickyBalance(func(c *model.StickyCookie) {
				c.Name = "a123456789b123456789c123456789d123456789e123456789f123456789g123"
			}, "session-cookie-name"), nil},
		{"name of 65 bytes", cookie("session-cookie-name", "a123456789b123456789c123456789d123456789e123456789f123456789g1234"),
			stickyBalance(nil), []problem{invalid("session-cookie-name")}},
		{"name with a colon", cookie("session-cookie-name", "a:b"), stickyBalance(nil), []problem{invalid("session-cookie-name")}},
		{"empty name", cookie("session-cookie-name", ""), stickyBalance(nil), []problem{invalid("session-cookie-name")}},
		{"relative path", cookie("session-cookie-path", "app"), stickyBalance(nil), []problem{invalid("session-cookie-path")}},
		{"path with a semicolon", cookie("session-cookie-path", "/a;Domain=evil.com"), stickyBalance(nil), []problem{invalid("session-cookie-path")}},
		{"max-age ten years", cookie("session-cookie-max-age", "315360000"),
			stickyBalance(func(c *model.StickyCookie) { c.MaxAge = 315360000 }, "session-cookie-max-age"), nil},
		{"max-age over ten years", cookie("session-cookie-max-age", "315360001"), stickyBalance(nil), []problem{invalid("session-cookie-max-age")}},
		{"max-age 0", cookie("session-cookie-max-age", "0"), stickyBalance(nil), []problem{invalid("session-cookie-max-age")}},
		{"max-age negative", cookie("session-cookie-max-age", "-1"), stickyBalance(nil), []problem{invalid("session-cookie-max-age")}},
		{"expires becomes Max-Age", cookie("session-cookie-expires", "3600"),
			stickyBalance(func(c *model.StickyCookie) { c.MaxAge = 3600 }, "session-cookie-expires"), nil},
		{"max-age wins over expires", cookie("session-cookie-expires", "3600", "session-cookie-max-age", "60"),
			stickyBalance(func(c *model.StickyCookie) { c.MaxAge = 60 }, "session-cookie-max-age"), nil},
		{"invalid expires next to max-age is still reported", cookie("session-cookie-expires", "soon", "session-cookie-max-age", "60"),
			stickyBalance(func(c *model.StickyCookie) { c.MaxAge = 60 }, "session-cookie-max-age"), []problem{invalid("session-cookie-expires")}},
		{"invalid max-age falls back to expires", cookie("session-cookie-expires", "3600", "session-cookie-max-age", "1h"),
			stickyBalance(func(c *model.StickyCookie) { c.MaxAge = 3600 }, "session-cookie-expires"), []problem{invalid("session-cookie-max-age")}},
		{"samesite Lax", cookie("session-cookie-samesite", "lax"),
			stickyBalance(func(c *model.StickyCookie) { c.SameSite = "Lax" }, "session-cookie-samesite"), nil},
		{"samesite None implies Secure", cookie("session-cookie-samesite", "None"),
			stickyBalance(func(c *model.StickyCookie) { c.SameSite, c.Secure = "None", true }, "session-cookie-samesite"), nil},
		{"samesite None with secure true", cookie("session-cookie-samesite", "None", "session-cookie-secure", "true"),
			stickyBalance(func(c *model.StickyCookie) { c.SameSite, c.Secure = "None", true }, "session-cookie-samesite", "session-cookie-secure"), nil},
		{"samesite None with secure false is refused", cookie("session-cookie-samesite", "None", "session-cookie-secure", "false"),
			stickyBalance(nil, "session-cookie-secure"), []problem{invalid("session-cookie-samesite")}},
		{"samesite unknown", cookie("session-cookie-samesite", "Relaxed"), stickyBalance(nil), []problem{invalid("session-cookie-samesite")}},
		{"secure invalid", cookie("session-cookie-secure", "yes"), stickyBalance(nil), []problem{invalid("session-cookie-secure")}},
		{"change-on-failure false is not supported", cookie("session-cookie-change-on-failure", "false"), stickyBalance(nil),
			[]problem{ignored("session-cookie-change-on-failure")}},
		{"change-on-failure invalid", cookie("session-cookie-change-on-failure", "sometimes"), stickyBalance(nil),
			[]problem{invalid("session-cookie-change-on-failure")}},
		{"cookie domain is not supported yet", cookie("session-cookie-domain", "a.com"), stickyBalance(nil),
			[]problem{ignored("session-cookie-domain")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, problems := parseNames(tc.ann)
			checkProblems(t, problems, tc.problems)
			checkClosed(t, res, tc.problems)
			if !reflect.DeepEqual(res.Balance, tc.want) {
				t.Fatalf("Balance = %+v (sticky %+v), want %+v (sticky %+v)", res.Balance, sticky(res.Balance), tc.want, sticky(tc.want))
			}
		})
	}
}

func sticky(b *BalanceSettings) *model.StickyCookie {
	if b == nil {
		return nil
	}
	return b.Sticky
}
