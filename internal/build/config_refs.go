package build

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/causeway/causeway/internal/model"
)

// This file resolves what the controller's ConfigMap names in other
// objects: the ConfigMaps of add-headers and proxy-set-headers and the
// Secret of ssl-dh-param. A reference that cannot be used drops the
// setting with a Problem on the controller's ConfigMap; a bad entry of a
// referenced ConfigMap drops that header only.

// ownRequestHeaders are the request headers Causeway sets itself (nginx.conf's
// http level and templates/server.conf.tmpl, "headers", error and mirror
// locations), and the framing headers nginx computes: proxy-set-headers
// may not send a second value of any of them.
var ownRequestHeaders = []string{
	"Host", "Connection", "Upgrade", "X-Real-IP", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Port",
	"X-Forwarded-Proto", "X-Forwarded-Prefix", "X-Request-ID", "X-Original-URI", "X-Code", "X-Format",
	"X-Namespace", "X-Ingress-Name", "X-Service-Name", "X-Service-Port", "Content-Length", "Transfer-Encoding",
}

// ownResponseHeaders are the response headers nginx writes itself:
// add_header would send a second value, never replace nginx's.
var ownResponseHeaders = []string{"Server", "Date", "Connection", "Content-Length", "Transfer-Encoding"}

// configMapObject names a ConfigMap in a Problem.
func configMapObject(cm *corev1.ConfigMap) model.ObjectRef {
	return model.ObjectRef{Kind: "ConfigMap", Namespace: cm.Namespace, Name: cm.Name, UID: string(cm.UID)}
}

// configMapRef names the controller's ConfigMap, present or not (its
// defaults apply without it).
func (b *builder) configMapRef() model.ObjectRef {
	if cm := b.configMaps[b.opts.ConfigMap]; cm != nil {
		return configMapObject(cm)
	}
	ns, name, ok := strings.Cut(b.opts.ConfigMap, "/")
	if !ok || name == "" {
		return model.ObjectRef{Kind: "ConfigMap", Name: "(none: defaults)"}
	}
	return model.ObjectRef{Kind: "ConfigMap", Namespace: ns, Name: name}
}

// resolveConfigRefs reads the objects the controller's ConfigMap cm names.
func (b *builder) resolveConfigRefs(cm *corev1.ConfigMap) {
	c := &b.model.Config
	ref := configMapObject(cm)
	if n := c.AddHeadersFrom; n != nil {
		c.AddHeaders = b.configHeaders(ref, "add-headers", *n, ownResponseHeaders, "nginx writes it itself; add-headers can only add a second value")
	}
	if n := c.ProxySetHeadersFrom; n != nil {
		c.ProxySetHeaders = b.configHeaders(ref, "proxy-set-headers", *n, ownRequestHeaders, "Causeway or nginx sets it itself")
	}
	if n := c.SSLDHParamFrom; n != nil {
		b.model.DHParam = b.dhParam(ref, *n)
	}
	b.model.TicketKeys = b.ticketKeys(ref)
	if c.AllowBackendServerHeader && !c.ServerTokens {
		b.problem(ref, model.ReasonInvalidConfig, false,
			`key "allow-backend-server-header": has no effect while server-tokens is false (as in ingress-nginx): `+
				`clients see nginx's Server header, not the backend's; set server-tokens to true as well`)
	}
}

// configHeaders reads the ConfigMap n that ConfigMap key names: each key a
// header name, each value its value. Names in own are refused with why.
func (b *builder) configHeaders(ref model.ObjectRef, key string, n model.ObjectName, own []string, why string) []model.Header {
	cm := b.configMaps[n.String()]
	if cm == nil {
		b.problem(ref, model.ReasonInvalidConfig, false, "key %q: ConfigMap %s not found; no headers are set from it", key, n)
		return nil
	}
	return readHeaders(cm, func(name string) error {
		if slices.ContainsFunc(own, func(o string) bool { return strings.EqualFold(o, name) }) {
			return fmt.Errorf("header %s is refused: %s", name, why)
		}
		return nil
	}, func(k string, err error) {
		b.problem(ref, model.ReasonInvalidConfig, false, "key %q: ConfigMap %s key %q: %v; that header is left out", key, n, model.Truncate(k), err)
	})
}

