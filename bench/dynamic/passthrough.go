package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Section (m): what TLS passthrough costs the hosts nginx still
// terminates. With --enable-tls-passthrough the HTTPS port is nginx's
// stream module reading the server name (ssl_preread), which hands every
// other connection to the HTTPS listener over a unix socket with a PROXY
// header. Two controllers serve the same manifests (a TLS Ingress, and an
// ssl-passthrough Ingress for another host), one with passthrough on; the
// load is full TLS handshakes to the terminated host on each.
const passthroughHost = "pt.bench.test"

// runPassthrough runs section (m) once per -tls-keys certificate type.
func runPassthrough(ctx context.Context, e *env, c *config, rep *report) error {
	for _, k := range c.keys() {
		if err := runPassthroughKey(ctx, e, c, rep, k); err != nil {
			return fmt.Errorf("%s certificate: %w", k, err)
		}
	}
	return nil
}

// runPassthroughKey runs section (m) with a certificate of key type k.
func runPassthroughKey(ctx context.Context, e *env, c *config, rep *report, k string) error {
	p, bs, err := twoBackends(e)
	if err != nil {
		return err
	}
	defer p.close()
	cert, err := newCertificate("term.bench.test", keyBits[k])
	if err != nil {
		return err
	}
	quiet := map[string]string{"worker-processes": "1", "disable-access-log": "true"}
	app := ingressClassYAML + configMapYAML(quiet) + serviceYAML() + cert.secretYAML("term-tls") +
		tlsIngressYAML("term", cert.host, "term-tls") +
		annotatedIngressYAML("pt", passthroughHost, service, [2]string{"ssl-passthrough", "true"})
	manifests := map[string]string{"app.yaml": app, "slice.yaml": sliceYAML(p.port, bs[0].IP)}
	off, err := e.startController(ctx, "passthrough-off-"+k, manifests, c)
	if err != nil {
		return err
	}
	defer off.stop()
	on, err := e.startControllerWith(ctx, "passthrough-on-"+k, manifests, c, controllerOptions{args: []string{"--enable-tls-passthrough"}})
	if err != nil {
		return err
	}
	defer on.stop()
	sides := []side{
		{name: "passthrough off: HTTPS listener on the port", httpsAddr: off.HTTPSAddr(), master: off.nginxPID},
		{name: "passthrough on: ssl_preread, then the HTTPS listener over a unix socket", httpsAddr: on.HTTPSAddr(), master: on.nginxPID},
	}
	for _, sd := range sides {
		if err := oneWorker(sd); err != nil {
			return err
		}
		if err := waitTLS(ctx, sd, cert); err != nil {
			return fmt.Errorf("%s: %w", sd.name, err)
		}
	}
	handover, err := checkPassthroughRendered(on, off)
	if err != nil {
		return err
	}
	sides[1].name = "passthrough on: ssl_preread, then " + handover
	fmt.Fprintf(os.Stderr, "(m) TLS handshakes with passthrough off and on: %d clients, %d rounds of %s per side ...\n", c.tlsConns, c.rounds, c.tlsDuration)
	load := func(sd side, d time.Duration) (sample, error) {
		return tlsLoad(ctx, sd.httpsAddr, cert.host, cert.host, c.tlsConns, d)
	}
	res, err := abRounds(ctx, c.rounds, sides, 500*time.Millisecond, c.tlsDuration, load)
	if err != nil {
		return err
	}
	t := &table{title: "(m) TLS passthrough: full handshakes to a terminated host, passthrough off vs on, " + cert.kind, header: []string{"config"}}
	_, cpu := compareTable(t, "handshake", sides, res, 0, func(int) []string { return nil })
	t.note("Two controllers, the same manifests: a TLS Ingress for `%s` (%s) and an ssl-passthrough Ingress for `%s`; ConfigMap `worker-processes: \"1\"`, `disable-access-log: \"true\"`. One runs with `--enable-tls-passthrough`. The load: %d Go clients, each connection a full TLS 1.3 handshake to `%s` and one `GET /` with `Connection: close`, %d rounds of %s per side. nginx CPU counts the worker's stream and HTTP work alike.",
		cert.host, cert.kind, passthroughHost, c.tlsConns, cert.host, c.rounds, c.tlsDuration)
	t.note("%s", failureNote(res))
	rep.addTable(t)
	rep.target("(m) TLS passthrough on / off, nginx CPU per full handshake of a terminated host, "+cert.kind, "≤ 1.10×",
		fmt.Sprintf("%.2f×", cpu[1]), pass(cpu[1] <= 1.10))
	return nil
}

// waitTLS waits until a side answers a full handshake and a request for
// cert's host (for at most 10 s).
func waitTLS(ctx context.Context, sd side, cert *certificate) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		cn, status, err := tlsRequest(ctx, sd.httpsAddr, tlsConfig(cert.host))
		if err == nil && status == 200 && cn == cert.host {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no 200 with the certificate of %s in time: status %d, certificate %q, %v", cert.host, status, cn, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// passDirective is the stream pass directive of the passthrough server
// (proxy_pass ends the same way).
var passDirective = regexp.MustCompile(`(?m)^\s*pass \$causeway_passthrough;`)

// checkPassthroughRendered checks that the sides are what they claim:
// the "on" controller's configuration (stream files included) has the
// ssl_preread server, the "off" one's none. It says how the "on" side
// hands terminated connections over: pass where the stream module has
// it, else a proxied hop with a PROXY header.
func checkPassthroughRendered(on, off *controllerProc) (string, error) {
	handover := "the HTTPS listener over a unix socket with a PROXY header (proxy_pass)"
	for _, x := range []struct {
		p    *controllerProc
		want bool
	}{{on, true}, {off, false}} {
		files, err := filepath.Glob(filepath.Join(x.p.StateDir, "servers", "*"))
		if err != nil {
			return "", err
		}
		found := false
		for _, f := range append(files, filepath.Join(x.p.StateDir, "nginx.conf")) {
			data, err := os.ReadFile(f)
			if err != nil {
				return "", err
			}
			found = found || strings.Contains(string(data), "ssl_preread on;")
			if x.want && passDirective.Match(data) {
				handover = "the connection passed to the HTTPS listener's unix socket (pass)"
			}
		}
		if found != x.want {
			return "", fmt.Errorf("controller %s: ssl_preread in its configuration: %v, want %v", x.p.StateDir, found, x.want)
		}
	}
	return handover, nil
}
