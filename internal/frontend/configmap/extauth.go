package configmap

import (
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// Global external authentication (model.Config.GlobalAuth): the
// global-auth-* keys read with the grammars of the auth-* annotations.
// global-auth-url and the settings the service's decision depends on
// (method, response headers) fail closed; the others fall back to their
// defaults. finishGlobalAuth drops what applies without global-auth-url.

var extAuthKeys = keyParsers{
	"global-auth-url": func(c *model.Config, v string) (err error) {
		if strings.TrimSpace(v) == "" {
			return nil
		}
		a := globalAuth(c)
		if a.URL, a.Host, err = model.ParseAuthURL(v); err != nil {
			return failClosed{err}
		}
		return nil
	},
	"global-auth-method": func(c *model.Config, v string) (err error) {
		if v == "" {
			return nil
		}
		if globalAuth(c).Method, err = model.ParseAuthMethod(v); err != nil {
			return failClosed{err}
		}
		return nil
	},
	"global-auth-response-headers": func(c *model.Config, v string) (err error) {
		if strings.TrimSpace(v) == "" {
			return nil
		}
		if globalAuth(c).ResponseHeaders, err = model.ParseAuthResponseHeaders(v); err != nil {
			return failClosed{err}
		}
		return nil
	},
	"global-auth-signin": func(c *model.Config, v string) (err error) {
		if v == "" {
			return nil
		}
		globalAuth(c).SigninURL, err = model.ParseSigninURL(v)
		return err
	},
	"global-auth-signin-redirect-param": func(c *model.Config, v string) (err error) {
		globalAuth(c).RedirectParam, err = model.ParseQueryParam(v)
		return err
	},
	"global-auth-request-redirect": func(c *model.Config, v string) (err error) {
		globalAuth(c).RequestRedirect, err = model.ParseHeaderValue(v)
		return err
	},
	"global-auth-always-set-cookie": func(c *model.Config, v string) (err error) {
		globalAuth(c).AlwaysSetCookie, err = model.ParseBool(v)
		return err
	},
	"global-auth-cache-key": func(c *model.Config, v string) (err error) {
		if v == "" {
			return nil
		}
		authCache(c).Key, err = model.ParseAuthCacheKey(v)
		return err
	},
	"global-auth-cache-duration": func(c *model.Config, v string) (err error) {
		authCache(c).Valid, err = model.ParseAuthCacheDuration(v)
		return err
	},
	"no-auth-locations": func(c *model.Config, v string) (err error) {
		c.NoAuthLocations, err = model.ParseNoAuthLocations(v)
		return err
	},
}

// globalAuth returns c.GlobalAuth, a copy made on first use so that
// Parse's trial copies of the Config never share it.
func globalAuth(c *model.Config) *model.ExternalAuth {
	a := &model.ExternalAuth{RedirectParam: "rd"}
	if c.GlobalAuth != nil {
		*a = *c.GlobalAuth
	}
	c.GlobalAuth = a
	return a
}

func authCache(c *model.Config) *model.AuthCache {
	a := globalAuth(c)
	ca := &model.AuthCache{}
	if a.Cache != nil {
		*ca = *a.Cache
	}
	a.Cache = ca
	return ca
}

// finishGlobalAuth drops the global-auth settings when global-auth-url is
// not set (or failed: the paths are closed anyway), and the cache without
// a key, and gives a cache key its default durations.
func finishGlobalAuth(c *model.Config) {
	a := c.GlobalAuth
	if a == nil {
		return
	}
	if a.URL == "" {
		c.GlobalAuth = nil
		return
	}
	switch {
	case a.Cache == nil:
	case a.Cache.Key == nil:
		a.Cache = nil
	case a.Cache.Valid == nil:
		a.Cache.Valid = model.DefaultAuthCacheValid
	}
}
