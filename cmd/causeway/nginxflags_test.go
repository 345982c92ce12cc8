package main

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/spf13/cobra"

	"github.com/causeway/causeway/internal/nginxflags"
)

// parseController parses args as `causeway controller` would, then
// resolves the flags that stand for others.
func parseController(t *testing.T, args ...string) (*cobra.Command, *controllerFlags, error) {
	t.Helper()
	cmd, f := controllerCommand()
	if err := cmd.ParseFlags(args); err != nil {
		return cmd, f, unknownFlagError(cmd, err)
	}
	return cmd, f, f.resolve(cmd.Flags())
}

// TestEveryIngressNginxFlagIsAccepted: every flag of the table is a flag of
// `causeway controller`, one Causeway takes under another name shares that
// flag's value, and one Causeway takes under its own name is visible in
// --help while the ignored ones are hidden.
func TestEveryIngressNginxFlagIsAccepted(t *testing.T) {
	for _, nf := range nginxflags.All() {
		cmd, _ := controllerCommand()
		fl := cmd.Flags()
		flag := fl.Lookup(nf.Name)
		if flag == nil {
			t.Errorf("--%s is not accepted", nf.Name)
			continue
		}
		if nf.Status.Taken() && nf.Causeway != nf.Name {
			target := fl.Lookup(nf.Causeway)
			if target == nil || flag.Value != target.Value {
				t.Errorf("--%s does not share the value of --%s", nf.Name, nf.Causeway)
			}
		}
		if want := nf.Status == nginxflags.NotApplicable || nf.Status == nginxflags.Unsupported; flag.Hidden != want && nf.Causeway != nf.Name {
			t.Errorf("--%s (%s): hidden %v", nf.Name, nf.Status, flag.Hidden)
		}
		if (flag.NoOptDefVal == "true") != nf.Bool {
			t.Errorf("--%s: taken alone %v, want %v (ingress-nginx's is a boolean: %v)", nf.Name, flag.NoOptDefVal == "true", nf.Bool, nf.Bool)
		}
	}
}

// ingressNginxChartArgs are the arguments ingress-nginx's chart passes,
// with a few common extraArgs.
var ingressNginxChartArgs = []string{
	"--publish-service=ingress-nginx/ingress-nginx-controller",
	"--election-id=ingress-nginx-leader",
	"--controller-class=k8s.io/ingress-nginx",
	"--ingress-class=nginx",
	"--configmap=ingress-nginx/ingress-nginx-controller",
	"--validating-webhook=:8443",
	"--validating-webhook-certificate=/usr/local/certificates/cert",
	"--validating-webhook-key=/usr/local/certificates/key",
	"--enable-metrics=false",
	"--enable-topology-aware-routing=true",
	"--profiling=false",
	"--v=2",
	"--shutdown-grace-period=10",
	"--enable-ssl-passthrough",
}

// TestIngressNginxChartArgs: the chart's arguments parse, the aliases set
// Causeway's flags, and each flag that is ignored or taken differently is
// reported with its level.
func TestIngressNginxChartArgs(t *testing.T) {
	cmd, f, err := parseController(t, ingressNginxChartArgs...)
	if err != nil {
		t.Fatal(err)
	}
	if f.kube.electionID != "ingress-nginx-leader" || f.controllerName != "k8s.io/ingress-nginx" || f.ingressClass != "nginx" ||
		f.webhook.address != ":8443" || f.webhook.certFile != "/usr/local/certificates/cert" || f.metrics.enabled ||
		f.shutdownGrace != 10*time.Second || !f.sslPassthrough || f.logLevel != "info" {
		t.Errorf("flags not taken: %+v", f)
	}
	var logs bytes.Buffer
	reg := prometheus.NewRegistry()
	reportIngressNginxFlags(cmd.Flags(), slog.New(slog.NewTextHandler(&logs, nil)), reg)
	for _, want := range []string{
		`level=INFO msg="ingress-nginx flag taken" flag=--election-id value=ingress-nginx-leader as=--leader-election-id`,
		`level=INFO msg="ingress-nginx flag taken" flag=--controller-class value=k8s.io/ingress-nginx as=--controller-name`,
		`level=WARN msg="ingress-nginx flag not supported: ignored" flag=--enable-topology-aware-routing value=true instead=`,
		`level=INFO msg="ingress-nginx flag taken with a difference" flag=--profiling value=false difference=`,
		`level=INFO msg="ingress-nginx flag taken with a difference" flag=--v value=2`,
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %s:\n%s", want, logs.String())
		}
	}
	for _, quiet := range []string{"--configmap", "--publish-service", "--shutdown-grace-period", "--enable-ssl-passthrough"} {
		if strings.Contains(logs.String(), "flag="+quiet+" ") {
			t.Errorf("%s, taken as ingress-nginx does under its name, is logged:\n%s", quiet, logs.String())
		}
	}
	want := `
# HELP causeway_ignored_flags 1 for each ingress-nginx flag given that the controller ignores, by flag and status (not-applicable, unsupported); docs/migrating-from-ingress-nginx.md says what to use instead.
# TYPE causeway_ignored_flags gauge
causeway_ignored_flags{flag="--enable-topology-aware-routing",status="unsupported"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "causeway_ignored_flags"); err != nil {
		t.Error(err)
	}

	// A flag for something Causeway does not have is an INFO line and a
	// series of the metric.
	cmd, _, err = parseController(t, "--dynamic-configuration-retries=5")
	if err != nil {
		t.Fatal(err)
	}
	logs.Reset()
	reg = prometheus.NewRegistry()
	reportIngressNginxFlags(cmd.Flags(), slog.New(slog.NewTextHandler(&logs, nil)), reg)
	if want := `level=INFO msg="ingress-nginx flag ignored" flag=--dynamic-configuration-retries value=5 status=not-applicable`; !strings.Contains(logs.String(), want) {
		t.Errorf("log lacks %s:\n%s", want, logs.String())
	}
	want = `
