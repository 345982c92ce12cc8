package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestGeneratedCRDsAreCurrent runs controller-gen into a temporary
// directory and compares its output byte for byte with the committed
// deepcopy functions and CRDs (deploy/crds and the chart's crds/).
func TestGeneratedCRDsAreCurrent(t *testing.T) {
	t.Parallel()
	gen := tool(t, "controller-gen", "CONTROLLER_GEN", "make controller-gen")
	tmp := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), gen, args...)
		cmd.Dir = e2e.repoRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("controller-gen %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	const stale = ": run make generate"

	// Deepcopy functions, one API package at a time so that each has an
	// output directory of its own.
	pkgs, err := filepath.Glob(filepath.Join(e2e.repoRoot, "internal", "apis", "*", "*", "doc.go"))
	if err != nil || len(pkgs) == 0 {
		t.Fatalf("no API packages under internal/apis (%v)", err)
	}
	for i, doc := range pkgs {
		pkg := filepath.Dir(doc)
		rel, err := filepath.Rel(e2e.repoRoot, pkg)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(tmp, "object", string(rune('a'+i)))
		run("object", "paths=./"+filepath.ToSlash(rel), "output:object:dir="+out)
		want := readFile(t, filepath.Join(out, "zz_generated.deepcopy.go"))
		if got := readFile(t, filepath.Join(pkg, "zz_generated.deepcopy.go")); !bytes.Equal(got, want) {
			t.Errorf("%s/zz_generated.deepcopy.go is not current%s", rel, stale)
		}
	}

	crds := filepath.Join(tmp, "crds")
	run("crd", "paths=./internal/apis/...", "output:crd:artifacts:config="+crds)
	names := crdFiles(t, crds)
	if len(names) == 0 {
		t.Fatal("controller-gen wrote no CRDs")
	}
	for _, dir := range []string{"deploy/crds", "charts/causeway/crds"} {
		have := crdFiles(t, filepath.Join(e2e.repoRoot, dir))
		if !slices.Equal(have, names) {
			t.Errorf("%s holds %v, controller-gen writes %v%s", dir, have, names, stale)
			continue
		}
		for _, n := range names {
			if !bytes.Equal(readFile(t, filepath.Join(e2e.repoRoot, dir, n)), readFile(t, filepath.Join(crds, n))) {
				t.Errorf("%s/%s is not current%s", dir, n, stale)
			}
		}
	}
	// deploy/crds/kustomization.yaml must list every CRD.
	kust := string(readFile(t, filepath.Join(e2e.repoRoot, "deploy", "crds", "kustomization.yaml")))
	for _, n := range names {
		if !strings.Contains(kust, "- "+n+"\n") {
			t.Errorf("deploy/crds/kustomization.yaml does not list %s", n)
		}
	}
}

// crdFiles lists the generated CRD files (group_plural.yaml) in dir.
func crdFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*_*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range m {
		m[i] = filepath.Base(m[i])
	}
	slices.Sort(m)
	return m
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// CRDs are cluster-scoped and the tests share one API server, so they are
// installed once, by whichever test needs them first (TestCRDsInstall,
// TestVirtualServerStatus, TestTransportServerStatus and the others that
// call installCRDs).
// Controllers of other tests may start before or after: with or without
// the CRDs, they must run.
var (
	installCRDsOnce sync.Once
	installCRDsErr  string
)

