package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/certmanager"
	"github.com/causeway/causeway/internal/class"
	"github.com/causeway/causeway/internal/controller"
	"github.com/causeway/causeway/internal/externaldns"
	gwservice "github.com/causeway/causeway/internal/gatewayservice/writer"
	"github.com/causeway/causeway/internal/metrics"
	"github.com/causeway/causeway/internal/owned"
	"github.com/causeway/causeway/internal/replicas"
	"github.com/causeway/causeway/internal/status"
	"github.com/causeway/causeway/internal/status/address"
	"github.com/causeway/causeway/internal/status/events"
	"github.com/causeway/causeway/internal/status/gatewayapi"
	"github.com/causeway/causeway/internal/status/leader"
)

// kubeFlags are the flags for what the controller owes the API: Ingress
// status, Events and the leader election that decides who writes them.
type kubeFlags struct {
	publishService    string
	publishAddresses  []string
	electionID        string
	electionNamespace string
	leaseDuration     time.Duration
	renewDeadline     time.Duration
	retryPeriod       time.Duration
	electionTTL       time.Duration
	// noElection: every replica writes, as if it led.
	noElection   bool
	updateStatus bool
	noSyncEvents bool
}

// Client-side rate limits for status and event writes. The API server's
// priority and fairness protects it; these only keep a first start with
// thousands of Ingresses from writing all their statuses in one burst.
const (
	statusQPS   = 50
	statusBurst = 100
)

func (k *kubeFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&k.publishService, "publish-service", "", "NAMESPACE/NAME of the Service whose load-balancer addresses (else external IPs) are published in Ingress status")
	fl.StringSliceVar(&k.publishAddresses, "publish-address", nil, "IP address or DNS name to publish in Ingress status (repeatable or comma-separated); excludes --publish-service")
	fl.StringVar(&k.electionID, "leader-election-id", "causeway-leader", "name of the coordination.k8s.io Lease that elects the replica writing status and events")
	fl.StringVar(&k.electionNamespace, "leader-election-namespace", "", "namespace of the Lease (default $POD_NAMESPACE, else the --configmap namespace)")
	fl.DurationVar(&k.leaseDuration, "leader-election-lease-duration", 15*time.Second, "how long a leader's Lease lasts without renewal: the longest a dead leader delays its successor")
	fl.DurationVar(&k.renewDeadline, "leader-election-renew-deadline", 10*time.Second, "how long the leader keeps trying to renew before it stops writing")
	fl.DurationVar(&k.retryPeriod, "leader-election-retry-period", 2*time.Second, "interval between attempts to acquire or renew the Lease")
	fl.DurationVar(&k.electionTTL, "election-ttl", 0, "ingress-nginx's form of the --leader-election-* timings: the lease duration, with half of it the renew deadline and a quarter the retry period")
	fl.BoolVar(&k.noElection, "disable-leader-election", false, "hold no Lease: every replica writes Ingress status and Events, as the leader would")
	fl.BoolVar(&k.updateStatus, "update-status", true, "write the published addresses into the status of the Ingresses served (needs --publish-service or --publish-address)")
	fl.BoolVar(&k.noSyncEvents, "disable-sync-events", false, "write no Normal AddedOrUpdated Events (the Warning Events about Problems stay)")
}

// validate checks the flags before anything connects, so that a mistake
// is reported at once rather than after the API server was reached.
func (k *kubeFlags) validate() error {
	if k.publishService != "" && len(k.publishAddresses) > 0 {
		return fmt.Errorf("--publish-service and --publish-address exclude each other")
	}
	if k.publishService != "" {
		if ns, name, ok := strings.Cut(k.publishService, "/"); !ok || ns == "" || name == "" {
			return fmt.Errorf("--publish-service %q: want NAMESPACE/NAME", k.publishService)
		}
	}
	if _, err := address.Parse(k.publishAddresses); err != nil {
		return fmt.Errorf("--publish-address: %w", err)
	}
	// client-go's own rules, checked here so they read as flag errors.
	switch {
	case k.retryPeriod <= 0:
		return fmt.Errorf("--leader-election-retry-period must be positive")
	case k.renewDeadline <= time.Duration(leaderelection.JitterFactor*float64(k.retryPeriod)):
		return fmt.Errorf("--leader-election-renew-deadline (%s) must exceed %.1f × --leader-election-retry-period (%s)",
			k.renewDeadline, leaderelection.JitterFactor, k.retryPeriod)
	case k.leaseDuration <= k.renewDeadline:
		return fmt.Errorf("--leader-election-lease-duration (%s) must exceed --leader-election-renew-deadline (%s)", k.leaseDuration, k.renewDeadline)
	}
	return nil
}