# HELP causeway_ignored_flags 1 for each ingress-nginx flag given that the controller ignores, by flag and status (not-applicable, unsupported); docs/migrating-from-ingress-nginx.md says what to use instead.
# TYPE causeway_ignored_flags gauge
causeway_ignored_flags{flag="--dynamic-configuration-retries",status="not-applicable"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "causeway_ignored_flags"); err != nil {
		t.Error(err)
	}
}

// TestHarmlessUnsupportedFlag: an unsupported feature turned off asks for
// what Causeway does anyway: an INFO line, not a warning.
func TestHarmlessUnsupportedFlag(t *testing.T) {
	cmd, _, err := parseController(t, "--enable-topology-aware-routing=false")
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	reportIngressNginxFlags(cmd.Flags(), slog.New(slog.NewTextHandler(&logs, nil)), prometheus.NewRegistry())
	if !strings.Contains(logs.String(), `level=INFO msg="ingress-nginx flag ignored" flag=--enable-topology-aware-routing value=false status=unsupported`) {
		t.Errorf("log:\n%s", logs.String())
	}
}

// TestUnknownFlag: a flag neither Causeway nor ingress-nginx has still
// stops the controller, naming it and the closest known flag.
func TestUnknownFlag(t *testing.T) {
	for _, tc := range []struct{ arg, want string }{
		{"--publish-servce=a/b", "unknown flag --publish-servce: neither Causeway nor ingress-nginx has it (did you mean --publish-service?)"},
		{"--election-idd=x", "(did you mean --election-id?)"},
		{"--no-such-thing", "unknown flag --no-such-thing: neither Causeway nor ingress-nginx has it; `causeway controller --help`"},
	} {
		root := &cobra.Command{Use: "causeway", SilenceErrors: true, SilenceUsage: true}
		root.AddCommand(newControllerCommand())
		root.SetArgs([]string{"controller", tc.arg})
		root.SetOut(io.Discard)
		err := root.Execute()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.arg, err, tc.want)
		}
	}
}

// TestResolve: the flags that stand for several others.
func TestResolve(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		check   func(*controllerFlags) bool
		wantErr string
	}{
		{name: "defaults", check: func(f *controllerFlags) bool {
			return f.healthPort == 8081 && f.metricsPort == 9113 && f.kube.leaseDuration == 15*time.Second && f.logLevel == "info"
		}},
		{name: "healthz-port serves both", args: []string{"--healthz-port=10254"},
			check: func(f *controllerFlags) bool { return f.healthPort == 10254 && f.metricsPort == 10254 }},
		{name: "healthz-port with metrics-port", args: []string{"--healthz-port=10254", "--metrics-port=9113"},
			wantErr: "--healthz-port sets --health-port, --metrics-port; give one or the other"},
		{name: "election-ttl", args: []string{"--election-ttl=30s"}, check: func(f *controllerFlags) bool {
			return f.kube.leaseDuration == 30*time.Second && f.kube.renewDeadline == 15*time.Second && f.kube.retryPeriod == 7500*time.Millisecond &&
				f.kube.validate() == nil
		}},
		{name: "election-ttl with a lease duration", args: []string{"--election-ttl=30s", "--leader-election-retry-period=1s"}, wantErr: "give one or the other"},
		{name: "zero election-ttl", args: []string{"--election-ttl=0s"}, wantErr: "must be positive"},
		{name: "v=2 stays info", args: []string{"--v=2"}, check: func(f *controllerFlags) bool { return f.logLevel == "info" }},
		{name: "v=3 is debug", args: []string{"-v=3"}, check: func(f *controllerFlags) bool { return f.logLevel == "debug" }},
		{name: "log-level wins over v", args: []string{"--v=5", "--log-level=warn"}, check: func(f *controllerFlags) bool { return f.logLevel == "warn" }},
		{name: "publish-status-address", args: []string{"--publish-status-address=192.0.2.1,lb.example.com"}, check: func(f *controllerFlags) bool {
			return strings.Join(f.kube.publishAddresses, " ") == "192.0.2.1 lb.example.com"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, f, err := parseController(t, tc.args...)
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error %v, want one containing %q", err, tc.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case !tc.check(f):
				t.Errorf("flags %+v", f)
			}
		})
	}
}

