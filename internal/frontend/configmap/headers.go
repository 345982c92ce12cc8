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
// watches them (source/kube/refs.go, through References).

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
	"add-headers":                   objectKey("add-headers", func(c *model.Config) **model.ObjectName { return &c.AddHeadersFrom }),
	"proxy-set-headers":             objectKey("proxy-set-headers", func(c *model.Config) **model.ObjectName { return &c.ProxySetHeadersFrom }),
	"ssl-dh-param":                  objectKey("ssl-dh-param", func(c *model.Config) **model.ObjectName { return &c.SSLDHParamFrom }),
	"ssl-session-ticket-key-secret": objectKey("ssl-session-ticket-key-secret", func(c *model.Config) **model.ObjectName { return &c.SSLSessionTicketKeyFrom }),
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

// referenceKeys are the keys whose value names another object, as
// "namespace/name", by the kind of that object. Every key whose parser
// names an object must be listed (TestReferencesDeclared).
var referenceKeys = []struct{ key, kind string }{
	{"add-headers", model.KindConfigMap},
	{"proxy-set-headers", model.KindConfigMap},
	{"ssl-dh-param", model.KindSecret},
	{"ssl-session-ticket-key-secret", model.KindSecret},
}

// referenceKind is the kind of object a key of referenceKeys names.
func referenceKind(key string) string {
	for _, r := range referenceKeys {
		if r.key == key {
			return r.kind
		}
	}
	panic("configmap: " + key + " is not in referenceKeys")
}

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

// objectKey parses "namespace/name" of an object of the kind that
// referenceKeys gives key; "" names none, as in ingress-nginx.
func objectKey(key string, field func(*model.Config) **model.ObjectName) func(*model.Config, string) error {
	kind := referenceKind(key)
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
// names (referenceKeys), which the kube source watches: the ConfigMaps of
// add-headers and proxy-set-headers, the Secrets of ssl-dh-param and
// ssl-session-ticket-key-secret. A value that does not parse names nothing
// (Parse reports it).
func References(data map[string]string) []model.Reference {
	var out []model.Reference
	for _, r := range referenceKeys {
		if v := data[r.key]; v != "" {
			if n, err := model.ParseObjectName(r.kind, v); err == nil {
				out = append(out, model.Reference{Kind: r.kind, ObjectName: n, From: r.key})
			}
		}
	}
	return out
}