// leaseNamespace resolves --leader-election-namespace's default.
func (k *kubeFlags) leaseNamespace(configMap string) (string, error) {
	if k.electionNamespace != "" {
		return k.electionNamespace, nil
	}
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns, nil
	}
	if ns, _, ok := strings.Cut(configMap, "/"); ok && ns != "" {
		return ns, nil
	}
	return "", fmt.Errorf("--leader-election-namespace is empty, $POD_NAMESPACE is unset and --configmap %q names no namespace", configMap)
}

// publishes reports whether --publish-service or --publish-address is
// set: publisher returns a source of addresses exactly then.
func (k *kubeFlags) publishes() bool {
	return len(k.publishAddresses) > 0 || k.publishService != ""
}

// publisher returns where published addresses come from, or nil when
// neither --publish-service nor --publish-address is set (no status is
// written then). The flags have passed validate.
func (k *kubeFlags) publisher(client kubernetes.Interface, httpPort, httpsPort int, onChange func(), log *slog.Logger) (address.Source, *address.ServiceWatcher, error) {
	switch {
	case len(k.publishAddresses) > 0:
		addrs, err := address.Parse(k.publishAddresses)
		if err != nil {
			return nil, nil, fmt.Errorf("--publish-address: %w", err)
		}
		return address.Static(addrs), nil, nil
	case k.publishService != "":
		ns, name, _ := strings.Cut(k.publishService, "/")
		w, err := address.NewServiceWatcher(client, ns, name, httpPort, httpsPort, onChange, log)
		if err != nil {
			return nil, nil, err
		}
		return w, w, nil
	}
	return nil, nil, nil
}

// kubeReporter joins leader election, the status writer and the event
// reporter, and feeds them every sync's outcome.
type kubeReporter struct {
	log     *slog.Logger
	class   class.Options
	elector *leader.Elector
	writer  *status.Writer // nil when no addresses are published
	// crWriter writes the status of NGINX Ingress Controller's resources;
	// nil when custom resources are not read.
	crWriter *status.ResourceWriter
	// gwWriter writes the status of Gateway API's objects of Causeway's
	// classes; nil with --enable-gateway-api=false.
	gwWriter *status.GatewayWriter
	// certs writes the cert-manager Certificates VirtualServers ask for;
	// nil without --enable-cert-manager.
	certs *owned.Writer
	// dns writes the DNSEndpoints VirtualServers ask for; nil without
	// --enable-external-dns.
	dns *owned.Writer
	// gateways writes the Services of Gateways; nil without
	// --enable-gateway-api.
	gateways    *gwservice.Writer
	watcher     *address.ServiceWatcher
	events      *events.Reporter
	broadcaster record.EventBroadcaster
	// resyncs asks the controller for a sync (its Options.Resync): the
	// status writers keep no Outcome between syncs, so on becoming leader
	// or when the published addresses change they plan from a new one.
	resyncs chan struct{}
}

