package configmap

import (
	"testing"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/testcorpus"
)

// TestLimitKeys: one row per rule; a bad value keeps the default with a
// Problem.
func TestLimitKeys(t *testing.T) {
	req := func(c model.Config) int64 { return int64(c.LimitReqStatus) }
	conn := func(c model.Config) int64 { return int64(c.LimitConnStatus) }
	rate := func(c model.Config) int64 { return c.LimitRate }
	after := func(c model.Config) int64 { return c.LimitRateAfter }
	for _, r := range []struct {
		key, value string
		ok         bool
		get        func(model.Config) int64
		want       int64
	}{
		{"limit-req-status-code", "429", true, req, 429},
		{"limit-req-status-code", "400", true, req, 400},
		{"limit-req-status-code", "599", true, req, 599},
		{"limit-req-status-code", "399", false, req, 503},
		{"limit-req-status-code", "600", false, req, 503},
		{"limit-req-status-code", "200", false, req, 503},
		{"limit-req-status-code", "429 ", false, req, 503},
		{"limit-req-status-code", "", false, req, 503},
		{"limit-conn-status-code", "429", true, conn, 429},
		{"limit-conn-status-code", "-503", false, conn, 503},
		{"limit-rate", "0", true, rate, 0},
		{"limit-rate", "1024", true, rate, 1024},
		{"limit-rate", "100k", true, rate, 100 << 10},
		{"limit-rate", "1g", true, rate, 1 << 30},
		{"limit-rate", "2g", false, rate, 0},
		{"limit-rate", "1.5k", false, rate, 0},
		{"limit-rate", "-1", false, rate, 0},
		{"limit-rate-after", "1m", true, after, 1 << 20},
		{"limit-rate-after", "10 k", false, after, 0},
	} {
		t.Run(r.key+"="+r.value, func(t *testing.T) {
			cfg, problems := parseOne(r.key, r.value)
			if got := len(problems) == 0; got != r.ok {
				t.Fatalf("accepted = %v (problems %v), want %v", got, problems, r.ok)
			}
			if got := r.get(cfg); got != r.want {
				t.Fatalf("got %d, want %d", got, r.want)
			}
		})
	}
	for key := range limitKeys {
		for _, v := range testcorpus.Injection {
			cfg, problems := parseOne(key, v)
			if len(problems) == 0 || cfg.LimitReqStatus != 503 || cfg.LimitConnStatus != 503 || cfg.LimitRate != 0 || cfg.LimitRateAfter != 0 {
				t.Errorf("%s=%q accepted or changed the config", key, v)
			}
		}
	}
}