func installCRDs(t *testing.T, kubectl string) {
	t.Helper()
	installCRDsOnce.Do(func() {
		kc := []string{"--kubeconfig", e2e.env.AdminKubeconfig}
		out, err := exec.Command(kubectl, append(kc, "apply", "--server-side", "-k", filepath.Join(e2e.repoRoot, "deploy", "crds"))...).CombinedOutput()
		if err != nil {
			installCRDsErr = "kubectl apply -k deploy/crds: " + err.Error() + "\n" + string(out)
			return
		}
		// kubectl wait fails at once on a CRD whose status the API server
		// has not written yet ("<nil> is of the type <nil>"): ask again.
		for range 20 {
			out, err = exec.Command(kubectl, append(kc, "wait", "--for", "condition=Established", "--timeout", waitFor.String(),
				"crd/virtualservers.k8s.nginx.org", "crd/virtualserverroutes.k8s.nginx.org", "crd/transportservers.k8s.nginx.org",
				"crd/policies.k8s.nginx.org", "crd/globalconfigurations.k8s.nginx.org")...).CombinedOutput()
			if err == nil || !strings.Contains(string(out), "accessor error") {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			installCRDsErr = "kubectl wait for Established: " + err.Error() + "\n" + string(out)
		}
	})
	if installCRDsErr != "" {
		t.Fatal(installCRDsErr)
	}
}

// TestCRDsInstall installs deploy/crds into the API server and checks that
// realistic manifests of every kind are accepted, and that manifests
// breaking the schema are refused.
func TestCRDsInstall(t *testing.T) {
	t.Parallel()
	kubectl := tool(t, "kubectl", "KUBECTL", "make kube-apiserver")
	installCRDs(t, kubectl)
	ns := newNamespace(t)
	apply := func(t *testing.T, manifest string) ([]byte, error) {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), kubectl, "--kubeconfig", e2e.env.AdminKubeconfig,
			"apply", "--server-side", "--field-manager", "crds-test", "-n", ns, "-f", "-")
		cmd.Stdin = strings.NewReader(manifest)
		return cmd.CombinedOutput()
	}

	for name, manifest := range validCRs {
		t.Run("valid/"+name, func(t *testing.T) {
			if out, err := apply(t, manifest); err != nil {
				t.Fatalf("refused: %v\n%s", err, out)
			}
		})
	}
	for name, c := range invalidCRs {
		t.Run("invalid/"+name, func(t *testing.T) {
			out, err := apply(t, c.manifest)
			if err == nil {
				t.Fatalf("accepted:\n%s", out)
			}
			if !strings.Contains(string(out), c.want) {
				t.Fatalf("refused, but without %q:\n%s", c.want, out)
			}
		})
	}

	// The printer columns and short names work.
	out, err := exec.CommandContext(t.Context(), kubectl, "--kubeconfig", e2e.env.AdminKubeconfig, "get", "vs", "-n", ns).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl get vs: %v\n%s", err, out)
	}
	if header := strings.Fields(strings.SplitN(string(out), "\n", 2)[0]); !slices.Equal(header, []string{"NAME", "STATE", "HOST", "IP", "PORTS", "AGE"}) {
		t.Errorf("kubectl get vs columns = %v\n%s", header, out)
	}
}