// newKubeReporter builds the reporter for the kube source; it returns nil
// with --manifests, where there is no API to report to.
func newKubeReporter(f *controllerFlags, log *slog.Logger, met *metrics.Metrics) (*kubeReporter, error) {
	if f.manifests != "" {
		return nil, nil
	}
	k := &f.kube
	leaseNS := ""
	if !k.noElection {
		var err error
		if leaseNS, err = k.leaseNamespace(f.configMap); err != nil {
			return nil, err
		}
	}
	// client-go logs through klog; route it into our structured log.
	klog.SetSlogLogger(log.With("component", "client-go"))

	cfg, err := f.restConfig()
	if err != nil {
		return nil, err
	}
	writeCfg := rest.CopyConfig(cfg)
	writeCfg.QPS, writeCfg.Burst = statusQPS, statusBurst
	writeClient, err := kubernetes.NewForConfig(writeCfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	// The Lease has a client of its own, so that a backlog of status
	// writes can never delay a renewal, and a timeout, so that one hung
	// request cannot outlast the renew deadline.
	leaseCfg := rest.CopyConfig(cfg)
	leaseCfg.Timeout = max(k.renewDeadline/2, time.Second)
	leaseClient, err := kubernetes.NewForConfig(leaseCfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}

	identity := leader.Identity()
	r := &kubeReporter{
		log:     log.With("component", "status"),
		class:   class.Options{ControllerName: f.controllerName, IngressClass: f.ingressClass, WatchWithoutClass: f.watchWithoutClass},
		resyncs: make(chan struct{}, 1),
	}
	r.broadcaster = record.NewBroadcaster()
	r.broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: writeClient.CoreV1().Events("")})
	built := false
	defer func() {
		if !built {
			r.broadcaster.Shutdown()
		}
	}()
	host, _, _ := strings.Cut(identity, "_")
	recorder := r.broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "causeway", Host: host})

	r.elector, err = leader.New(leader.Options{
		Client:    leaseClient,
		Namespace: leaseNS, Name: k.electionID,
		Identity:      identity,
		Disabled:      k.noElection,
		LeaseDuration: k.leaseDuration, RenewDeadline: k.renewDeadline, RetryPeriod: k.retryPeriod,
		Recorder: recorder,
		OnChange: func(leading bool) {
			if leading {
				r.resync()
			}
		},
		Log: log.With("component", "leader"),
	})
	if err != nil {
		return nil, err
	}
	src, watcher, err := k.publisher(writeClient, f.httpPort, f.httpsPort, r.resync, log.With("component", "status"))
	if err != nil {
		return nil, err
	}
	writes := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "causeway_ingress_status_writes_total",
		Help: "Ingress status writes by the leader, by result (success, conflict: retried on a newer version, failure).",
	}, []string{"result"})
	switch {
	case src != nil && !k.updateStatus:
		r.watcher = watcher
		r.log.Info("--update-status=false: Ingress status is not written")
	case src != nil:
		r.watcher = watcher
		r.writer = status.NewWriter(status.WriterOptions{
			Client: writeClient, Addresses: src, IsLeader: r.elector.IsLeader, Log: r.log,
			OnWrite: countWrite(writes),
		})
	default:
		r.log.Info("neither --publish-service nor --publish-address is set: Ingress status is not written")
	}
	if f.customResources {
		// NIC's resources have no typed clientset; the dynamic client
		// shares the typed write client's rate limits.
		dyn, err := dynamic.NewForConfig(writeCfg)
		if err != nil {
			return nil, fmt.Errorf("kubernetes dynamic client: %w", err)
		}
		r.crWriter = status.NewResourceWriter(status.ResourceWriterOptions{
			Client: dyn, Addresses: src, IsLeader: r.elector.IsLeader, Log: r.log,
			EndpointPorts: endpointPorts(watcher, f.httpPort, f.httpsPort),
			OnWrite: kindWrites(met.Registry, "causeway_custom_resource_status_writes_total",
				"Status writes of NGINX Ingress Controller's resources by the leader, by kind and result (success, conflict: retried on a newer version, failure)."),
		})
		if f.externalDNS {
			if src == nil {
				log.Warn("--enable-external-dns needs --publish-service or --publish-address, the addresses the records point at: no DNSEndpoint is written")
			} else {
				r.dns = owned.NewWriter(owned.Options{Kind: externaldns.Kind(src.Addresses), Client: dyn, IsLeader: r.elector.IsLeader,
					Recorder: recorder, Log: log.With("component", "external-dns")})
			}
		}
		if f.certManager {
			r.certs = owned.NewWriter(owned.Options{Kind: certmanager.Kind, Client: dyn, IsLeader: r.elector.IsLeader, Recorder: recorder,
				Log: log.With("component", "cert-manager")})
		}
	} else if f.certManager || f.externalDNS {
		log.Warn("--enable-cert-manager and --enable-external-dns need the custom resources (--enable-custom-resources): nothing is written")
	}
	if f.gatewayAPI {
		ns := controllerNamespace(f.configMap)
		opts, err := f.gateway.options(ns)
		if err != nil {
			return nil, err // validate checked them
		}
		// The Gateways' Services have a client of their own: a listener
		// is served only once its Service exists, so thousands of route
		// status writes sharing the status client's rate limit must not
		// queue ahead of them (85 s for 100 Gateways at 10,000 routes).
		serviceCfg := rest.CopyConfig(cfg)
		serviceCfg.QPS, serviceCfg.Burst = statusQPS, statusBurst
		serviceClient, err := kubernetes.NewForConfig(serviceCfg)
		if err != nil {
			return nil, fmt.Errorf("kubernetes client: %w", err)
		}
		r.gateways = gwservice.New(gwservice.Options{Client: serviceClient, Service: opts, ConfigMap: f.configMap, IsLeader: r.elector.IsLeader,
			Recorder: recorder, Log: log.With("component", "gateway-service")})
		r.log.Info("the leader keeps a Service per Gateway of Causeway's classes", "namespace", ns, "type", opts.Type,
			"portRange", opts.Ports.String(), "selector", f.gateway.selector)
		gc, err := gatewayclient.NewForConfig(writeCfg)
		if err != nil {
			return nil, fmt.Errorf("gateway API client: %w", err)
		}
		r.gwWriter = status.NewGatewayWriter(status.GatewayWriterOptions{
			Client: gc, IsLeader: r.elector.IsLeader, Log: r.log,
			OnWrite: kindWrites(met.Registry, "causeway_gateway_api_status_writes_total",
				"Status writes of Gateway API's objects by the leader, by kind and result (success, conflict: read again and retried, failure)."),
		})
	}
	r.events = events.New(events.Options{Recorder: recorder, IsLeader: r.elector.IsLeader, WarningsOnly: k.noSyncEvents, Log: r.log})
	met.Registry.MustRegister(writes, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "causeway_leader",
		Help: "1 while this replica holds the leader Lease and writes Ingress status and events.",
	}, func() float64 {
		if r.elector.IsLeader() {
			return 1
		}
		return 0
	}))
	met.Registry.MustRegister(met.Compat.LeaderElection(k.electionID, r.elector.IsLeader))
	met.Compat.Certificates.SetLeader(r.elector.IsLeader)
	built = true
	return r, nil
}

