package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/causeway/causeway/internal/flavour"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"os/user"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.opentelemetry.io/otel"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/class"
	"github.com/causeway/causeway/internal/controller"
	"github.com/causeway/causeway/internal/externalname"
	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/metrics"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/render"
	"github.com/causeway/causeway/internal/runtime"
	"github.com/causeway/causeway/internal/source"
	"github.com/causeway/causeway/internal/source/files"
	"github.com/causeway/causeway/internal/source/kube"
	"github.com/causeway/causeway/internal/stapling"
	"github.com/causeway/causeway/internal/tracing"
	"github.com/causeway/causeway/internal/version"
)

type controllerFlags struct {
	manifests         string
	kubeconfig        string
	apiserverHost     string
	rootCAFile        string
	listenAddress     string
	httpPort          int
	httpsPort         int
	healthPort        int
	metricsPort       int
	healthzPort       int
	healthzHost       string
	profiling         bool
	profilerAddress   string
	profilerPort      int
	stateDir          string
	nginxBinary       string
	controllerName    string
	ingressClass      string
	watchWithoutClass bool
	watchNamespaces   []string
	namespaceSelector string
	customResources   bool
	gatewayAPI        bool
	certManager       bool
	externalDNS       bool
	configMap         string
	reloadTimeout     time.Duration
	healInterval      time.Duration
	shutdownTimeout   time.Duration
	shutdownGrace     time.Duration
	logLevel          string
	verbosity         int
	version           bool
	dataplane         string
	modulesDir        string
	crsDir            string
	luaPackagePath    string
	nginxUser         string
	syncQuiet         time.Duration
	ocspMinRefresh    time.Duration
	syncMaxDelay      time.Duration
	annotationsPrefix string
	defaultBackend    string
	disableCatchAll   bool
	defaultSSLCert    string
	globalConfig      string
	tlsPassthrough    bool
	sslPassthrough    bool
	tcpServices       string
	udpServices       string
	noExternalName    bool
	geoIP2Dir         string
	maxmindEditions   []string
	kube              kubeFlags
	metrics           requestMetricsFlags
	webhook           webhookFlags
	gateway           gatewayFlags
}

func newControllerCommand() *cobra.Command {
	cmd, _ := controllerCommand()
	return cmd
}

