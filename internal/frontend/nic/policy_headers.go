package nic

import (
	"errors"
	"fmt"
	"time"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
)

// The response header policies: cors is the enable-cors annotations'
// model.CORS, hsts the ConfigMap's Strict-Transport-Security for one
// VirtualServer (model.ServerHSTS).

// nicCORSMethods are the methods allowMethods may name, as NGINX Ingress
// Controller allows them.
var nicCORSMethods = map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "DELETE": true, "OPTIONS": true, "PATCH": true}

// Bounds of a cors policy, as the enable-cors annotations'.
const (
	maxCORSItems  = 64
	maxCORSMaxAge = 365 * 24 * 3600
)

func (t *translator) cors(c *nicv1.CORS) (*model.CORS, error) {
	const f = "spec.cors."
	if len(c.AllowOrigin) == 0 {
		return nil, errors.New(f + "allowOrigin is required")
	}
	if len(c.AllowOrigin) > maxCORSItems {
		return nil, fmt.Errorf(f+"allowOrigin lists %d origins, more than %d", len(c.AllowOrigin), maxCORSItems)
	}
	out := &model.CORS{Credentials: c.AllowCredentials != nil && *c.AllowCredentials}
	for i, o := range c.AllowOrigin {
		if o == "*" {
			if len(c.AllowOrigin) > 1 {
				return nil, errors.New(f + "allowOrigin: * allows every origin and must stand alone")
			}
			out.AllowAnyOrigin = true
			continue
		}
		v, err := model.ParseCORSOrigin(o)
		if err != nil {
			return nil, fmt.Errorf(f+"allowOrigin[%d]: %v", i, err)
		}
		out.Origins = append(out.Origins, v)
	}
	if out.AllowAnyOrigin && out.Credentials {
		return nil, errors.New(f + "allowOrigin * may not be used with allowCredentials")
	}
	if len(c.AllowMethods) > 0 {
		if len(c.AllowMethods) > len(nicCORSMethods) {
			return nil, fmt.Errorf(f+"allowMethods lists %d methods, more than %d", len(c.AllowMethods), len(nicCORSMethods))
		}
		for i, m := range c.AllowMethods {
			if !nicCORSMethods[m] {
				return nil, fmt.Errorf(f+"allowMethods[%d] %q: want GET, HEAD, POST, PUT, DELETE, OPTIONS or PATCH", i, model.Truncate(m))
			}
			out.Methods = append(out.Methods, m)
		}
	}
	var err error
	if out.Headers, err = corsHeaderNames(f+"allowHeaders", c.AllowHeaders); err != nil {
		return nil, err
	}
	if out.ExposeHeaders, err = corsHeaderNames(f+"exposeHeaders", c.ExposeHeaders); err != nil {
		return nil, err
	}
	if c.MaxAge != nil {
		if *c.MaxAge < 0 || *c.MaxAge > maxCORSMaxAge {
			return nil, fmt.Errorf(f+"maxAge %d: want 0 to %d seconds", *c.MaxAge, maxCORSMaxAge)
		}
		out.MaxAge = time.Duration(*c.MaxAge) * time.Second
	}
	return out, nil
}

// corsHeaderNames checks a list of header names, or "*" alone.
func corsHeaderNames(field string, names []string) ([]string, error) {
	if len(names) > maxCORSItems {
		return nil, fmt.Errorf("%s lists %d headers, more than %d", field, len(names), maxCORSItems)
	}
	var out []string
	for i, n := range names {
		if n == "*" {
			if len(names) > 1 {
				return nil, fmt.Errorf("%s: * allows every header and must stand alone", field)
			}
			return []string{"*"}, nil
		}
		if _, err := model.ParseHeaderName(n); err != nil {
			return nil, fmt.Errorf("%s[%d]: %v", field, i, err)
		}
		out = append(out, n)
	}
	return out, nil
}

// maxHSTSMaxAge bounds hsts.maxAge: 68 years, as an int32 of seconds.
const maxHSTSMaxAge = 1<<31 - 1

// minPreloadMaxAge is the max-age browsers' preload lists require.
const minPreloadMaxAge = 31536000

func hsts(h *nicv1.HSTS) (*model.ServerHSTS, error) {
	const f = "spec.hsts."
	if h.MaxAge == nil {
		return nil, errors.New(f + "maxAge is required")
	}
	if *h.MaxAge < 0 || *h.MaxAge > maxHSTSMaxAge {
		return nil, fmt.Errorf(f+"maxAge %d: want 0 to %d seconds", *h.MaxAge, maxHSTSMaxAge)
	}
	if h.Preload && (!h.IncludeSubDomains || *h.MaxAge < minPreloadMaxAge) {
		return nil, fmt.Errorf(f+"preload needs includeSubDomains and a maxAge of at least %d (a year)", minPreloadMaxAge)
	}
	return &model.ServerHSTS{
		HSTS:        model.HSTS{Enabled: true, MaxAge: int64(*h.MaxAge), IncludeSubdomains: h.IncludeSubDomains, Preload: h.Preload},
		BehindProxy: h.BehindProxy,
	}, nil
}