// countWrite counts a status write's result in writes.
func countWrite(writes *prometheus.CounterVec) func(error) {
	return func(err error) {
		switch {
		case err == nil:
			writes.WithLabelValues("success").Inc()
		case apierrors.IsConflict(err):
			writes.WithLabelValues("conflict").Inc()
		default:
			writes.WithLabelValues("failure").Inc()
		}
	}
}

// kindWrites registers a counter of status writes by kind and result,
// and returns the OnWrite that counts into it.
func kindWrites(reg prometheus.Registerer, name, help string) func(kind string, err error) {
	writes := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"kind", "result"})
	reg.MustRegister(writes)
	return func(kind string, err error) { countWrite(writes.MustCurryWith(prometheus.Labels{"kind": kind}))(err) }
}

// resync re-plans the status writers: on becoming leader, or when the
// published addresses change. The writers of status plan from the
// Outcome of the sync it asks for, which only the leader needs (the
// others write nothing, and becoming leader asks again): a follower does
// not pay a whole-cluster sync for an address change. The other writers
// plan from what they keep.
func (r *kubeReporter) resync() {
	if r.elector.IsLeader() {
		select {
		case r.resyncs <- struct{}{}:
		default: // one is pending already
		}
	}
	if r.certs != nil {
		r.certs.Resync()
	}
	if r.dns != nil {
		r.dns.Resync()
	}
	if r.gateways != nil {
		r.gateways.Resync()
	}
}