var validCRs = map[string]string{
	"virtualserver": `
apiVersion: k8s.nginx.org/v1
kind: VirtualServer
metadata:
  name: cafe
spec:
  ingressClassName: causeway
  host: cafe.example.com
  tls:
    secret: cafe-tls
    redirect:
      enable: true
      code: 308
      basedOn: x-forwarded-proto
  policies:
  - name: allow-office
  upstreams:
  - name: tea
    service: tea-svc
    port: 80
    lb-method: least_conn
    max-fails: 3
    fail-timeout: 10s
    keepalive: 32
    connect-timeout: 5s
    read-timeout: 60s
    next-upstream: error timeout
    next-upstream-tries: 2
    buffering: false
    client-body-buffer-size: 16k
  - name: tea-v2
    service: tea-svc-v2
    port: 8080
    subselector:
      version: v2
  - name: coffee
    service: other-namespace/coffee-svc
    port: 443
    type: grpc
    tls:
      enable: true
    healthCheck:
      enable: true
      interval: 10s
      statusMatch: "200"
  routes:
  - path: /tea
    splits:
    - weight: 90
      action:
        pass: tea
    - weight: 10
      action:
        proxy:
          upstream: tea-v2
          rewritePath: /
          requestHeaders:
            pass: true
            set:
            - name: X-Canary
              value: "true"
          responseHeaders:
            hide:
            - x-internal
            add:
            - name: X-Served-By
              value: causeway
              always: true
  - path: /coffee
    matches:
    - conditions:
      - header: x-version
        value: v2
      - cookie: flavour
        value: "!decaf"
      action:
        pass: coffee
    action:
      proxy:
        upstream: coffee
    errorPages:
    - codes: [502, 503]
      return:
        code: 200
        type: application/json
        body: '{"status": "unavailable"}'
        headers:
        - name: Retry-After
          value: "30"
  - path: =/old
    action:
      redirect:
        url: https://${host}/tea
        code: 301
  - path: /menu
    route: menu
`,
	"virtualserverroute": `
apiVersion: k8s.nginx.org/v1
kind: VirtualServerRoute
metadata:
  name: menu
spec:
  ingressClassName: causeway
  host: cafe.example.com
  upstreams:
  - name: menu
    service: menu-svc
    port: 80
  subroutes:
  - path: /menu
    action:
      pass: menu
  - path: ~ ^/menu/(.*)\.json$
    action:
      proxy:
        upstream: menu
        rewritePath: /api/$1
  - path: /menu/today
    action:
      return:
        code: 200
        body: "soup"
`,
	"policy-accesscontrol": `
apiVersion: k8s.nginx.org/v1
kind: Policy
metadata:
  name: allow-office
spec:
  accessControl:
    allow:
    - 10.0.0.0/8
    - 192.168.1.1
`,
	"policy-ratelimit": `
apiVersion: k8s.nginx.org/v1
kind: Policy
metadata:
  name: rate-limit
spec:
  rateLimit:
    rate: 10r/s
    key: ${binary_remote_addr}
    zoneSize: 10M
    burst: 20
    noDelay: true
    rejectCode: 429
    logLevel: warn
    condition:
      variables:
      - name: $request_method
        match: POST
`,
	"policy-basicauth": `
apiVersion: k8s.nginx.org/v1
kind: Policy
metadata:
  name: basic-auth
spec:
  basicAuth:
    realm: Cafe staff
    secret: htpasswd
`,
	"policy-ingressmtls": `
apiVersion: k8s.nginx.org/v1
kind: Policy
metadata:
  name: ingress-mtls
spec:
  ingressMTLS:
    clientCertSecret: client-ca
    verifyClient: "on"
    verifyDepth: 2
`,
	"policy-egressmtls": `
apiVersion: k8s.nginx.org/v1
kind: Policy
metadata:
  name: egress-mtls
spec:
  egressMTLS:
    tlsSecret: client-cert
    trustedCertSecret: upstream-ca
    verifyServer: true
    verifyDepth: 2
    serverName: true
    sslName: backend.internal
    protocols: TLSv1.2 TLSv1.3
    sessionReuse: true
`,
	"policy-externalauth": `
apiVersion: k8s.nginx.org/v1
kind: Policy
metadata:
  name: external-auth
spec:
  externalAuth:
    authURI: /auth
    authServiceName: auth-namespace/auth-svc
    authServicePorts: [8080]
    authSigninURI: /login
    sslEnabled: true
    sslVerify: true
    trustedCertSecret: auth-ca
    sniName: auth.example.com
`,
	"policy-jwt": `
apiVersion: k8s.nginx.org/v1
kind: Policy
metadata:
  name: jwt
spec:
  jwt:
    realm: Cafe API
    jwksURI: https://idp.example.com/keys
    keyCache: 1h
    token: $http_token
    sslVerify: true
    trustedCertSecret: idp-ca
`,
	"transportserver": `
apiVersion: k8s.nginx.org/v1
kind: TransportServer
metadata:
  name: dns
spec:
  ingressClassName: causeway
  listener:
    name: dns-udp
    protocol: UDP
  upstreams:
  - name: dns
    service: coredns
    port: 53
    maxFails: 2
    failTimeout: 30s
    loadBalancingMethod: least_conn
  upstreamParameters:
    udpRequests: 1
    udpResponses: 1
    connectTimeout: 5s
  sessionParameters:
    timeout: 60s
  action:
    pass: dns
`,
	"globalconfiguration": `
apiVersion: k8s.nginx.org/v1
kind: GlobalConfiguration
metadata:
  name: causeway
spec:
  listeners:
  - name: dns-udp
    port: 5353
    protocol: UDP
  - name: https-8443
    port: 8443
    protocol: HTTP
    ssl: true
    ipv4: 0.0.0.0
`,
}

var invalidCRs = map[string]struct{ manifest, want string }{
	"bad-enum": {`
apiVersion: k8s.nginx.org/v1
kind: VirtualServer
metadata:
  name: bad-enum
spec:
  host: bad.example.com
  add-header-inherit: sometimes
`, `Unsupported value: "sometimes"`},
	"missing-required": {`
apiVersion: k8s.nginx.org/v1
kind: Policy
metadata:
  name: missing-required
spec:
  externalAuth:
    authURI: /auth
`, "spec.externalAuth.authServiceName: Required value"},
	"out-of-range-port": {`
apiVersion: k8s.nginx.org/v1
kind: GlobalConfiguration
metadata:
  name: out-of-range
spec:
  listeners:
  - name: big
    port: 70000
    protocol: TCP
`, "should be less than or equal to 65535"},
	"negative-depth": {`
apiVersion: k8s.nginx.org/v1
kind: Policy
metadata:
  name: negative-depth
spec:
  jwt:
    secret: jwk
    sslVerifyDepth: -1
`, "should be greater than or equal to 0"},
	"cel-rule": {`
apiVersion: k8s.nginx.org/v1
kind: Policy
metadata:
  name: cel-rule
spec:
  hsts:
    maxAge: 60
    preload: true
    includeSubDomains: true
`, "preload requires maxAge"},
}
