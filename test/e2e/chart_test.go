package e2e

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	sigsyaml "sigs.k8s.io/yaml"
)

// tool finds a binary the Makefile builds into .cache/bin (or the path in
// the environment variable env), failing under CAUSEWAY_REQUIRE_TESTENV=1
// and skipping otherwise when it is missing.
func tool(t *testing.T, name, env, make string) string {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		p = filepath.Join(e2e.repoRoot, ".cache", "bin", name)
	}
	if _, err := os.Stat(p); err != nil {
		msg := fmt.Sprintf("%s not found at %s: run `%s` or set $%s", name, p, make, env)
		if os.Getenv("CAUSEWAY_REQUIRE_TESTENV") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}

// helmTemplate renders charts/causeway as release causeway in namespace
// ns with the given --set values.
func helmTemplate(t *testing.T, helm, ns string, sets []string, extra ...string) []byte {
	t.Helper()
	args := []string{"template", "causeway", filepath.Join(e2e.repoRoot, "charts", "causeway"), "--namespace", ns}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	out, err := exec.CommandContext(t.Context(), helm, append(args, extra...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("helm template %v: %v\n%s", sets, err, out)
	}
	return out
}

// chartValueSets are the value sets the chart is checked with: the
// defaults and combinations an ingress-nginx user sets.
var chartValueSets = []struct {
	name string
	sets []string
	// wantArgs are controller flags the Deployment must pass; wantKinds
	// and noKinds the kinds rendered or not.
	wantArgs, noArgs []string
	wantKinds        []string
	noKinds          []string
	// wantText and noText are looked for in the whole rendering.
	wantText, noText []string
	serviceMonitored bool
	// probePort is the port the probes name; "" means health.
	probePort string
}{
	{name: "defaults", noArgs: []string{"--enable-cert-manager=true", "--enable-external-dns=true", "--nginx-binary=/usr/sbin/nginx-net-bind-service",
		"--enable-gateway-api=false"},
		wantArgs: []string{"--configmap=causeway-chart/causeway", "--publish-service=causeway-chart/causeway", "--enable-metrics=true",
			"--validating-webhook-address=:8444", "--validating-webhook-configuration=causeway-admission", "--validating-webhook-mode=deny",
			"--state-dir=/var/lib/causeway/state", "--shutdown-grace-period=5s", "--http-port=8080", "--https-port=8443",
			"--gateway-service-type=LoadBalancer", "--gateway-port-range=20000-20999",
			"--gateway-service-selector=app.kubernetes.io/instance=causeway,app.kubernetes.io/name=causeway"},
		wantKinds: []string{"Deployment", "Service", "ConfigMap", "IngressClass", "ClusterRole", "Role", "ServiceAccount", "PodDisruptionBudget",
			"ValidatingWebhookConfiguration", "Lease"},
		noKinds: []string{"DaemonSet", "HorizontalPodAutoscaler"},
		wantText: []string{"allowPrivilegeEscalation: false", `drop: ["ALL"]`, `resources: ["gatewayclasses"]`,
			`resources: ["gateways", "listenersets", "httproutes", "grpcroutes", "tlsroutes", "tcproutes", "udproutes", "referencegrants", "backendtlspolicies"]`,
			`resources: ["namespaces"]`, `verbs: ["create", "update", "delete"]`,
			`resources: ["gatewayclasses/status"]`, `resources: ["gateways/status", "listenersets/status", "httproutes/status"`},
		noText: []string{"cert-manager.io", `apiGroups: ["externaldns.nginx.org"]`, "hostNetwork", "NET_BIND_SERVICE"}},
	{name: "webhook in warn mode, failing open, for labelled namespaces",
		sets: []string{"controller.admissionWebhooks.mode=warn", "controller.admissionWebhooks.failurePolicy=Ignore",
			"controller.admissionWebhooks.namespaceSelector.matchLabels.team=shop", "controller.admissionWebhooks.port=9443"},
		wantArgs:  []string{"--validating-webhook-mode=warn", "--validating-webhook-address=:9443"},
		wantKinds: []string{"ValidatingWebhookConfiguration"}, wantText: []string{"failurePolicy: Ignore", "team: shop"}},
	{name: "cert-manager", sets: []string{"controller.certManager.enabled=true"},
		wantArgs: []string{"--enable-cert-manager=true"}, wantText: []string{`apiGroups: ["cert-manager.io"]`}},
	{name: "external-dns", sets: []string{"controller.externalDNS.enabled=true"},
		wantArgs: []string{"--enable-external-dns=true"}, wantText: []string{`apiGroups: ["externaldns.nginx.org"]`}},
	{name: "Gateway API off", sets: []string{"controller.gatewayAPI.enabled=false"},
		wantArgs: []string{"--enable-gateway-api=false"}, noArgs: []string{"--gateway-service-type=LoadBalancer"},
		noText: []string{"gateway.networking.k8s.io", `resources: ["namespaces"]`, `verbs: ["create", "update", "delete"]`}},
	{name: "Gateway Services of type ClusterIP in another port range",
		sets:     []string{"controller.gatewayAPI.serviceType=ClusterIP", "controller.gatewayAPI.portRange=40000-40099"},
		wantArgs: []string{"--gateway-service-type=ClusterIP", "--gateway-port-range=40000-40099"}},
	// Gateway API's namespaced kinds go with the other namespaced rules
	// into the Role of the watched namespace; GatewayClasses stay in the
	// ClusterRole.
	{name: "Gateway API scoped", sets: []string{"controller.scope.enabled=true"},
		wantText: []string{`resources: ["gatewayclasses"]`, `resources: ["gateways", "listenersets", "httproutes"`, `resources: ["gatewayclasses/status"]`,
			`resources: ["gateways/status", "listenersets/status", "httproutes/status"`}},
	{name: "webhook off", sets: []string{"controller.admissionWebhooks.enabled=false"},
		noArgs: []string{"--validating-webhook-address=:8444"}, noKinds: []string{"ValidatingWebhookConfiguration"},
		noText: []string{"validatingwebhookconfigurations"}},
	{name: "one replica, no PDB, ClusterIP, config and extra args",
		sets: []string{"controller.replicaCount=1", "controller.service.type=ClusterIP", "controller.config.use-forwarded-headers=true",
			"controller.config.proxy-body-size=8m", "controller.extraArgs.default-ssl-certificate=causeway-chart/wildcard",
			"controller.extraArgs.watch-namespace=", "controller.watchIngressWithoutClass=true", "controller.ingressClassResource.default=true"},
		wantArgs: []string{"--default-ssl-certificate=causeway-chart/wildcard", "--watch-namespace", "--watch-ingress-without-class=true"},
		noKinds:  []string{"PodDisruptionBudget"}},
	{name: "metrics off, no service, no webhook, existing service account, no RBAC",
		sets: []string{"controller.metrics.enabled=false", "controller.service.enabled=false", "controller.admissionWebhooks.enabled=false", "rbac.create=false",
			"serviceAccount.create=false", "serviceAccount.name=existing", "controller.ingressClassResource.enabled=false"},
		wantArgs: []string{"--enable-metrics=false"},
		noKinds:  []string{"Service", "ClusterRole", "Role", "ServiceAccount", "IngressClass"}},
	{name: "ServiceMonitor", sets: []string{"controller.metrics.serviceMonitor.enabled=true", "controller.metrics.serviceMonitor.additionalLabels.release=prom"},
		wantKinds: []string{"ServiceMonitor"}, serviceMonitored: true},
	// ingress-nginx's values for a controller per node on the host
	// network: nginx listens on the node's 80 and 443 with the copy that
	// carries cap_net_bind_service (tier 5 runs it).
	{name: "DaemonSet on the host network",
		sets:      []string{"controller.kind=DaemonSet", "controller.hostNetwork=true", "controller.hostPort.enabled=true", "controller.dnsPolicy=ClusterFirstWithHostNet"},
		wantArgs:  []string{"--http-port=80", "--https-port=443", "--nginx-binary=/usr/sbin/nginx-net-bind-service"},
		wantKinds: []string{"DaemonSet", "Lease"}, noKinds: []string{"Deployment", "HorizontalPodAutoscaler"},
		wantText: []string{"hostNetwork: true", "dnsPolicy: ClusterFirstWithHostNet", "hostPort: 80", "hostPort: 443",
			"allowPrivilegeEscalation: true", `add: ["NET_BIND_SERVICE"]`}},
	{name: "hostPort without the host network", sets: []string{"controller.hostPort.enabled=true"},
		wantArgs: []string{"--http-port=8080", "--https-port=8443"}, noArgs: []string{"--nginx-binary=/usr/sbin/nginx-net-bind-service"},
		wantText: []string{"hostPort: 80", "hostPort: 443", "allowPrivilegeEscalation: false"}, noText: []string{"NET_BIND_SERVICE", "hostNetwork"}},
	// The edge tunnel beside nginx: an init container with NET_ADMIN
	// writes the DNAT rules once; the server runs unprivileged.
	{name: "edge tunnel", sets: []string{"tunnel.enabled=true", "tunnel.edgeCIDRs[0]=10.244.128.0/17", "tunnel.edgeCIDRs[1]=10.245.0.0/16",
		"tunnel.routeAllow[0]=edge-*=10.244.128.0/17", "tunnel.tlsSecret=tunnel-tls", "tunnel.agentCASecret=tunnel-ca"},
		wantKinds: []string{"Deployment", "Service"},
		wantText: []string{"name: causeway-tunnel", "- name: tunnel-iptables", `- "--cidr=10.244.128.0/17"`, `- "--cidr=10.245.0.0/16"`,
			"- --target=127.0.0.1:10263", `add: ["NET_ADMIN", "NET_RAW"]`, "- name: tunnel-server", "- --server-count-from-leases",
			"- --lease-namespace=$(POD_NAMESPACE)", "- --lease-label=causeway.io/tunnel-server=causeway", `verbs: ["get", "list", "update", "delete"]`,
			"- --transparent-bind-address=127.0.0.1:10263", `- "--route-allow=edge-*=10.244.128.0/17"`, "- --authorize-node-addresses=false",
			"secretName: tunnel-tls", "secretName: tunnel-ca", "targetPort: tunnel-agent"}},
	// Replicas count one another by Leases, so an autoscaled Deployment
	// or a DaemonSet carries the tunnel too.
	{name: "edge tunnel, DaemonSet", sets: []string{"controller.kind=DaemonSet", "tunnel.enabled=true", "tunnel.edgeCIDRs[0]=10.244.128.0/17",
		"tunnel.tlsSecret=tunnel-tls", "tunnel.agentCASecret=tunnel-ca"},
		wantKinds: []string{"DaemonSet"}, wantText: []string{"- name: tunnel-iptables", "- --server-count-from-leases"}},
	{name: "both kinds", sets: []string{"controller.kind=Both"}, wantKinds: []string{"Deployment", "DaemonSet"}},
	{name: "autoscaling", sets: []string{"controller.autoscaling.enabled=true", "controller.autoscaling.maxReplicas=5", "controller.autoscaling.targetMemoryUtilizationPercentage=null"},
		wantKinds: []string{"HorizontalPodAutoscaler"}, wantText: []string{"maxReplicas: 5", "name: cpu"}, noText: []string{"name: memory", "\n  replicas:"}},
	{name: "extra environment, volumes, lifecycle, pull secrets, no publishing",
		sets: []string{"controller.extraEnvs[0].name=GODEBUG", "controller.extraEnvs[0].value=http2debug=1",
			"controller.extraVolumes[0].name=geoip", "controller.extraVolumes[0].emptyDir.medium=Memory",
			"controller.extraVolumeMounts[0].name=geoip", "controller.extraVolumeMounts[0].mountPath=/etc/geoip",
			"controller.lifecycle.preStop.sleep.seconds=3", "imagePullSecrets[0].name=regcred", "controller.publishService.enabled=false"},
		noArgs:   []string{"--publish-service=causeway-chart/causeway"},
		wantText: []string{"name: GODEBUG", "mountPath: /etc/geoip", "medium: Memory", "preStop:", "seconds: 3", "name: regcred"}},
	// ingress-nginx's layout: probes, scrape annotations and ServiceMonitors
	// written for its port 10254 keep working.
	{name: "ingress-nginx's health and metrics port", sets: []string{"controller.ingressNginxLayout=true", "controller.metrics.serviceMonitor.enabled=true"},
		wantArgs: []string{"--healthz-port=10254"}, noArgs: []string{"--health-port=8081", "--metrics-port=9113"},
		wantText: []string{"containerPort: 10254", "port: 10254\n      targetPort: metrics"}, noText: []string{"containerPort: 8081", "name: health"},
		probePort: "metrics", serviceMonitored: true},
	{name: "equal health and metrics ports", sets: []string{"controller.healthPort=9113"},
		wantArgs: []string{"--healthz-port=9113"}, noArgs: []string{"--metrics-port=9113"}, probePort: "metrics"},
	{name: "default backend", sets: []string{"defaultBackend.enabled=true", "defaultBackend.replicaCount=2", "defaultBackend.extraArgs.v=1"},
		wantArgs: []string{"--default-backend-service=causeway-chart/causeway-defaultbackend"},
		wantText: []string{"image: registry.k8s.io/defaultbackend-amd64:1.5", "name: causeway-defaultbackend", "app.kubernetes.io/component: default-backend",
			"- --v=1", "runAsUser: 65534"}},
	{name: "default backend image by repository and digest", sets: []string{"defaultBackend.enabled=true", "defaultBackend.image.repository=mirror.example.com/defaultbackend",
		"defaultBackend.image.digest=sha256:0000000000000000000000000000000000000000000000000000000000000000"},
		wantText: []string{"image: mirror.example.com/defaultbackend@sha256:0000000000000000000000000000000000000000000000000000000000000000"}},
	{name: "tcp and udp services", sets: []string{"tcp.9000=default/example-tcp:9000", "tcp.5432=db/postgres:5432:PROXY", "udp.53=kube-system/kube-dns:53"},
		wantArgs: []string{"--tcp-services-configmap=causeway-chart/causeway-tcp", "--udp-services-configmap=causeway-chart/causeway-udp",
			"--nginx-binary=/usr/sbin/nginx-net-bind-service"},
		wantText: []string{`"9000": "default/example-tcp:9000"`, `"5432": "db/postgres:5432:PROXY"`, `"53": "kube-system/kube-dns:53"`,
			"name: 9000-tcp", "targetPort: 53-udp", "protocol: UDP", `resourceNames: ["causeway", "causeway-tcp", "causeway-udp"]`}},
	{name: "tcp service without privileged ports", sets: []string{"tcp.9000=default/example-tcp:9000"},
		wantArgs: []string{"--tcp-services-configmap=causeway-chart/causeway-tcp"}, noArgs: []string{"--nginx-binary=/usr/sbin/nginx-net-bind-service",
			"--udp-services-configmap=causeway-chart/causeway-udp"}},
	// controller.scope: one namespace, and RBAC narrowed to it.
	{name: "scope", sets: []string{"controller.scope.enabled=true"},
		wantArgs: []string{"--watch-namespace=causeway-chart"}, wantText: []string{"name: causeway-watch", `resources: ["ingressclasses"]`,
			"kubernetes.io/metadata.name: causeway-chart"},
		noText: []string{`resources: ["ingresses", "ingressclasses"]`}},
	{name: "namespace selector", sets: []string{"controller.scope.namespaceSelector=team=web"},
		wantArgs: []string{"--watch-namespace-selector=team=web"}, wantText: []string{`resources: ["namespaces"]`}, noText: []string{"causeway-watch"}},
}

// TestChart lints and renders charts/causeway with several value sets,
// checks what each renders, and has the real API server admit the result
// (kubectl apply --dry-run=server). The ServiceMonitor is checked in the
// rendering only: the test API server has no Prometheus Operator CRDs.
func TestChart(t *testing.T) {
	t.Parallel()
	helm := tool(t, "helm", "HELM", "make helm")
	kubectl := tool(t, "kubectl", "KUBECTL", "make kube-apiserver")
	const ns = "causeway-chart"
	if out, err := exec.CommandContext(t.Context(), kubectl, "--kubeconfig", e2e.env.AdminKubeconfig, "create", "namespace", ns).CombinedOutput(); err != nil &&
		!strings.Contains(string(out), "AlreadyExists") {
		t.Fatalf("create namespace: %v\n%s", err, out)
	}
	for _, vs := range chartValueSets {
		t.Run(vs.name, func(t *testing.T) {
			args := []string{"lint", filepath.Join(e2e.repoRoot, "charts", "causeway"), "--strict"}
			for _, s := range vs.sets {
				args = append(args, "--set", s)
			}
			if out, err := exec.CommandContext(t.Context(), helm, args...).CombinedOutput(); err != nil {
				t.Fatalf("helm lint: %v\n%s", err, out)
			}
			out := helmTemplate(t, helm, ns, vs.sets)
			kinds := map[string]int{}
			var admit [][]byte
			var deploy *appsv1.Deployment
			var pod *corev1.PodTemplateSpec
			for _, doc := range bytes.Split(out, []byte("\n---\n")) {
				var meta struct{ Kind string }
				if err := sigsyaml.Unmarshal(doc, &meta); err != nil {
					t.Fatalf("rendered YAML: %v\n%s", err, doc)
				}
				if meta.Kind == "" {
					continue
				}
				kinds[meta.Kind]++
				switch meta.Kind {
				case "Deployment":
					d := &appsv1.Deployment{}
					if err := sigsyaml.UnmarshalStrict(doc, d); err != nil {
						t.Fatalf("Deployment: %v", err)
					}
					if d.Name != "causeway" {
						break // the default backend's
					}
					deploy, pod = d, &d.Spec.Template
				case "DaemonSet":
					ds := &appsv1.DaemonSet{}
					if err := sigsyaml.UnmarshalStrict(doc, ds); err != nil {
						t.Fatalf("DaemonSet: %v", err)
					}
					if pod == nil {
						pod = &ds.Spec.Template
					}
				}
				if meta.Kind != "ServiceMonitor" {
					admit = append(admit, doc)
				}
			}
			for _, k := range vs.wantKinds {
				if kinds[k] == 0 {
					t.Errorf("no %s rendered (%v)", k, kinds)
				}
			}
			for _, k := range vs.noKinds {
				if kinds[k] != 0 {
					t.Errorf("%s rendered, want none", k)
				}
			}
			if pod == nil {
				t.Fatal("no Deployment or DaemonSet rendered")
			}
			c := pod.Spec.Containers[0]
			for _, want := range vs.wantArgs {
				if !slices.Contains(c.Args, want) {
					t.Errorf("controller args %v lack %s", c.Args, want)
				}
			}
			for _, no := range vs.noArgs {
				if slices.Contains(c.Args, no) {
					t.Errorf("controller args %v hold %s", c.Args, no)
				}
			}
			for _, w := range vs.wantText {
				if !bytes.Contains(out, []byte(w)) {
					t.Errorf("rendering lacks %q", w)
				}
			}
			for _, w := range vs.noText {
				if bytes.Contains(out, []byte(w)) {
					t.Errorf("rendering holds %q", w)
				}
			}
			if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
				t.Errorf("probes: readiness %+v, liveness %+v", c.ReadinessProbe, c.LivenessProbe)
			}
			probePort := cmp.Or(vs.probePort, "health")
			for _, p := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe, c.StartupProbe} {
				if p == nil || p.HTTPGet.Port.String() != probePort || !slices.ContainsFunc(c.Ports, func(cp corev1.ContainerPort) bool { return cp.Name == probePort }) {
					t.Errorf("probe %+v: want port %s, a port of the container %v", p, probePort, c.Ports)
				}
			}
			if sc := pod.Spec.SecurityContext; sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != 101 {
				t.Errorf("pod security context %+v, want uid 101", sc)
			}
			if deploy != nil && len(deploy.Spec.Template.Spec.TopologySpreadConstraints) == 0 {
				t.Error("no topology spread constraints")
			}
			if vs.serviceMonitored && !bytes.Contains(out, []byte("honorLabels: true")) {
				t.Error("the ServiceMonitor does not honor the controller's labels (the dashboard reads namespace)")
			}
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, kubectl, "--kubeconfig", e2e.env.AdminKubeconfig, "apply", "--dry-run=server", "-f", "-")
			cmd.Stdin = bytes.NewReader(bytes.Join(admit, []byte("\n---\n")))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("kubectl apply --dry-run=server: %v\n%s", err, out)
			}
		})
	}
}