// resyncRequests is the controller's Options.Resync; nil (never) without
// a reporter.
func (r *kubeReporter) resyncRequests() <-chan struct{} {
	if r == nil {
		return nil
	}
	return r.resyncs
}

// onSync hands a sync's outcome to the writer and the event reporter. It
// is a method on a possibly nil reporter (manifest mode) and does nothing
// then.
func (r *kubeReporter) onSync(res controller.SyncResult) {
	if r == nil {
		return
	}
	o := status.NewOutcome(res.Snapshot, res.Problems, res.Err, r.class)
	r.events.Observe(o)
	if r.writer != nil {
		r.writer.Observe(o)
	}
	if r.crWriter != nil {
		r.crWriter.Observe(o)
	}
	if r.gateways != nil && res.Snapshot != nil {
		// Whether or not the configuration went live: the Services record
		// the Gateways' internal ports, which the build reads back.
		r.gateways.Observe(res.Snapshot)
	}
	if r.gwWriter != nil {
		o.GatewayAPI = gatewayapi.Input{Snapshot: res.Snapshot, Resolution: res.Gateway, Problems: res.Problems}
		r.gwWriter.Observe(o)
	}
	if o.Applied {
		for _, w := range []*owned.Writer{r.certs, r.dns} {
			if w != nil {
				w.Observe(servedVirtualServers(o))
			}
		}
	}
}

// servedVirtualServers are the VirtualServers a sync's outcome serves:
// ours and not rejected.
func servedVirtualServers(o status.Outcome) []*nicv1.VirtualServer {
	var out []*nicv1.VirtualServer
	for _, v := range o.Resources {
		if vs, ok := v.Object.(*nicv1.VirtualServer); ok && !v.Rejected {
			out = append(out, vs)
		}
	}
	return out
}

// start runs leader election, the publish-service watch and the writer
// until ctx is done. The returned channel closes once all have stopped and
// a held Lease has been released, so the next leader need not wait.
func (r *kubeReporter) start(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	if r == nil {
		close(done)
		return done
	}
	var wg sync.WaitGroup
	run := func(f func(context.Context)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(ctx)
		}()
	}
	if r.watcher != nil {
		run(r.watcher.Run)
	}
	if r.writer != nil {
		run(r.writer.Run)
	}
	if r.crWriter != nil {
		run(r.crWriter.Run)
	}
	if r.gwWriter != nil {
		run(r.gwWriter.Run)
	}
	for _, w := range []*owned.Writer{r.certs, r.dns} {
		if w != nil {
			run(w.Run)
		}
	}
	if r.gateways != nil {
		run(r.gateways.Run)
	}
	run(r.elector.Run)
	go func() {
		wg.Wait()
		r.broadcaster.Shutdown()
		close(done)
	}()
	return done
}

// endpointPorts says what NIC's externalEndpoints[].ports show: the
// published Service's ports that lead to nginx, as NIC has them, or with
// --publish-address (or a Service without such ports) nginx's own.
func endpointPorts(w *address.ServiceWatcher, httpPort, httpsPort int) func() string {
	own := address.EndpointPorts([]int32{int32(httpPort), int32(httpsPort)})
	return func() string {
		if w != nil {
			if p, ok := w.EndpointPorts(); ok {
				return p
			}
		}
		return own
	}
}

// newReplicaCounter counts the ready endpoints of --publish-service, the
// replicas a scaled rateLimit divides its rate among; nil with
// --manifests or without the flag (the count is then unknown).
func newReplicaCounter(f *controllerFlags, log *slog.Logger) (controller.ReplicaCounter, func(context.Context), error) {
	if f.manifests != "" || f.kube.publishService == "" {
		return nil, nil, nil
	}
	client, _, err := f.kubeClient()
	if err != nil {
		return nil, nil, err
	}
	ns, name, _ := strings.Cut(f.kube.publishService, "/")
	c, err := replicas.New(client, ns, name, log.With("component", "replicas"))
	if err != nil {
		return nil, nil, err
	}
	return c, c.Run, nil
}
