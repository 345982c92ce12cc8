package render

import (
	"bytes"
	"fmt"
	"slices"
)

// SSL contexts. nginx builds an OpenSSL context (SSL_CTX) at each load for
// every server that has a certificate, its own or one inherited from the
// http level, whether or not it has settings of its own: with the default
// certificate at the http level, every one of 10,000 hosts had one, and
// creating them was a third of `nginx -t` on Angie (bench/scale's README,
// 2026-11-29 fourth session). A server without a context keeps, after SNI
// picked it, the context of its address's default server, which is what
// its own context held anyway when it has no TLS setting of its own: the
// http level's protocols, ciphers and session cache, and the default
// certificate.
//
// So the default certificate is no longer set at the http level. The
// catch-all (the default server of the main listeners) has it; another
// server gets it for a context of its own (contextCert) unless it shares
// the catch-all's (sharesContext): it listens on exactly the catch-all's
// TLS addresses, the catch-all's context is plain, and the server has no
// TLS setting of its own. A setting of its own in a server without a
// context would be ignored by nginx, so checkSharedContext fails the render
// of a server that shares the catch-all's context and has any.

// plainContext says whether the catch-all def's SSL context is the http
// level's with the default certificate, one another server can use as its
// own: no refusal of handshakes, no client certificates, no own ciphers,
// stapling or certificate, and no certificate by Lua. The Lua module runs
// a context's ssl_certificate_by_lua handler, but looks it up in the
// server SNI chose: a server without one of its own fails the handshake
// ("no ssl_certificate_by_lua* defined in server"). A catch-all gets one
// when it serves the hosts table's certificates (hopFront), which is
// decided after the exact hosts are rendered: shareCatchAll foresees it.
func plainContext(def *serverView) bool {
	return def != nil && def.Cert == "" && def.CertLua == "" && !def.RejectHandshake && def.ClientTLS == nil &&
		def.TLSCiphers == "" && def.PreferServerCiphers == "" && def.StaplingFile == ""
}

// shareCatchAll says whether servers may use the context of the catch-all
// def: it is plain, and will not serve the hosts table's certificates by
// Lua, which it does (hop.go) when some shape of exact hosts is shared and
// the hosts table is on. mayHop is that foresight: with lua and the table
// on, whether some unscoped shape has more than one host (known once the
// servers are planned; before, assume so).
func shareCatchAll(def *serverView, mayHop bool) bool {
	return plainContext(def) && !mayHop
}

// ownContext says whether v has a TLS setting nginx applies through a
// server's own SSL context.
func ownContext(v *serverView) bool {
	return v.Cert != "" || v.CertLua != "" || v.StaplingFile != "" || v.RejectHandshake ||
		v.ClientTLS != nil || v.TLSCiphers != "" || v.PreferServerCiphers != ""
}

// listensTLS says whether v has a TLS listener.
func listensTLS(v *serverView) bool {
	return v.ListenHTTPS != "" || len(v.ListenHTTPSMore) > 0 || v.AuthLoop != nil
}

// sharesContext says whether v, with a TLS listener, may use the context
// of the catch-all def instead of one of its own; share is shareCatchAll's
// answer for def.
func sharesContext(v, def *serverView, share bool) bool {
	return share && v != def && !v.DefaultServer && !ownContext(v) && v.AuthLoop == nil &&
		v.ListenHTTPS == def.ListenHTTPS && slices.Equal(v.ListenHTTPSMore, def.ListenHTTPSMore)
}

// setContextCert gives v the default certificate, defaultCert, where it
// needs an SSL context of its own and has no certificate of its own.
func setContextCert(v, def *serverView, share bool, defaultCert string) {
	v.contextCert = ""
	if v.Cert == "" && listensTLS(v) && !sharesContext(v, def, share) {
		v.contextCert = defaultCert
	}
}

// ContextCert is the default certificate's path (ending in the always
// empty variable), for a server that needs an SSL context and has no
// certificate of its own; "" for a server with one, or none.
func (v *serverView) ContextCert() string { return v.contextCert }

// serverLevelSSL is the start of a server-level ssl_ directive in a
// rendered server file (locations are indented further).
var serverLevelSSL = []byte("\n    ssl_")

// checkSharedContext fails a server that shares the catch-all's SSL context
// (it has a TLS listener but no certificate line) while its text sets an
// ssl_ directive, which nginx would ignore: a setting of its own that is
// not honoured, perhaps a client certificate check, fails the render
// rather than opening the host.
func checkSharedContext(v *serverView, text []byte) error {
	if v.Cert != "" || v.contextCert != "" || !listensTLS(v) {
		return nil
	}
	// The maps before the first server block name hosts and origins.
	if i := bytes.Index(text, []byte("\nserver {")); i >= 0 && bytes.Contains(text[i:], serverLevelSSL) {
		return fmt.Errorf("server %v: a TLS setting of its own without an SSL context of its own", v.ServerNames)
	}
	return nil
}

// executeServer renders the server file of v, whose catch-all is def.
func (rc *renderCtx) executeServer(v, def *serverView) ([]byte, error) {
	setContextCert(v, def, rc.shareCatchAll, rc.defaultCert)
	out, err := execute("server.conf.tmpl", v)
	if err != nil {
		return nil, err
	}
	if err := checkSharedContext(v, out); err != nil {
		return nil, err
	}
	return out, nil
}

// planCatchAll plans the catch-all of rc's model, the server of no host
// on the main listeners, and gives its index in m.Servers; nil and -1 when
// the model has none.
func planCatchAll(rc *renderCtx) (*serverView, int, error) {
	for i, srv := range rc.m.Servers {
		if srv.Host != "" || srv.Scope != "" || srv.Listeners != nil {
			continue
		}
		v, err := planServer(rc, srv)
		if err != nil {
			return nil, -1, fmt.Errorf("render server %q: %w", srv.Host, err)
		}
		if v == nil {
			return nil, -1, nil
		}
		return v, i, nil
	}
	return nil, -1, nil
}
