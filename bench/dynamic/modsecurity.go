package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// Section (n): what ModSecurity costs nginx per clean request: one nginx
// serves a host without it, one with ModSecurity and its base
// configuration (DetectionOnly, the default), and one with the OWASP Core
// Rule Set too and SecRuleEngine On, in the same rounds.
const (
	wafOffHost  = "off.bench.test"
	wafBaseHost = "base.bench.test"
	wafCRSHost  = "crs.bench.test"
	wafLoadPath = "/api/items?page=2&sort=name"
)

// wafHeaders are what a browser would send: the CRS scores requests
// without them at higher paranoia levels.
var wafHeaders = []string{"User-Agent: Mozilla/5.0 (X11; Linux x86_64) bench", "Accept: application/json"}

// wafIngress is an Ingress of host on the benchmark's Service.
func wafIngress(name, host, annotations string) string {
	return fmt.Sprintf(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: %[1]s
  namespace: %[2]s
  annotations: {%[4]s}
spec:
  ingressClassName: causeway
  rules:
  - host: %[3]s
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: %[5]s, port: {number: 80}}}}
---
`, name, ns, host, annotations, service)
}

// runModSecurity runs section (n): one controller (one worker, access log
// off, metrics on) serving the three hosts, loaded in alternating rounds.
func runModSecurity(ctx context.Context, e *env, c *config, rep *report) error {
	if _, err := os.Stat(e.plane.modules + "/ngx_http_modsecurity_module.so"); err != nil {
		fmt.Fprintf(os.Stderr, "(n) ModSecurity: skipped, %s has no ngx_http_modsecurity_module.so (Debian's libnginx-mod-http-modsecurity)\n", e.plane.modules)
		rep.target("(n) ModSecurity + CRS, nginx CPU per clean request", "reported", "SKIP: no module", nil)
		return nil
	}
	p, bs, err := twoBackends(e)
	if err != nil {
		return err
	}
	defer p.close()
	const a = "nginx.ingress.kubernetes.io/"
	quiet := map[string]string{"worker-processes": "1", "disable-access-log": "true", "allow-snippet-annotations": "true"}
	app := ingressClassYAML + configMapYAML(quiet) + serviceYAML() +
		wafIngress("waf-off", wafOffHost, "") +
		wafIngress("waf-base", wafBaseHost, a+`enable-modsecurity: "true"`) +
		wafIngress("waf-crs", wafCRSHost, a+`enable-modsecurity: "true", `+a+`enable-owasp-core-rules: "true", `+a+`modsecurity-snippet: "SecRuleEngine On"`)
	start := time.Now()
	ctl, err := e.startController(ctx, "modsecurity", map[string]string{"app.yaml": app, "slice.yaml": sliceYAML(p.port, bs[0].IP, bs[1].IP)}, c)
	if err != nil {
		return err
	}
	defer ctl.stop()
	ready := time.Since(start)
	sides := []side{
		{name: "no ModSecurity", httpAddr: ctl.HTTPAddr(), host: wafOffHost, master: ctl.nginxPID},
		{name: "ModSecurity, base configuration (DetectionOnly)", httpAddr: ctl.HTTPAddr(), host: wafBaseHost, master: ctl.nginxPID},
		{name: "ModSecurity + CRS, SecRuleEngine On", httpAddr: ctl.HTTPAddr(), host: wafCRSHost, master: ctl.nginxPID},
	}
	// Before timing: every host serves the clean request, and the CRS host
	// refuses an SQL injection (so it does inspect).
	for _, sd := range sides {
		if code, err := wafStatus(ctx, sd, wafLoadPath); err != nil || code != http.StatusOK {
			return fmt.Errorf("%s: clean request: status %d, %v", sd.name, code, err)
		}
	}
	if code, err := wafStatus(ctx, sides[2], "/?id=1%27%20OR%20%271%27%3D%271"); err != nil || code != http.StatusForbidden {
		return fmt.Errorf("%s: SQL injection: status %d, %v; want 403", sides[2].name, code, err)
	}
	loader := c.resolvedLoader()
	load := func(sd side, d time.Duration) (sample, error) {
		if loader == "wrk" {
			return wrkLoad(ctx, "http://"+sd.httpAddr+wafLoadPath, sd.host, wafHeaders, c.conns, d, -1)
		}
		return vegetaLoad(ctx, "http://"+sd.httpAddr+wafLoadPath, sd.host, wafHeaders, c.conns, d)
	}
	fmt.Fprintf(os.Stderr, "(n) ModSecurity: %s, %d rounds of %s per host ...\n", loader, c.rounds, c.tputDuration)
	res, err := abRounds(ctx, c.rounds, sides, time.Second, c.tputDuration, load)
	if err != nil {
		return err
	}
	t := &table{title: "(n) ModSecurity per clean request: none, the base configuration, the OWASP Core Rule Set", header: []string{"host"}}
	_, cpu := compareTable(t, "req", sides, res, 0, func(int) []string { return nil })
	t.note("One controller (ConfigMap `worker-processes: \"1\"`, `disable-access-log: \"true\"`, metrics on) serves the three hosts, started (CRS loaded by `nginx -t` and nginx) and ready in %s. `%s`: no annotation. `%s`: `enable-modsecurity: \"true\"` (the base configuration, request and response bodies inspected, DetectionOnly). `%s`: with `enable-owasp-core-rules: \"true\"` and `modsecurity-snippet: SecRuleEngine On` (Debian's CRS 3.3, paranoia level 1); before timing it refused an SQL injection with 403.",
		ready.Round(time.Millisecond), wafOffHost, wafBaseHost, wafCRSHost)
	t.note("Load: `GET %s` with a browser's User-Agent and Accept, %s with %d keep-alive connections, %d rounds of %s per host, each round the hosts in turn; two Go echo backends, not pinned.", wafLoadPath, loader, c.conns, c.rounds, c.tputDuration)
	t.note("%s", failureNote(res))
	rep.addTable(t)
	rep.target("(n) ModSecurity + CRS / none, nginx CPU per clean request", "reported", fmt.Sprintf("%.2f× (base configuration alone %.2f×)", cpu[2], cpu[1]), nil)
	return nil
}

// wafStatus sends one GET to a side, retrying while it is not served yet.
func wafStatus(ctx context.Context, sd side, path string) (int, error) {
	client := hostClient(sd.httpAddr, sd.host)
	defer client.CloseIdleConnections()
	deadline := time.Now().Add(10 * time.Second)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+sd.httpAddr+path, nil)
		if err != nil {
			return 0, err
		}
		req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) bench")
		req.Header.Set("Accept", "application/json")
		resp, err := client.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusServiceUnavailable {
				return resp.StatusCode, nil
			}
		}
		if time.Now().After(deadline) {
			if err == nil {
				return resp.StatusCode, nil
			}
			return 0, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}
