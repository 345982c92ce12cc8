package nic

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
)

// TestCachePolicy: a row per field and rule of the cache Policy: NGINX
// Ingress Controller's validation, Causeway's grammars of keys and
// conditions (a key it cannot read invalidates the Policy rather than be
// dropped), and NGINX Plus's purge reported.
func TestCachePolicy(t *testing.T) {
	base := func(change func(*nicv1.Cache)) nicv1.PolicySpec {
		c := &nicv1.Cache{CacheZoneName: "pages", CacheZoneSize: "10m"}
		if change != nil {
			change(c)
		}
		return nicv1.PolicySpec{Cache: c}
	}
	codes := func(vs ...any) []intstr.IntOrString {
		var out []intstr.IntOrString
		for _, v := range vs {
			switch v := v.(type) {
			case int:
				out = append(out, intstr.FromInt32(int32(v)))
			case string:
				out = append(out, intstr.FromString(v))
			}
		}
		return out
	}
	tpl := func(s string) model.Template {
		v, err := model.ParseCacheTemplate(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		name     string
		change   func(*nicv1.Cache)
		err      string
		problems []string
		want     *Cache
	}{
		{name: "the least: a zone, the default key, the backend's headers decide",
			want: &Cache{Zone: model.CacheZone{Name: "pages", Size: 10 << 20}, Cache: model.ResponseCache{Key: model.DefaultCacheKey}}},
		{name: "every field", change: func(c *nicv1.Cache) {
			c.AllowedCodes, c.Time = codes(200, 404), "5m"
			c.AllowedMethods = []string{"GET", "HEAD", "POST"}
			c.OverrideUpstreamCache, c.UseTempPath = true, true
			c.Levels, c.Inactive, c.MaxSize, c.MinFree = "1:2", "1h", "1g", "100m"
			c.Manager = &nicv1.CacheManager{Files: ptr.To(50), Sleep: "50ms", Threshold: "1s"}
			c.CacheKey = "$scheme$host$request_uri|${cookie_session}"
			c.CacheUseStale = []string{"error", "timeout", "updating"}
			c.CacheRevalidate, c.CacheBackgroundUpdate, c.CacheMinUses = true, true, ptr.To(2)
			c.Lock = &nicv1.CacheLock{Enable: true, Timeout: "5s", Age: "10s"}
			c.Conditions = &nicv1.CacheConditions{NoCache: []string{"$cookie_nocache", "$arg_nocache"}, Bypass: []string{"$http_pragma"}}
		}, want: &Cache{
			Zone: model.CacheZone{Name: "pages", Size: 10 << 20, Levels: "1:2", Inactive: time.Hour, MaxSize: 1 << 30, MinFree: 100 << 20,
				UseTempPath: true, ManagerFiles: 50, ManagerSleep: 50 * time.Millisecond, ManagerThreshold: time.Second},
			Cache: model.ResponseCache{Key: tpl("$scheme$host$request_uri|$cookie_session"),
				Valid:   []model.CacheValid{{Codes: []int{200, 404}, Duration: 5 * time.Minute}},
				Methods: []string{"GET", "HEAD", "POST"}, IgnoreHeaders: true, UseStale: []string{"error", "timeout", "updating"},
				Revalidate: true, BackgroundUpdate: true, MinUses: 2, Lock: true, LockTimeout: 5 * time.Second, LockAge: 10 * time.Second,
				NoCache: []model.Template{tpl("$cookie_nocache"), tpl("$arg_nocache")}, Bypass: []model.Template{tpl("$http_pragma")}}}},
		{name: "any status", change: func(c *nicv1.Cache) { c.AllowedCodes, c.Time = codes("any"), "1d" },
			want: &Cache{Zone: model.CacheZone{Name: "pages", Size: 10 << 20},
				Cache: model.ResponseCache{Key: model.DefaultCacheKey, Valid: []model.CacheValid{{Any: true, Duration: 24 * time.Hour}}}}},
		{name: "a time alone: nginx's 200, 301 and 302", change: func(c *nicv1.Cache) { c.Time = "30s" },
			want: &Cache{Zone: model.CacheZone{Name: "pages", Size: 10 << 20},
				Cache: model.ResponseCache{Key: model.DefaultCacheKey, Valid: []model.CacheValid{{Duration: 30 * time.Second}}}}},
		{name: "a purge list needs NGINX Plus", change: func(c *nicv1.Cache) { c.CachePurgeAllow = []string{"10.0.0.1"} },
			problems: []string{"spec.cache.cachePurgeAllow: needs NGINX Plus"}},
		{name: "a zone name with a dash", change: func(c *nicv1.Cache) { c.CacheZoneName = "my-cache" }, err: "cacheZoneName"},
		{name: "a zone name ending with _", change: func(c *nicv1.Cache) { c.CacheZoneName = "cache_" }, err: "cacheZoneName"},
		{name: "a zone name of 65 characters", change: func(c *nicv1.Cache) { c.CacheZoneName = strings.Repeat("a", 65) }, err: "cacheZoneName"},
		{name: "a zone size without a unit", change: func(c *nicv1.Cache) { c.CacheZoneSize = "1024" }, err: "cacheZoneSize"},
		{name: "a zone larger than 1g", change: func(c *nicv1.Cache) { c.CacheZoneSize = "2g" }, err: "want 8k to 1g"},
		{name: "a zone smaller than 8k", change: func(c *nicv1.Cache) { c.CacheZoneSize = "4k" }, err: "want 8k to 1g"},
		{name: "codes without a time", change: func(c *nicv1.Cache) { c.AllowedCodes = codes(200) }, err: "requires spec.cache.time"},
		{name: "any beside a code", change: func(c *nicv1.Cache) { c.AllowedCodes, c.Time = codes("any", 200), "1m" }, err: `just "any"`},
		{name: "a status out of range", change: func(c *nicv1.Cache) { c.AllowedCodes, c.Time = codes(600), "1m" }, err: "100 to 599"},
		{name: "a status twice", change: func(c *nicv1.Cache) { c.AllowedCodes, c.Time = codes(200, 200), "1m" }, err: "listed once"},
		{name: "a time in weeks", change: func(c *nicv1.Cache) { c.Time = "1w" }, err: "spec.cache.time"},
		{name: "a zero time", change: func(c *nicv1.Cache) { c.Time = "0s" }, err: "more than 0"},
		{name: "a method other than GET, HEAD and POST", change: func(c *nicv1.Cache) { c.AllowedMethods = []string{"PUT"} }, err: "allowedMethods[0]"},
		{name: "levels of three characters", change: func(c *nicv1.Cache) { c.Levels = "1:3" }, err: "spec.cache.levels"},
		{name: "a manager sleep in minutes", change: func(c *nicv1.Cache) { c.Manager = &nicv1.CacheManager{Sleep: "1m"} }, err: "manager.sleep"},
		{name: "a key with a variable outside the list", change: func(c *nicv1.Cache) { c.CacheKey = "$request_body" }, err: "cacheKey"},
		{name: "a key with a space", change: func(c *nicv1.Cache) { c.CacheKey = "$host $uri" }, err: "cacheKey"},
		{name: "a key that would end the directive", change: func(c *nicv1.Cache) { c.CacheKey = `$host";proxy_pass http://x;#` }, err: "cacheKey"},
		{name: "an unknown stale case", change: func(c *nicv1.Cache) { c.CacheUseStale = []string{"http_418"} }, err: "cacheUseStale[0]"},
		{name: "off beside another stale case", change: func(c *nicv1.Cache) { c.CacheUseStale = []string{"off", "error"} }, err: "off goes alone"},
		{name: "min uses of 0", change: func(c *nicv1.Cache) { c.CacheMinUses = ptr.To(0) }, err: "cacheMinUses"},
		{name: "a lock timeout without the lock", change: func(c *nicv1.Cache) { c.Lock = &nicv1.CacheLock{Timeout: "5s"} }, err: "require enable"},
		{name: "a condition with a variable outside the list", change: func(c *nicv1.Cache) {
			c.Conditions = &nicv1.CacheConditions{Bypass: []string{"$upstream_addr"}}
		}, err: "conditions.bypass[0]"},
		{name: "17 conditions", change: func(c *nicv1.Cache) {
			c.Conditions = &nicv1.CacheConditions{NoCache: strings.Split(strings.Repeat("$arg_a,", 17)[:7*17-1], ",")}
		}, err: "at most 16"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := translatePolicyCase(t, base(tc.change), tc.err, tc.problems)
			if out == nil || tc.want == nil {
				return
			}
			if out.Kind != "cache" || !reflect.DeepEqual(out.Cache, tc.want) {
				t.Errorf("cache\n%+v\nwant\n%+v", out.Cache, tc.want)
			}
		})
	}
}