// controllerCommand is `causeway controller` and the flags it fills.
func controllerCommand() (*cobra.Command, *controllerFlags) {
	f := &controllerFlags{}
	cmd := &cobra.Command{
		Use: "controller",
		// ingress-nginx's Deployments run "/nginx-ingress-controller
		// --flags...": with Causeway's image those args come after
		// causeway, and name this command.
		Aliases: []string{ingressNginxBinary},
		Short:   "Run the Ingress controller and the nginx it drives",
		Long: `Run the Ingress controller. Objects come from a directory of manifests
(--manifests) or from the Kubernetes API (--kubeconfig, or in-cluster config).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.resolve(cmd.Flags()); err != nil {
				return err
			}
			if f.version {
				printVersion(cmd)
				return nil
			}
			return runController(cmd.Context(), f, cmd.Flags())
		},
	}
	cmd.SetFlagErrorFunc(unknownFlagError)
	fl := cmd.Flags()
	fl.StringVar(&f.manifests, "manifests", "", "directory of YAML manifests to serve, watched for changes; no API server is contacted")
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file; empty means in-cluster configuration")
	fl.StringVar(&f.apiserverHost, "apiserver-host", "", "URL of the API server (https://HOST:PORT), instead of the one the kubeconfig or the in-cluster configuration names")
	fl.StringVar(&f.rootCAFile, "certificate-authority", "", "CA certificate file that the --apiserver-host's certificate is checked with")
	fl.StringVar(&f.listenAddress, "listen-address", "", "address nginx listens on for traffic (default all addresses)")
	fl.IntVar(&f.httpPort, "http-port", 80, "HTTP port")
	fl.IntVar(&f.httpsPort, "https-port", 443, "HTTPS port")
	fl.IntVar(&f.healthPort, "health-port", 8081, "port for /healthz and /readyz")
	fl.IntVar(&f.metricsPort, "metrics-port", 9113, "port for Prometheus /metrics; the same port as --health-port serves all three paths")
	fl.IntVar(&f.healthzPort, "healthz-port", 0, "ingress-nginx's layout: serve /healthz, /readyz and /metrics together on this port (ingress-nginx's is 10254), instead of --health-port and --metrics-port")
	fl.StringVar(&f.healthzHost, "healthz-host", "", "address the health and metrics ports listen on (default all addresses)")
	fl.BoolVar(&f.profiling, "profiling", false, "serve Go's profiler, /debug/pprof/, on --profiler-address and --profiler-port (ingress-nginx's flag, off here by default)")
	fl.StringVar(&f.profilerAddress, "profiler-address", "127.0.0.1", "address the profiler listens on, with --profiling")
	fl.IntVar(&f.profilerPort, "profiler-port", 10245, "port the profiler listens on, with --profiling")
	fl.StringVar(&f.stateDir, "state-dir", "/var/lib/causeway", "directory for rendered configuration, secrets and sockets")
	fl.StringVar(&f.nginxBinary, "nginx-binary", "nginx", "nginx or angie executable")
	fl.StringVar(&f.controllerName, "controller-name", "causeway.io/ingress-controller", "IngressClass spec.controller value this controller serves")
	fl.StringVar(&f.ingressClass, "ingress-class", "causeway", "IngressClass name served even without an IngressClass object")
	fl.BoolVar(&f.watchWithoutClass, "watch-ingress-without-class", false, "also serve Ingresses that name no class")
	fl.StringArrayVar(&f.watchNamespaces, "watch-namespace", nil, "namespace to watch (repeatable; default all)")
	fl.StringVar(&f.namespaceSelector, "watch-namespace-selector", "", "label selector of the namespaces whose Ingresses and custom resources are served (instead of --watch-namespace); needs list and watch on namespaces")
	fl.BoolVar(&f.customResources, "enable-custom-resources", true, "read NGINX Ingress Controller's k8s.nginx.org/v1 resources (VirtualServer and the others) whose CRDs are installed when the controller starts")
	fl.BoolVar(&f.gatewayAPI, "enable-gateway-api", true, "read Gateway API's gateway.networking.k8s.io/v1 resources (GatewayClass, Gateway, ListenerSet, the routes, ReferenceGrant, BackendTLSPolicy) whose CRDs are installed (asked again every 30 s)")
	fl.BoolVar(&f.certManager, "enable-cert-manager", false, "have the leader write the cert-manager Certificates that VirtualServers ask for in spec.tls.cert-manager (needs the custom resources and RBAC for cert-manager.io certificates)")
	fl.BoolVar(&f.externalDNS, "enable-external-dns", false, "have the leader write the externaldns.nginx.org DNSEndpoints that VirtualServers ask for in spec.externalDNS, for external-dns's CRD source (needs the custom resources, --publish-service or --publish-address, and RBAC for dnsendpoints)")
	fl.StringVar(&f.configMap, "configmap", "causeway-system/causeway", "NAMESPACE/NAME of the ConfigMap holding global settings")
	fl.DurationVar(&f.reloadTimeout, "reload-timeout", 15*time.Second, "how long to wait for nginx workers to report a new configuration")
	fl.DurationVar(&f.healInterval, "heal-interval", 10*time.Second, "how often the state directory is compared with what was written, repaired, and checked for what nginx workers must reach")
	fl.DurationVar(&f.shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long nginx may take to finish requests on shutdown")
	fl.Var((*gracePeriod)(&f.shutdownGrace), "shutdown-grace-period", "after SIGTERM, how long to keep serving while /readyz fails, so that Services stop sending new connections before nginx stops accepting them; seconds (ingress-nginx's form) or a duration such as 5s")
	fl.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	fl.IntVarP(&f.verbosity, "v", "v", 0, "ingress-nginx's (klog's) verbosity: 3 or more is --log-level=debug, unless --log-level is given")
	fl.BoolVar(&f.version, "version", false, "print the version and commit, and exit")
	fl.StringVar(&f.dataplane, "dataplane", "auto", "lua (endpoint changes without reloads), plain (reload on endpoint changes), or auto (lua when nginx can load it)")
	fl.DurationVar(&f.syncQuiet, "sync-quiet-period", 10*time.Millisecond, "after a change, wait this long for more changes before applying")
	fl.DurationVar(&f.syncMaxDelay, "sync-max-delay", 500*time.Millisecond, "apply at most this long after the first of a stream of changes")
	fl.StringVar(&f.nginxUser, "nginx-user", "", "user nginx workers run as when the controller runs as root (default www-data, else nobody)")
	fl.StringVar(&f.modulesDir, "nginx-modules-dir", "/usr/lib/nginx/modules", "directory holding ndk_http_module.so, ngx_http_lua_module.so, ngx_http_brotli_filter_module.so, ngx_http_headers_more_filter_module.so and ngx_http_modsecurity_module.so")
	fl.StringVar(&f.crsDir, "modsecurity-crs-dir", runtime.DefaultCRSDir, "directory of the OWASP Core Rule Set, whose rules/*.conf ModSecurity loads for enable-owasp-core-rules (Debian's modsecurity-crs)")
	fl.StringVar(&f.luaPackagePath, "lua-package-path", render.DefaultLuaPackagePath, "where the Lua balancer finds lua-resty-core and lua-resty-lrucache: lua_package_path templates (absolute paths with \"?\") separated by \";\", ending in \";;\" to search LuaJIT's default path after them; the default, \";;\", finds Debian's packages")
	fl.StringVar(&f.annotationsPrefix, "annotations-prefix", annotations.DefaultPrefix, "prefix of the ingress-nginx annotations read from Ingresses")
	fl.StringVar(&f.defaultBackend, "default-backend-service", "", "NAMESPACE/NAME[:PORT] of a Service that answers requests no rule matches (instead of a 404) and renders custom-http-errors")
	fl.BoolVar(&f.disableCatchAll, "disable-catch-all", false, "refuse Ingresses with a spec.defaultBackend (a catch-all), each with a Problem, as ingress-nginx's flag does")
	fl.StringVar(&f.defaultSSLCert, "default-ssl-certificate", "", "NAMESPACE/NAME of a kubernetes.io/tls Secret presented for unknown server names and hosts without a certificate of their own, instead of the self-generated one")
	fl.StringVar(&f.globalConfig, "global-configuration", "", "NAMESPACE/NAME of the GlobalConfiguration whose TCP and UDP listeners TransportServers use; the listeners are bound on --listen-address")
	fl.BoolVar(&f.tlsPassthrough, "enable-tls-passthrough", false, "serve TLS passthrough by server name on the HTTPS port: tls-passthrough TransportServers and ssl-passthrough Ingresses; the HTTPS listener then sits behind nginx's stream module (NGINX Ingress Controller's flag; the same as --enable-ssl-passthrough)")
	fl.BoolVar(&f.sslPassthrough, "enable-ssl-passthrough", false, "the same as --enable-tls-passthrough (ingress-nginx's flag)")
	fl.StringVar(&f.tcpServices, "tcp-services-configmap", "", "NAMESPACE/NAME of ingress-nginx's tcp-services ConfigMap: \"PORT\": \"NAMESPACE/SERVICE:PORT[:PROXY[:PROXY]]\" entries served as TCP listeners on --listen-address")
	fl.StringVar(&f.udpServices, "udp-services-configmap", "", "NAMESPACE/NAME of ingress-nginx's udp-services ConfigMap: \"PORT\": \"NAMESPACE/SERVICE:PORT\" entries served as UDP listeners on --listen-address")
	fl.StringVar(&f.geoIP2Dir, "geoip2-dir", "/etc/ingress-controller/geoip", "directory of the MaxMind databases (<edition>.mmdb) that the ConfigMap's use-geoip2 reads, mounted from a volume (Causeway downloads none)")
	fl.StringSliceVar(&f.maxmindEditions, "maxmind-edition-ids", []string{"GeoLite2-City", "GeoLite2-ASN"}, "MaxMind editions read from --geoip2-dir with use-geoip2 (ingress-nginx's flag): GeoLite2-Country, GeoIP2-Country, GeoLite2-City, GeoIP2-City, GeoLite2-ASN, GeoIP2-ASN, GeoIP2-ISP, GeoIP2-Connection-Type, GeoIP2-Anonymous-IP")
	fl.DurationVar(&f.ocspMinRefresh, "ocsp-min-refresh", time.Minute, "enable-ocsp: the shortest time before a stapled OCSP response is fetched again (normally halfway to its nextUpdate) and before a failed fetch is retried")
	fl.BoolVar(&f.noExternalName, "disable-svc-external-name", false, "refuse Services of type ExternalName as backends (ingress-nginx's flag): their paths answer 503 with a Problem")
	f.kube.register(fl)
	f.metrics.register(fl)
	f.webhook.register(fl)
	f.gateway.register(fl)
	registerIngressNginxFlags(fl)
	return cmd, f
}

func (f *controllerFlags) validate() error {
	if f.listenAddress != "" {
		if _, err := netip.ParseAddr(f.listenAddress); err != nil {
			return fmt.Errorf("--listen-address: %w", err)
		}
	}
	for name, p := range map[string]int{"--http-port": f.httpPort, "--https-port": f.httpsPort, "--health-port": f.healthPort, "--metrics-port": f.metricsPort} {
		if p < 1 || p > 65535 {
			return fmt.Errorf("%s %d is out of range", name, p)
		}
	}
	if f.healInterval <= 0 {
		return fmt.Errorf("--heal-interval %s must be positive", f.healInterval)
	}
	if f.ocspMinRefresh < time.Second {
		return fmt.Errorf("--ocsp-min-refresh %s must be at least 1s", f.ocspMinRefresh)
	}
	if errs := validation.IsDNS1123Subdomain(f.annotationsPrefix); len(errs) > 0 {
		return fmt.Errorf("--annotations-prefix %q: %s", f.annotationsPrefix, strings.Join(errs, "; "))
	}
	if f.namespaceSelector != "" {
		if len(f.watchNamespaces) > 0 {
			return fmt.Errorf("--watch-namespace and --watch-namespace-selector exclude each other")
		}
		if _, err := labels.Parse(f.namespaceSelector); err != nil {
			return fmt.Errorf("--watch-namespace-selector %q: %w", f.namespaceSelector, err)
		}
	}
	if f.defaultBackend != "" {
		if err := checkServiceRef(f.defaultBackend); err != nil {
			return fmt.Errorf("--default-backend-service: %w", err)
		}
	}
	for _, r := range f.objectRefs() {
		if r.value != "" {
			if err := checkObjectRef(r.kind, r.value); err != nil {
				return fmt.Errorf("%s: %w", r.flag, err)
			}
		}
	}
	// nginx resolves relative paths against its prefix, not our working
	// directory, so the state directory is made absolute.
	abs, err := filepath.Abs(f.stateDir)
	if err != nil {
		return fmt.Errorf("--state-dir: %w", err)
	}
	f.stateDir = abs
	if f.modulesDir, err = filepath.Abs(f.modulesDir); err != nil {
		return fmt.Errorf("--nginx-modules-dir: %w", err)
	}
	if f.crsDir, err = filepath.Abs(f.crsDir); err != nil {
		return fmt.Errorf("--modsecurity-crs-dir: %w", err)
	}
	if f.geoIP2Dir, err = filepath.Abs(f.geoIP2Dir); err != nil {
		return fmt.Errorf("--geoip2-dir: %w", err)
	}
	for _, e := range f.maxmindEditions {
		if _, ok := model.LookupGeoIP2Edition(e); !ok {
			return fmt.Errorf("--maxmind-edition-ids: %q is not an edition Causeway reads", e)
		}
	}
	if f.luaPackagePath, err = render.ParseLuaPackagePath(f.luaPackagePath); err != nil {
		return fmt.Errorf("--lua-package-path %q: %w", f.luaPackagePath, err)
	}
	if err := f.kube.validate(); err != nil {
		return err
	}
	if err := f.webhook.validate(f.manifests); err != nil {
		return err
	}
	if f.gatewayAPI && f.manifests == "" {
		// The port range is for the Gateways' Services, which only the
		// kube source has: with --manifests a listener's port is nginx's.
		if err := f.gateway.validate(f.ownPorts()); err != nil {
			return err
		}
	}
	switch f.dataplane {
	case "auto", "lua", "plain":
	default:
		return fmt.Errorf("--dataplane %q: want auto, lua or plain", f.dataplane)
	}
	if f.manifests != "" {
		if st, err := os.Stat(f.manifests); err != nil || !st.IsDir() {
			return fmt.Errorf("--manifests %q is not a directory", f.manifests)
		}
	}
	return nil
}

func runController(ctx context.Context, f *controllerFlags, fl *pflag.FlagSet) error {
	if err := f.validate(); err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	log.Info("starting causeway controller", "version", version.Version, "commit", version.Commit)

	// Everything runs until ctx ends; a signal first starts the grace
	// period (--shutdown-grace-period), then ends ctx.
	signalled, stopSignals := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stopSignals()
	ctx, stop := context.WithCancel(ctx)
	defer stop()

	src, err := newSource(f, log)
	if err != nil {
		return err
	}
	dir := layout.Dir(f.stateDir)
	workerUser := workerUser(f.nginxUser)
	// The Lua probe below needs the state directory the Manager prepares;
	// the Lua modules then become the Manager's static files.
	mgr, err := runtime.NewManager(runtime.Options{Binary: f.nginxBinary, StateDir: dir, Log: log.With("component", "nginx"),
		VerifyTimeout: f.reloadTimeout, WorkerUser: workerUser, HealEvery: f.healInterval})
	if err != nil {
		return err
	}
	met := metrics.NewWith(metrics.Options{Identity: metrics.IdentityFromEnv(f.ingressClass), Log: log.With("component", "metrics")})
	reportIngressNginxFlags(fl, log, met.Registry)
	met.WatchNginx(mgr.MasterPID)
	met.ScrapeStubStatus(dir.StatusSocket())
	requests, err := f.metrics.collector(log, met)
	if err != nil {
		return err
	}
	flav, err := flavour.Detect(ctx, f.nginxBinary)
	if err != nil {
		return fmt.Errorf("--nginx-binary: %w", err)
	}
	log.Info("data plane", "binary", f.nginxBinary, "flavour", flav.String())
	params := render.Params{StateDir: dir, ListenAddress: f.listenAddress, HTTPPort: f.httpPort, HTTPSPort: f.httpsPort, User: workerUser, Flavour: flav}
	params.OpenFilesLimit = runtime.OpenFilesLimit()
	// Brotli is loaded only when the ConfigMap enables it; without the
	// module, enable-brotli is a Problem on the ConfigMap.
	if mod, err := runtime.DetectModule(ctx, f.nginxBinary, f.modulesDir, runtime.BrotliModule, dir); err != nil {
		log.Info("brotli compression unavailable", "reason", err)
	} else {
		params.BrotliModule = mod
	}
	// headers-more removes the Server header when server-tokens is false
	// (the default), as in ingress-nginx; without it nginx still sends
	// "Server: nginx", without its version.
	if mod, err := runtime.DetectModule(ctx, f.nginxBinary, f.modulesDir, runtime.HeadersMoreModule, dir); err != nil {
		log.Info("headers-more unavailable: with server-tokens false, responses still carry \"Server: nginx\" (without the version)", "reason", err)
	} else {
		params.HeadersMoreModule = mod
	}
	// ModSecurity is loaded only when a path runs it; without the module
	// (Angie cannot load Debian's), such paths answer 503.
	modsecMissing, crsAvailable := "", false
	if ms, crsErr, err := runtime.DetectModSecurity(ctx, f.nginxBinary, f.modulesDir, f.crsDir, dir); err != nil {
		modsecMissing = modSecurityMissing(flav, err)
		log.Info("ModSecurity unavailable: paths that ask for it answer 503", "reason", err)
	} else {
		params.ModSecurity = ms
		crsAvailable = crsErr == nil
		if crsErr != nil {
			log.Info("OWASP Core Rule Set unavailable: paths that ask for it answer 503", "reason", crsErr)
		}
	}
	// use-geoip2 reads the databases mounted in --geoip2-dir.
	if mod, err := runtime.DetectModule(ctx, f.nginxBinary, f.modulesDir, runtime.GeoIP2Module, dir); err != nil {
		log.Info("geoip2 module unavailable: with use-geoip2, the $geoip2_* variables are empty", "reason", err)
	} else {
		params.GeoIP2Module = mod
	}
	dbs, dbErrs := runtime.FindGeoIP2Databases(f.geoIP2Dir, f.maxmindEditions)
	for _, err := range dbErrs {
		log.Info("GeoIP2 database not used", "reason", err)
	}
	params.GeoIP2Databases = dbs
	// The stream module serves TransportServers; it is loaded only when
	// one is served, and not at all where it is compiled in (Angie).
	streamAvailable := true
	if mod, err := runtime.DetectStream(ctx, f.nginxBinary, f.modulesDir, dir); err != nil {
		streamAvailable = false
		log.Info("stream module unavailable: TransportServers are not served", "reason", err)
	} else {
		params.StreamModule = mod
	}
	// spec.gunzip of VirtualServers needs the gunzip filter: Debian's
	// nginx has it, the vendored Angie build does not.
	gunzip := runtime.DetectGunzip(ctx, f.nginxBinary, dir)
	if !gunzip {
		log.Info("gunzip filter unavailable: a VirtualServer's spec.gunzip is reported and not applied")
	}
	passthrough := f.tlsPassthrough || f.sslPassthrough
	if passthrough && streamAvailable {
		params.StreamRealIP = runtime.DetectStreamRealIP(ctx, f.nginxBinary, params.StreamModule, dir)
		if !params.StreamRealIP {
			log.Info("stream realip module unavailable: with use-proxy-protocol, TLS passthrough is not served")
		}
	}
	var pusher controller.Pusher
	var dynClient *balancer.Client
	if f.dataplane != "plain" {
		mods, err := runtime.DetectLua(ctx, f.nginxBinary, f.modulesDir, f.luaPackagePath, dir)
		switch {
		case err != nil && f.dataplane == "lua":
			return fmt.Errorf("--dataplane=lua: %w", err)
		case err != nil:
			log.Warn("Lua balancer unavailable: falling back to plain upstreams; every endpoint change will reload nginx", "reason", err)
		default:
			lua, err := luaFiles()
			if err != nil {
				return err
			}
			mgr.SetStatic(lua)
			params.Dynamic = &render.Dynamic{Modules: mods, LuaPackagePath: f.luaPackagePath}
			client := balancer.NewClient(dir.DynamicSocket())
			defer client.Close()
			dynClient, pusher = client, client
			log.Info("Lua balancer enabled: endpoint and certificate changes apply without reloads")
			warnHopSockets(log, dir)
		}
	}
	var reqLog *metrics.RequestLog
	if requests != nil {
		params.Metrics = f.metrics.render(requests)
		params.KnownSeries = requests.KnownSeries
		if reqLog, err = metrics.OpenRequestLog(dir.MetricsLog(), requests, log); err != nil {
			return err
		}
		defer reqLog.Close()
		reqLog.RotateAfter = f.metrics.logRotateSize
		go reqLog.Run(ctx, time.Second)
		log.Info("per-request metrics enabled", "log", dir.MetricsLog())
	}
	// Tracing is the ConfigMap's and the Ingresses' to turn on: the span
	// log is always read, and written only where a location is traced.
	spans, err := tracing.New(tracing.Options{Log: log.With("component", "tracing"), Registry: met.Registry})
	if err != nil {
		return err
	}
	otel.SetErrorHandler(tracing.ErrorHandler(log.With("component", "tracing")))
	spanLog, err := metrics.OpenRequestLog(dir.SpanLog(), spans, log)
	if err != nil {
		return err
	}
	defer spanLog.Close()
	spanLog.Name, spanLog.MaxLine, spanLog.RotateAfter = "span log", spanLogMaxLine, f.metrics.logRotateSize
	go spanLog.Run(ctx, tracing.ReadEvery)
	mgr.SetBeforeOpen(func() {
		if reqLog != nil {
			reqLog.Rotate()
		}
		spanLog.Rotate()
	})
	reporter, err := newKubeReporter(f, log, met)
	if err != nil {
		return err
	}
	modelOpts := build.Options{
		Class:                 class.Options{ControllerName: f.controllerName, IngressClass: f.ingressClass, WatchWithoutClass: f.watchWithoutClass},
		ConfigMap:             f.configMap,
		AnnotationsPrefix:     f.annotationsPrefix,
		DefaultBackendService: f.defaultBackend,
		DisableCatchAll:       f.disableCatchAll,
		DefaultSSLCertificate: f.defaultSSLCert,
		BrotliAvailable:       params.BrotliModule != "",
		HeadersMoreAvailable:  params.HeadersMoreModule != "",
		LuaAvailable:          params.Dynamic != nil,
		GlobalConfiguration:   f.globalConfig,
		TCPServices:           f.tcpServices,
		UDPServices:           f.udpServices,
		StreamAvailable:       streamAvailable,
		TLSPassthrough:        passthrough,
		StreamRealIPAvailable: params.StreamRealIP,
		GunzipAvailable:       gunzip,
		ModSecurityAvailable:  params.ModSecurity != nil,
		ModSecurityMissing:    modsecMissing,
		CRSAvailable:          crsAvailable,
		GatewayServices:       f.manifests == "",
		CleartextHTTP2Detect:  flav.HTTP2Directive(),
		GatewayAddresses:      gatewayAddresses(f.listenAddress),
		CertManager:           f.certManager && f.customResources && f.manifests == "",
		ExternalDNS:           f.externalDNS && f.customResources && f.manifests == "",
		NoPublishedAddress:    !f.kube.publishes(),
		NoExternalName:        f.noExternalName,
		GeoIP2Available:       params.GeoIP2Module != "",
		GeoIP2Databases:       geoIP2Editions(dbs),
		HTTPPort:              f.httpPort,
		HTTPSPort:             f.httpsPort,
	}
	names := externalname.New(externalname.Options{Log: log.With("component", "externalname")})
	go names.Run(ctx)
	staples := stapling.New(stapling.Options{Log: log.With("component", "ocsp"), MinRefresh: f.ocspMinRefresh, Retry: f.ocspMinRefresh})
	go staples.Run(ctx)
	counter, runCounter, err := newReplicaCounter(f, log)
	if err != nil {
		return err
	}
	if runCounter != nil {
		go runCounter(ctx)
	}
	wh, err := newWebhook(f, modelOpts, src, log, met.Registry)
	if err != nil {
		return err
	}
	ctl := controller.New(controller.Options{
		Source:   src,
		Applier:  mgr,
		Model:    modelOpts,
		Render:   params,
		Log:      log,
		Metrics:  met,
		Requests: requests,
		Spans:    spans,
		OnSync: func(res controller.SyncResult) {
			wh.update(res.Snapshot)
			reporter.onSync(res)
		},
		Dynamic:   pusher,
		Names:     names,
		Staples:   staples,
		Replicas:  counter,
		Restarted: mgr.Respawned,
		Resync:    reporter.resyncRequests(),
		Health:    mgr.Health,
		Quiet:     f.syncQuiet,
		MaxDelay:  f.syncMaxDelay,
	})

	servers := f.statusServers(ctl.HealthHandler(), metricsHandler(met))
	errc := make(chan error, 4+len(servers))
	for _, s := range servers {
		ln, err := net.Listen("tcp", s.Addr)
		if err != nil {
			return fmt.Errorf("listen %s: %w", s.Addr, err)
		}
		go func() {
			if err := s.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- err
			}
		}()
	}
	go func() {
		if err := src.Run(ctx); err != nil {
			errc <- fmt.Errorf("source: %w", err)
		}
	}()
	go mgr.Supervise(ctx)
	if wh != nil {
		wh.start(ctx, errc)
	}
	reporterDone := reporter.start(ctx)
	go func() {
		if err := ctl.Run(ctx); err != nil {
			errc <- err
		}
	}()

	var runErr error
	select {
	case <-signalled.Done():
		if f.shutdownGrace > 0 {
			log.Info("shutting down: serving on while /readyz fails", "shutdown-grace-period", f.shutdownGrace)
			ctl.Drain()
			select {
			case <-time.After(f.shutdownGrace):
			case runErr = <-errc:
				log.Error("stopping after a fatal error", "err", runErr)
			}
		}
		log.Info("shutting down: asking nginx to finish in-flight requests")
	case runErr = <-errc:
		log.Error("stopping after a fatal error", "err", runErr)
	}
	stop()
	if dynClient != nil {
		// An idle keep-alive connection to the dynamic socket would keep
		// Angie's worker lingering (lingering_timeout, 5 s) before it exits.
		dynClient.Close()
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), f.shutdownTimeout)
	defer cancel()
	if err := mgr.Stop(shutdownCtx); err != nil {
		log.Error("nginx shutdown", "err", err)
	}
	// The spans of the last requests, written as the workers quit.
	spanLog.Read()
	if err := spans.Close(shutdownCtx); err != nil {
		log.Warn("tracing: spans not sent at shutdown", "err", err)
	}
	for _, s := range servers {
		s.Shutdown(shutdownCtx)
	}
	wh.shutdown(shutdownCtx)
	<-reporterDone
	log.Info("stopped")
	return runErr
}

// spanLogMaxLine bounds a span log line: a request line and headers of
// up to large-client-header-buffers, JSON-escaped.
const spanLogMaxLine = 256 << 10

func newSource(f *controllerFlags, log *slog.Logger) (source.Source, error) {
	if f.manifests != "" {
		log.Info("serving manifests from a directory; no API server is contacted", "dir", f.manifests)
		if f.namespaceSelector != "" || len(f.watchNamespaces) > 0 {
			log.Warn("--watch-namespace and --watch-namespace-selector apply to the API server: every manifest of the directory is read")
		}
		return files.New(f.manifests, log.With("component", "files")), nil
	}
	client, cfg, err := f.kubeClient()
	if err != nil {
		return nil, err
	}
	// validate parsed it.
	selector, _ := labels.Parse(f.namespaceSelector)
	opts := kube.Options{Client: client, Namespaces: f.watchNamespaces, NamespaceSelector: selector, ConfigMap: f.configMap, AnnotationsPrefix: f.annotationsPrefix,
		ServiceConfigMaps: []string{f.tcpServices, f.udpServices},
		CustomResources:   f.customResources, GatewayAPI: f.gatewayAPI, Log: log.With("component", "kube")}
	if f.gatewayAPI {
		opts.ControllerNamespace = controllerNamespace(f.configMap)
	}
	if f.customResources || f.gatewayAPI {
		// NIC's resources have no typed clientset: the source reads them,
		// and Gateway API's, through the dynamic client and converts them.
		if opts.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
			return nil, fmt.Errorf("kubernetes dynamic client: %w", err)
		}
	}
	if !f.gatewayAPI {
		log.Info("Gateway API resources disabled (--enable-gateway-api=false)")
	}
	if f.customResources {
		// Pods are read by their metadata alone (labels, for subselectors).
		if opts.Metadata, err = metadata.NewForConfig(cfg); err != nil {
			return nil, fmt.Errorf("kubernetes metadata client: %w", err)
		}
	} else {
		log.Info("custom resources disabled (--enable-custom-resources=false)")
	}
	return kube.New(opts)
}

// luaFiles are the Lua modules as files under the state directory's Lua
// directory, the one lua_package_path names.
// warnHopSockets says, when the hop servers' sockets would not fit a unix
// socket's address in dir, that new hosts reload nginx whatever the
// ConfigMap's reload-free-hosts says; it reports whether it did.
func warnHopSockets(log *slog.Logger, dir layout.Dir) bool {
	if render.HopSocketsFit(dir) {
		return false
	}
	log.Warn("reload-free hosts unavailable: the hop servers' sockets in --state-dir would be longer than a unix socket's address holds; "+
		"every new host reloads nginx, as with reload-free-hosts false. A shorter --state-dir lifts it",
		"state-dir", string(dir), "socket", render.HopSocketExample(dir), "max-bytes", balancer.MaxHostHopLen)
	return true
}

func luaFiles() (render.Files, error) {
	out := render.Files{}
	src := balancer.LuaFS()
	err := fs.WalkDir(src, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(src, name)
		out[path.Join(layout.LuaDir, name)] = data
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("lua modules: %w", err)
	}
	return out, nil
}

// workerUser picks the user nginx workers run as: only meaningful when we
// run as root (nginx ignores the directive otherwise).
func workerUser(flag string) string {
	if os.Geteuid() != 0 {
		return ""
	}
	if flag != "" {
		return flag
	}
	if _, err := user.Lookup("www-data"); err == nil {
		return "www-data"
	}
	return "nobody"
}

// modSecurityMissing says, for Problems, why the data plane cannot run
// ModSecurity: Angie's build cannot load Debian's module (another binary
// interface) and the vendored sources have no connector.
func modSecurityMissing(flav flavour.Flavour, err error) string {
	if flav.Name == flavour.Angie {
		return "the data plane is Angie, which has no ModSecurity module (Debian's ngx_http_modsecurity_module.so is built for Debian's nginx)"
	}
	return fmt.Sprintf("nginx cannot load ModSecurity (Debian's libnginx-mod-http-modsecurity): %v", err)
}

// geoIP2Editions are the editions of the databases found.
func geoIP2Editions(dbs []render.GeoIP2Database) []string {
	out := make([]string, len(dbs))
	for i, d := range dbs {
		out[i] = d.Edition
	}
	return out
}

// gatewayAddresses are every Gateway's status addresses when Gateways have
// no Service of their own (the files source): --listen-address, else
// none (all of the host's addresses, which nginx listens on, are no one
// address to name).
func gatewayAddresses(listen string) []string {
	if listen == "" || listen == "0.0.0.0" || listen == "::" {
		return nil
	}
	return []string{strings.Trim(listen, "[]")}
}