// readHeaders reads a ConfigMap of headers, sorted by name: each key must
// be a header name that allowed accepts, each value a header value. A bad
// entry is passed to bad and left out.
func readHeaders(cm *corev1.ConfigMap, allowed func(name string) error, bad func(key string, err error)) []model.Header {
	var out []model.Header
	for _, k := range slices.Sorted(maps.Keys(cm.Data)) {
		name, err := model.ParseHeaderName(k)
		if err == nil {
			err = allowed(name)
		}
		if err == nil {
			var v model.HeaderValue
			if v, err = model.ParseHeaderValue(cm.Data[k]); err == nil {
				out = append(out, model.Header{Name: name, Value: v})
				continue
			}
		}
		bad(k, err)
	}
	return out
}

// dhParam reads and checks the Secret that ssl-dh-param names.
func (b *builder) dhParam(ref model.ObjectRef, n model.ObjectName) *model.DHParam {
	s := b.secretsIn[n.String()]
	if s == nil {
		b.problem(ref, model.ReasonInvalidConfig, false, `key "ssl-dh-param": Secret %s not found; DHE cipher suites stay off`, n)
		return nil
	}
	data, ok := s.Data["dhparam.pem"]
	if !ok {
		b.problem(ref, model.ReasonInvalidConfig, false, `key "ssl-dh-param": Secret %s has no key dhparam.pem; DHE cipher suites stay off`, n)
		return nil
	}
	pemData, err := model.ParseDHParams(data)
	if err != nil {
		b.problem(ref, model.ReasonInvalidConfig, false, `key "ssl-dh-param": Secret %s dhparam.pem: %v; DHE cipher suites stay off`, n, err)
		return nil
	}
	return &model.DHParam{Namespace: n.Namespace, Name: n.Name, PEM: pemData}
}

// ticketKeys resolves the session ticket keys: the Secret that
// ssl-session-ticket-key-secret names (tickets.key, then
// tickets.previous.key), else ssl-session-ticket-key's. A Secret that
// cannot be used leaves nginx its own keys: resumption across replicas
// stops, nothing else does.
func (b *builder) ticketKeys(ref model.ObjectRef) [][]byte {
	c := &b.model.Config
	var keys [][]byte
	switch n := c.SSLSessionTicketKeyFrom; {
	case n != nil:
		if c.SSLSessionTicketKey != nil {
			b.problem(ref, model.ReasonInvalidConfig, false, `key "ssl-session-ticket-key" is ignored: ssl-session-ticket-key-secret names the keys`)
		}
		s := b.secretsIn[n.String()]
		if s == nil {
			b.problem(ref, model.ReasonInvalidConfig, false, `key "ssl-session-ticket-key-secret": Secret %s not found; nginx makes its own ticket keys, which replicas do not share`, n)
			return nil
		}
		for _, k := range []string{"tickets.key", "tickets.previous.key"} {
			data, ok := s.Data[k]
			if !ok {
				if k == "tickets.key" {
					b.problem(ref, model.ReasonInvalidConfig, false, `key "ssl-session-ticket-key-secret": Secret %s has no key tickets.key; nginx makes its own ticket keys, which replicas do not share`, n)
					return nil
				}
				continue
			}
			key, err := model.ParseTicketKey(data)
			if err != nil {
				b.problem(ref, model.ReasonInvalidConfig, false, `key "ssl-session-ticket-key-secret": Secret %s %s: %v; nginx makes its own ticket keys, which replicas do not share`, n, k, err)
				return nil
			}
			keys = append(keys, key)
		}
	case c.SSLSessionTicketKey != nil:
		keys = [][]byte{c.SSLSessionTicketKey}
	default:
		return nil
	}
	if !c.SSLSessionTickets {
		b.problem(ref, model.ReasonInvalidConfig, false, `the session ticket keys have no effect while ssl-session-tickets is false (the default, as in ingress-nginx)`)
	}
	return keys
}

// geoIP2Problems says why use-geoip2's variables stay empty: nginx has no
// geoip2 module, or the controller found no database.
func (b *builder) geoIP2Problems() {
	if !b.model.Config.GeoIP2.Enabled {
		return
	}
	switch {
	case !b.opts.GeoIP2Available:
		b.problem(b.configMapRef(), model.ReasonInvalidConfig, false, `key "use-geoip2": nginx's geoip2 module (ngx_http_geoip2_module.so, `+
			`Debian's libnginx-mod-http-geoip2) is not installed in the nginx modules directory; the $geoip2_* variables are empty`)
	case len(b.opts.GeoIP2Databases) == 0:
		b.problem(b.configMapRef(), model.ReasonInvalidConfig, false, `key "use-geoip2": no database of --maxmind-edition-ids was found in --geoip2-dir `+
			`(mount <edition>.mmdb there; Causeway downloads none); the $geoip2_* variables are empty`)
	}
}