// TestValidateNamespaceSelector: --watch-namespace-selector is a label
// selector and excludes --watch-namespace, as in ingress-nginx.
func TestValidateNamespaceSelector(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"--watch-namespace-selector=team in (web,shop),!legacy"}, ""},
		{[]string{"--watch-namespace-selector=team=web", "--watch-namespace=shop"}, "exclude each other"},
		{[]string{"--watch-namespace-selector=team==="}, "--watch-namespace-selector"},
	} {
		_, f, err := parseController(t, append(tc.args, "--state-dir", t.TempDir())...)
		if err != nil {
			t.Fatal(err)
		}
		err = f.validate()
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%v: validate = %v, want %q", tc.args, err, tc.wantErr)
		}
	}
}

// TestStatusServers: one server for /healthz, /readyz and /metrics when
// the ports are the same (ingress-nginx's layout), two otherwise.
func TestStatusServers(t *testing.T) {
	health := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "health "+r.URL.Path) })
	metrics := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "metrics "+r.URL.Path) })
	get := func(h http.Handler, path string) string {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec.Body.String()
	}

	_, f, err := parseController(t, "--healthz-port=10254", "--healthz-host=127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	servers := f.statusServers(health, metrics)
	if len(servers) != 1 || servers[0].Addr != "127.0.0.1:10254" {
		t.Fatalf("servers %+v, want one on 127.0.0.1:10254", servers)
	}
	for path, want := range map[string]string{"/healthz": "health /healthz", "/readyz": "health /readyz", "/metrics": "metrics /metrics"} {
		if got := get(servers[0].Handler, path); got != want {
			t.Errorf("GET %s = %q, want %q", path, got, want)
		}
	}

	_, f, _ = parseController(t)
	servers = f.statusServers(health, metrics)
	if len(servers) != 2 || servers[0].Addr != ":8081" || servers[1].Addr != ":9113" || get(servers[0].Handler, "/healthz") != "health /healthz" {
		t.Fatalf("servers %+v, want :8081 and :9113, and no profiler", servers)
	}

	// --profiling (ingress-nginx's flag) adds Go's profiler, on loopback
	// unless --profiler-address says otherwise.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--profiling"}, "127.0.0.1:10245"},
		{[]string{"--profiling", "--profiler-address=0.0.0.0", "--profiler-port=6060"}, "0.0.0.0:6060"},
	} {
		_, f, _ = parseController(t, c.args...)
		servers = f.statusServers(health, metrics)
		if len(servers) != 3 || servers[2].Addr != c.want {
			t.Fatalf("%v: servers %+v, want the profiler on %s third", c.args, servers, c.want)
		}
		if got := get(servers[2].Handler, "/debug/pprof/"); !strings.Contains(got, "heap") {
			t.Errorf("%v: GET /debug/pprof/ = %.200q, want the profile index", c.args, got)
		}
		if got := get(servers[2].Handler, "/metrics"); strings.Contains(got, "metrics /metrics") {
			t.Errorf("%v: the profiler's server answers /metrics", c.args)
		}
	}
}

// TestIngressNginxDeploymentArgs: the args of an ingress-nginx Deployment,
// its binary first, run the controller when Causeway's image takes them
// (its entrypoint is causeway).
func TestIngressNginxDeploymentArgs(t *testing.T) {
	root := &cobra.Command{Use: "causeway", SilenceErrors: true, SilenceUsage: true}
	root.AddCommand(newControllerCommand())
	cmd, rest, err := root.Find(append([]string{"/nginx-ingress-controller"}, ingressNginxChartArgs...))
	if err != nil || cmd.Name() != "controller" {
		t.Fatalf("found %v (%v), want the controller command", cmd, err)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Fatal(err)
	}
}
