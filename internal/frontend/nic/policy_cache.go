package nic

import (
	"errors"
	"fmt"
	"regexp"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
)

// Cache is a cache Policy: the zone it asks for, named as written (the
// builder makes the name unique per VirtualServer or VirtualServerRoute,
// as NGINX Ingress Controller does), and what a location does with it.
type Cache struct {
	Zone  model.CacheZone
	Cache model.ResponseCache
}

// NGINX Ingress Controller's grammars of a zone's name and sizes.
var (
	cacheZoneNameRe = regexp.MustCompile(`^[a-z][a-zA-Z0-9_]*[a-zA-Z0-9]$|^[a-z]$`)
	cacheSizeRe     = regexp.MustCompile(`^[0-9]+[kmgKMG]$`)
)

// maxCacheZoneName bounds a zone's name as written.
const maxCacheZoneName = 64

// cache checks a cache Policy with NGINX Ingress Controller's rules and
// Causeway's grammars. A key or condition Causeway cannot read makes the
// Policy invalid rather than be left out: a cache without the part of the
// key that tells users apart would serve one user's response to another.
func (t *translator) cache(c *nicv1.Cache) (*Cache, error) {
	out := &Cache{Cache: model.ResponseCache{Key: model.DefaultCacheKey}}
	z := &out.Zone
	if !cacheZoneNameRe.MatchString(c.CacheZoneName) || len(c.CacheZoneName) > maxCacheZoneName {
		return nil, fmt.Errorf("spec.cache.cacheZoneName %q: want a lower-case letter, then at most %d letters, digits and _, ending with a letter or digit",
			model.Truncate(c.CacheZoneName), maxCacheZoneName-1)
	}
	z.Name = c.CacheZoneName
	size, err := cacheSize("cacheZoneSize", c.CacheZoneSize)
	if err != nil {
		return nil, err
	}
	if size < model.MinCacheZoneSize || size > model.MaxCacheZoneSize {
		return nil, fmt.Errorf("spec.cache.cacheZoneSize %s: want %s to %s", c.CacheZoneSize,
			model.FormatSize(int64(model.MinCacheZoneSize)), model.FormatSize(int64(model.MaxCacheZoneSize)))
	}
	z.Size = size
	if c.Levels != "" {
		if z.Levels, err = model.ParseCacheLevels(c.Levels); err != nil {
			return nil, fmt.Errorf("spec.cache.levels %v", err)
		}
	}
	if c.Inactive != "" {
		if z.Inactive, err = model.ParseCacheTime(c.Inactive); err != nil {
			return nil, fmt.Errorf("spec.cache.inactive %v", err)
		}
	}
	if c.MaxSize != "" {
		if z.MaxSize, err = cacheSize("maxSize", c.MaxSize); err != nil {
			return nil, err
		}
	}
	if c.MinFree != "" {
		if z.MinFree, err = cacheSize("minFree", c.MinFree); err != nil {
			return nil, err
		}
	}
	z.UseTempPath = c.UseTempPath
	if m := c.Manager; m != nil {
		if m.Files != nil {
			if *m.Files < 1 || *m.Files > 1_000_000 {
				return nil, fmt.Errorf("spec.cache.manager.files %d: want 1 to 1000000", *m.Files)
			}
			z.ManagerFiles = *m.Files
		}
		for _, f := range []struct {
			name, v string
			dst     *time.Duration
		}{{"sleep", m.Sleep, &z.ManagerSleep}, {"threshold", m.Threshold, &z.ManagerThreshold}} {
			if f.v != "" {
				if *f.dst, err = model.ParseCacheManagerTime(f.v); err != nil {
					return nil, fmt.Errorf("spec.cache.manager.%s %v", f.name, err)
				}
			}
		}
	}
	if err := t.cacheUse(c, &out.Cache); err != nil {
		return nil, err
	}
	return out, nil
}

