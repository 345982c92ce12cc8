package configmap

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// Listener TLS, HSTS and HTTP/2: the ssl-*, hsts* and http2 keys of the
// HTTPS listeners.

const (
	// maxTLSProtocols bounds ssl-protocols as written, duplicates
	// included.
	maxTLSProtocols = 8
	// maxECDHCurves bounds ssl-ecdh-curve's list.
	maxECDHCurves = 16
	// Session cache bounds: nginx refuses a shared zone of fewer than 8
	// pages, and a cache above 1g is a typo.
	minSessionCache = 64 << 10
	maxSessionCache = 1 << 30
	// maxHSTSAge is about 68 years; browsers cap far lower.
	maxHSTSAge = 1<<31 - 1
)

var listenerTLSKeys = keyParsers{
	"use-http2": func(c *model.Config, v string) (err error) {
		c.HTTP2, err = model.ParseBool(v)
		return err
	},
	"http2-max-concurrent-streams": func(c *model.Config, v string) (err error) {
		c.HTTP2MaxConcurrentStreams, err = parseIntIn(v, 1, 65536)
		return err
	},
	"ssl-protocols": func(c *model.Config, v string) (err error) {
		c.SSLProtocols, err = model.ParseTokenList(v, model.TLSProtocols, maxTLSProtocols)
		return err
	},
	"ssl-ciphers": func(c *model.Config, v string) (err error) {
		c.SSLCiphers, err = model.ParseServerCiphers(v)
		return err
	},
	"ssl-ecdh-curve": func(c *model.Config, v string) (err error) {
		c.SSLECDHCurves, err = parseCurves(v)
		return err
	},
	"ssl-session-cache": func(c *model.Config, v string) (err error) {
		c.SSLSessionCache, err = model.ParseBool(v)
		return err
	},
	"ssl-session-cache-size": func(c *model.Config, v string) error {
		n, err := model.ParseSize(v)
		if err != nil {
			return err
		}
		if n < minSessionCache || n > maxSessionCache {
			return fmt.Errorf("want a size from 64k to 1g")
		}
		c.SSLSessionCacheSize = n
		return nil
	},
	"ssl-session-timeout": func(c *model.Config, v string) error {
		d, err := model.ParseTimeout(v)
		if err != nil {
			return err
		}
		c.SSLSessionTimeout = d
		return nil
	},
	"enable-ocsp": func(c *model.Config, v string) (err error) {
		c.EnableOCSP, err = model.ParseBool(v)
		return err
	},
	"ssl-reject-handshake": func(c *model.Config, v string) (err error) {
		c.SSLRejectHandshake, err = model.ParseBool(v)
		return err
	},
	"ssl-session-tickets": func(c *model.Config, v string) (err error) {
		c.SSLSessionTickets, err = model.ParseBool(v)
		return err
	},
	"hsts": func(c *model.Config, v string) (err error) {
		c.HSTS.Enabled, err = model.ParseBool(v)
		return err
	},
	"hsts-include-subdomains": func(c *model.Config, v string) (err error) {
		c.HSTS.IncludeSubdomains, err = model.ParseBool(v)
		return err
	},
	"hsts-preload": func(c *model.Config, v string) (err error) {
		c.HSTS.Preload, err = model.ParseBool(v)
		return err
	},
	"hsts-max-age": func(c *model.Config, v string) error {
		if v == "" || len(v) > 10 || strings.Trim(v, "0123456789") != "" {
			return errors.New("want a whole number of seconds such as 31536000")
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n > maxHSTSAge {
			return fmt.Errorf("want a whole number of seconds from 0 to %d", maxHSTSAge)
		}
		c.HSTS.MaxAge = n
		return nil
	},
}

// parseCurves reads ssl-ecdh-curve: "auto" (nil: OpenSSL's choice), or
// group names from model.ECDHCurves separated by ':' as OpenSSL writes
// them. Names match exactly, as OpenSSL's do.
func parseCurves(v string) ([]string, error) {
	if v == "auto" {
		return nil, nil
	}
	parts := strings.Split(v, ":")
	if len(parts) > maxECDHCurves {
		return nil, fmt.Errorf("want at most %d curves", maxECDHCurves)
	}
	var out []string
	for _, p := range parts {
		if !model.ECDHCurves[p] {
			return nil, fmt.Errorf("%q is not auto or a list such as X25519:prime256v1:secp384r1 of %s",
				model.Truncate(p), strings.Join(curveNames(), ", "))
		}
		for _, q := range out {
			if q == p {
				return nil, fmt.Errorf("curve %s is listed twice", p)
			}
		}
		out = append(out, p)
	}
	return out, nil
}

func curveNames() []string {
	names := make([]string, 0, len(model.ECDHCurves))
	for n := range model.ECDHCurves {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
