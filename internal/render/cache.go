package render

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/causeway/causeway/internal/model"
)

// A cache Policy (model.ResponseCache) is nginx's proxy_cache: each zone
// a proxy_cache_path at the http level, under the state directory's tmp/
// (which nginx's master creates for the workers' user), and the using
// locations' proxy_cache lines. Every value printed went through a
// grammar of package model or a generator here.

// cacheHeaders are the backend's headers about caching that
// overrideUpstreamCache ignores, as NGINX Ingress Controller lists them.
var cacheHeaders = []string{"Cache-Control", "Expires", "Set-Cookie", "Vary", "X-Accel-Expires"}

// cacheZoneView is one proxy_cache_path line's parameters, printed.
type cacheZoneView struct {
	Path, Name, Size string
	// Params are the optional name=value parameters, in nginx's order.
	Params []string
}

// cacheView is a location's proxy_cache lines, printed.
type cacheView struct {
	Zone, Key   string
	Valid       []string
	Methods     string
	UseStale    string
	Revalidate  bool
	Background  bool
	MinUses     int
	Lock        bool
	LockTimeout string
	LockAge     string
	NoCache     string
	Bypass      string
}

// planCacheZones prints the model's cache zones.
func (v *mainView) planCacheZones(m *model.Model) error {
	for _, z := range m.CacheZones {
		if err := z.Validate(); err != nil {
			return err
		}
		p, err := v.TempDir("cache-" + z.Name)
		if err != nil {
			return err
		}
		zv := cacheZoneView{Path: p, Name: z.Name}
		if zv.Size, err = nginxSize(z.Size); err != nil {
			return err
		}
		if z.Levels != "" {
			zv.Params = append(zv.Params, "levels="+z.Levels)
		}
		for _, s := range []struct {
			name string
			v    model.Size
		}{{"max_size", z.MaxSize}, {"min_free", z.MinFree}} {
			if s.v > 0 {
				q, err := nginxSize(s.v)
				if err != nil {
					return err
				}
				zv.Params = append(zv.Params, s.name+"="+q)
			}
		}
		if z.ManagerFiles > 0 {
			zv.Params = append(zv.Params, "manager_files="+strconv.Itoa(z.ManagerFiles))
		}
		for _, s := range []struct {
			name string
			v    time.Duration
		}{{"inactive", z.Inactive}, {"manager_sleep", z.ManagerSleep}, {"manager_threshold", z.ManagerThreshold}} {
			if s.v > 0 {
				q, err := nginxTime(s.v)
				if err != nil {
					return err
				}
				zv.Params = append(zv.Params, s.name+"="+q)
			}
		}
		zv.Params = append(zv.Params, "use_temp_path="+onoff(z.UseTempPath))
		v.CacheZones = append(v.CacheZones, zv)
	}
	return nil
}

// planCache prints a location's cache; it turns proxy_buffering on, which
// nginx's cache needs (the http level turns it off, as ingress-nginx
// does).
func planCache(v *policyView, c *model.ResponseCache) error {
	if c == nil {
		return nil
	}
	if !model.ValidCacheZoneName(c.Zone) {
		return fmt.Errorf("cache zone %q", c.Zone)
	}
	cv := &cacheView{Zone: c.Zone, Revalidate: c.Revalidate, Background: c.BackgroundUpdate, MinUses: c.MinUses, Lock: c.Lock}
	if c.IgnoreHeaders {
		// One proxy_ignore_headers line with the proxy action's own
		// (planProxyHeaders ran first): nginx refuses a second.
		for _, h := range cacheHeaders {
			if q := `"` + h + `"`; !slices.ContainsFunc(v.IgnoreHeaders, func(s string) bool { return strings.EqualFold(s, q) }) {
				v.IgnoreHeaders = append(v.IgnoreHeaders, q)
			}
		}
	}
	var err error
	if cv.Key, err = quoteTemplate(c.Key); err != nil {
		return err
	}
	for _, val := range c.Valid {
		t, err := nginxTime(val.Duration)
		if err != nil || t == "" {
			return fmt.Errorf("cache time %s", val.Duration)
		}
		var codes []string
		if val.Any {
			codes = []string{"any"}
		}
		for _, code := range val.Codes {
			if code < 100 || code > 599 {
				return fmt.Errorf("cache status %d", code)
			}
			codes = append(codes, strconv.Itoa(code))
		}
		cv.Valid = append(cv.Valid, strings.Join(append(codes, t), " "))
	}
	for _, m := range c.Methods {
		if m != "GET" && m != "HEAD" && m != "POST" {
			return fmt.Errorf("cache method %q", m)
		}
	}
	cv.Methods = strings.Join(c.Methods, " ")
	for _, s := range c.UseStale {
		if !model.CacheUseStaleCases[s] {
			return fmt.Errorf("cache use stale %q", s)
		}
	}
	cv.UseStale = strings.Join(c.UseStale, " ")
	if cv.LockTimeout, err = nginxTime(c.LockTimeout); err != nil {
		return err
	}
	if cv.LockAge, err = nginxTime(c.LockAge); err != nil {
		return err
	}
	if cv.NoCache, err = quoteTemplates(c.NoCache); err != nil {
		return err
	}
	if cv.Bypass, err = quoteTemplates(c.Bypass); err != nil {
		return err
	}
	v.Cache = cv
	on := true
	v.ResponseBuffering = &on
	return nil
}

// quoteTemplates prints templates as one directive's arguments.
func quoteTemplates(ts []model.Template) (string, error) {
	out := make([]string, len(ts))
	for i, t := range ts {
		q, err := quoteTemplate(t)
		if err != nil {
			return "", err
		}
		out[i] = q
	}
	return strings.Join(out, " "), nil
}