// TestChartRefusesTunnel: tunnel.enabled fails the rendering, saying
// why, where it cannot work as asked rather than rendering something else.
func TestChartRefusesTunnel(t *testing.T) {
	t.Parallel()
	helm := tool(t, "helm", "HELM", "make helm")
	ok := []string{"tunnel.enabled=true", "tunnel.edgeCIDRs[0]=10.244.128.0/17", "tunnel.tlsSecret=t", "tunnel.agentCASecret=a"}
	for _, tc := range []struct {
		name string
		sets []string
		want string
	}{
		{"no edge CIDRs", []string{"tunnel.enabled=true", "tunnel.tlsSecret=t", "tunnel.agentCASecret=a"}, "needs tunnel.edgeCIDRs"},
		{"no certificates", []string{"tunnel.enabled=true", "tunnel.edgeCIDRs[0]=10.244.128.0/17"}, "needs tunnel.tlsSecret"},
		{"host network", append(slices.Clone(ok), "controller.kind=DaemonSet", "controller.hostNetwork=true"), "node's own network namespace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"template", "causeway", filepath.Join(e2e.repoRoot, "charts", "causeway")}
			for _, s := range tc.sets {
				args = append(args, "--set", s)
			}
			out, err := exec.CommandContext(t.Context(), helm, args...).CombinedOutput()
			if err == nil || !strings.Contains(string(out), tc.want) {
				t.Fatalf("helm template %v: %v, want a failure saying %q:\n%.400s", tc.sets, err, tc.want, out)
			}
		})
	}
}

// TestDeployRBACIsTheChart: deploy/rbac.yaml is the chart's RBAC rendered
// for release causeway in causeway-system (`make generate` writes it), so
// the least-privilege test that pins deploy/ pins the chart too.
func TestDeployRBACIsTheChart(t *testing.T) {
	t.Parallel()
	helm := tool(t, "helm", "HELM", "make helm")
	want := helmTemplate(t, helm, "causeway-system", nil, "--show-only", "templates/rbac.yaml")
	got, err := os.ReadFile(filepath.Join(e2e.repoRoot, "deploy", "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("deploy/rbac.yaml is not the chart's RBAC: run make generate")
	}
}