// cacheUse checks what a location does with the zone.
func (t *translator) cacheUse(c *nicv1.Cache, r *model.ResponseCache) error {
	var err error
	if len(c.AllowedCodes) > 0 && c.Time == "" {
		return errors.New("spec.cache.allowedCodes requires spec.cache.time")
	}
	if c.Time != "" {
		v := model.CacheValid{}
		if v.Duration, err = model.ParseCacheTime(c.Time); err != nil {
			return fmt.Errorf("spec.cache.time %v", err)
		}
		seen := map[int]bool{}
		for i, code := range c.AllowedCodes {
			switch {
			case code.Type == intstr.String && code.StrVal == "any" && len(c.AllowedCodes) == 1:
				v.Any = true
			case code.Type == intstr.String:
				return fmt.Errorf(`spec.cache.allowedCodes[%d] %q: want a status code, or just "any"`, i, model.Truncate(code.StrVal))
			case code.IntVal < 100 || code.IntVal > 599 || seen[int(code.IntVal)]:
				return fmt.Errorf("spec.cache.allowedCodes[%d] %d: want a status code from 100 to 599, listed once", i, code.IntVal)
			default:
				seen[int(code.IntVal)] = true
				v.Codes = append(v.Codes, int(code.IntVal))
			}
		}
		r.Valid = []model.CacheValid{v}
	}
	seen := map[string]bool{}
	for i, m := range c.AllowedMethods {
		if (m != "GET" && m != "HEAD" && m != "POST") || seen[m] {
			return fmt.Errorf("spec.cache.allowedMethods[%d] %q: want GET, HEAD or POST, each once", i, model.Truncate(m))
		}
		seen[m] = true
		r.Methods = append(r.Methods, m)
	}
	if len(c.CachePurgeAllow) > 0 {
		t.plus("spec.cache.cachePurgeAllow")
	}
	r.IgnoreHeaders = c.OverrideUpstreamCache
	if c.CacheKey != "" {
		if r.Key, err = model.ParseCacheTemplate(c.CacheKey); err != nil {
			return fmt.Errorf("spec.cache.cacheKey %q: %v", model.Truncate(c.CacheKey), err)
		}
	}
	seen = map[string]bool{}
	for i, s := range c.CacheUseStale {
		if !model.CacheUseStaleCases[s] || seen[s] {
			return fmt.Errorf("spec.cache.cacheUseStale[%d] %q: want one of error, timeout, invalid_header, updating, http_500, http_502, "+
				"http_503, http_504, http_403, http_404, http_429 and off, each once", i, model.Truncate(s))
		}
		seen[s] = true
		r.UseStale = append(r.UseStale, s)
	}
	if seen["off"] && len(r.UseStale) > 1 {
		return errors.New("spec.cache.cacheUseStale: off goes alone")
	}
	r.Revalidate, r.BackgroundUpdate = c.CacheRevalidate, c.CacheBackgroundUpdate
	if c.CacheMinUses != nil {
		if *c.CacheMinUses < 1 || *c.CacheMinUses > 1_000_000 {
			return fmt.Errorf("spec.cache.cacheMinUses %d: want 1 to 1000000", *c.CacheMinUses)
		}
		r.MinUses = *c.CacheMinUses
	}
	if l := c.Lock; l != nil {
		if !l.Enable && (l.Timeout != "" || l.Age != "") {
			return errors.New("spec.cache.lock: timeout and age require enable")
		}
		r.Lock = l.Enable
		for _, f := range []struct {
			name, v string
			dst     *time.Duration
		}{{"timeout", l.Timeout, &r.LockTimeout}, {"age", l.Age, &r.LockAge}} {
			if f.v != "" {
				if *f.dst, err = model.ParseCacheTime(f.v); err != nil {
					return fmt.Errorf("spec.cache.lock.%s %v", f.name, err)
				}
			}
		}
	}
	if cond := c.Conditions; cond != nil {
		for _, f := range []struct {
			name string
			in   []string
			dst  *[]model.Template
		}{{"noCache", cond.NoCache, &r.NoCache}, {"bypass", cond.Bypass, &r.Bypass}} {
			if len(f.in) > model.MaxCacheConditions {
				return fmt.Errorf("spec.cache.conditions.%s: at most %d values", f.name, model.MaxCacheConditions)
			}
			for i, s := range f.in {
				v, err := model.ParseCacheTemplate(s)
				if err != nil {
					return fmt.Errorf("spec.cache.conditions.%s[%d] %q: %v", f.name, i, model.Truncate(s), err)
				}
				*f.dst = append(*f.dst, v)
			}
		}
	}
	return nil
}

// cacheSize reads a size as NGINX Ingress Controller writes it: digits
// and a unit k, m or g.
func cacheSize(field, s string) (model.Size, error) {
	if !cacheSizeRe.MatchString(s) {
		return 0, fmt.Errorf("spec.cache.%s %q: want a number followed by k, m or g", field, model.Truncate(s))
	}
	n, err := model.ParseSize(s)
	if err != nil {
		return 0, fmt.Errorf("spec.cache.%s %q: %v", field, s, err)
	}
	return model.Size(n), nil
}
