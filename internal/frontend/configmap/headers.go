package configmap

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// Headers between clients and backends, and the listeners' DH parameters
// and session ticket keys. add-headers, proxy-set-headers, ssl-dh-param
// and ssl-session-ticket-key-secret name other objects; the
// build reads and checks those (build/config_refs.go), and the kube source
// watches them (source/kube/refs.go, ConfigMapKeys and SecretKeys).

// maxHideHeaders bounds hide-headers' list.
const maxHideHeaders = 100

var headerKeys = keyParsers{
	"hide-headers": func(c *model.Config, v string) error {
		if strings.Trim(v, " \t") == "" {
			c.HideHeaders = nil
			return nil
		}
		names, err := parseHeaderNames(v, maxHideHeaders)
		if err == nil {
			c.HideHeaders = names
		}
		return err
	},
	"add-headers":                   objectKey(kindAddHeaders, func(c *model.Config) **model.ObjectName { return &c.AddHeadersFrom }),
	"proxy-set-headers":             objectKey(kindProxySetHeaders, func(c *model.Config) **model.ObjectName { return &c.ProxySetHeadersFrom }),
	"ssl-dh-param":                  objectKey(kindSSLDHParam, func(c *model.Config) **model.ObjectName { return &c.SSLDHParamFrom }),
	"ssl-session-ticket-key-secret": objectKey(kindTicketKey, func(c *model.Config) **model.ObjectName { return &c.SSLSessionTicketKeyFrom }),
	// ingress-nginx's: base64 of the key, never raw bytes.
	"ssl-session-ticket-key": func(c *model.Config, v string) error {
		raw, err := base64.StdEncoding.DecodeString(v)
		if err != nil || len(raw) != 48 && len(raw) != 80 {
			return errors.New("want the base64 of 48 or 80 bytes (openssl rand 80 | base64 -w0)")
		}
		c.SSLSessionTicketKey = raw
		return nil
	},
	"allow-backend-server-header": boolKey(func(c *model.Config) *bool { return &c.AllowBackendServerHeader }),
}

// The kinds of the objects the keys name.
const (
	kindAddHeaders      = "ConfigMap"
	kindProxySetHeaders = "ConfigMap"
	kindSSLDHParam      = "Secret"
	kindTicketKey       = "Secret"
)

// parseHeaderNames parses a comma-separated list of at most max header
// names (model.ParseHeaderNameList) without the "*" of CORS lists.
func parseHeaderNames(v string, max int) ([]string, error) {
	names, err := model.ParseHeaderNameList(v, max)
	if err != nil {
		return nil, err
	}
	if slices.Contains(names, "*") {
		return nil, fmt.Errorf("want header names, not *")
	}
	return names, nil
}

// objectKey parses "namespace/name" of an object of kind; "" names none,
// as in ingress-nginx.
func objectKey(kind string, field func(*model.Config) **model.ObjectName) func(*model.Config, string) error {
	return func(c *model.Config, v string) error {
		if v == "" {
			*field(c) = nil
			return nil
		}
		n, err := model.ParseObjectName(kind, v)
		if err == nil {
			*field(c) = &n
		}
		return err
	}
}

// References lists the objects that the controller's ConfigMap data
// names, which the kube source watches: the ConfigMaps of add-headers and
// proxy-set-headers and the Secret of ssl-dh-param. A value that does not
// parse names nothing (Parse reports it).
func References(data map[string]string) (configMaps, secrets []model.ObjectName) {
	for _, k := range []struct {
		key, kind string
		into      *[]model.ObjectName
	}{
		{"add-headers", kindAddHeaders, &configMaps},
		{"proxy-set-headers", kindProxySetHeaders, &configMaps},
		{"ssl-dh-param", kindSSLDHParam, &secrets},
		{"ssl-session-ticket-key-secret", kindTicketKey, &secrets},
	} {
		if v := data[k.key]; v != "" {
			if n, err := model.ParseObjectName(k.kind, v); err == nil {
				*k.into = append(*k.into, n)
			}
		}
	}
	return configMaps, secrets
}
