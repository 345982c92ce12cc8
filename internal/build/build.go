package build

import (
	"crypto/tls"
	"fmt"
	"hash/maphash"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/causeway/causeway/internal/class"
	"github.com/causeway/causeway/internal/frontend/configmap"
	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/frontend/nic"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

// Options parameterise a Build.
type Options struct {
	Class class.Options
	// ConfigMap is the "namespace/name" of the controller's ConfigMap.
	ConfigMap string
	// Excluded maps objects (by ObjectRef.Key) to a reason they must be
	// left out, e.g. because their configuration made nginx -t fail.
	Excluded map[string]string
	// BadSecrets maps TLS secret keys ("namespace/name") that nginx refused
	// to load to nginx's reason; their hosts fall back to the default
	// certificate.
	BadSecrets map[string]string
	// AnnotationsPrefix is the prefix of the ingress-nginx annotations
	// Causeway reads and checks; "" means annotations.DefaultPrefix.
	AnnotationsPrefix string
	// DefaultBackendService is "namespace/name" (optionally ":port") of a
	// Service that answers requests no rule matches, instead of the
	// controller's own 404, and renders custom-http-errors for Ingresses
	// without a default-backend annotation.
	DefaultBackendService string
	// DisableCatchAll refuses Ingresses with a spec.defaultBackend, each
	// with a Problem (ingress-nginx's --disable-catch-all).
	DisableCatchAll bool
	// DefaultSSLCertificate is "namespace/name" of a kubernetes.io/tls
	// Secret presented instead of the self-generated default certificate
	// (--default-ssl-certificate); "" means the self-generated one.
	DefaultSSLCertificate string
	// BrotliAvailable says that nginx can load the brotli filter module;
	// without it enable-brotli is a Problem and brotli stays off.
	BrotliAvailable bool
	// HeadersMoreAvailable says that nginx can load the headers-more
	// module; without it snippets using more_set_headers or
	// more_clear_headers are refused.
	HeadersMoreAvailable bool
	// LuaAvailable says that the data plane runs Causeway's Lua, which
	// checks digest authentication; without it, Ingresses asking for
	// digest fail closed.
	LuaAvailable bool
	// GlobalConfiguration is "namespace/name" of the GlobalConfiguration
	// whose TCP and UDP listeners TransportServers use
	// (--global-configuration); "" means none.
	GlobalConfiguration string
	// StreamAvailable says that nginx has the stream module (compiled in,
	// or loadable); without it TransportServers are not served.
	StreamAvailable bool
	// TCPServices and UDPServices are "namespace/name" of ingress-nginx's
	// tcp-services and udp-services ConfigMaps (--tcp-services-configmap,
	// --udp-services-configmap): "PORT: NAMESPACE/SERVICE:PORT[:PROXY[:PROXY]]".
	TCPServices, UDPServices string
	// HTTPPort and HTTPSPort are the controller's HTTP listeners, which a
	// GlobalConfiguration listener cannot take.
	HTTPPort, HTTPSPort int
	// TLSPassthrough serves TLS passthrough by server name on the HTTPS
	// port (--enable-tls-passthrough, --enable-ssl-passthrough): the
	// tls-passthrough TransportServers and ssl-passthrough Ingresses.
	TLSPassthrough bool
	// StreamRealIPAvailable says that nginx's stream module has the realip
	// module, which passthrough needs with use-proxy-protocol.
	StreamRealIPAvailable bool
	// GunzipAvailable says that nginx has the gunzip filter, which a
	// VirtualServer's spec.gunzip needs.
	GunzipAvailable bool
	// ModSecurityAvailable says that nginx can load the ModSecurity module
	// (ModSecurityMissing says why not, for Problems); CRSAvailable that
	// the OWASP Core Rule Set is installed. Without them, the paths that
	// ask for them answer 503 (modsecurity.go).
	ModSecurityAvailable bool
	ModSecurityMissing   string
	CRSAvailable         bool
	// CertManager says that the leader writes the cert-manager
	// Certificates VirtualServers ask for (--enable-cert-manager).
	CertManager bool
	// ExternalDNS says that the leader writes the DNSEndpoints
	// VirtualServers ask for (--enable-external-dns).
	ExternalDNS bool
	// NoPublishedAddress says that no address is published
	// (--publish-service and --publish-address unset), so no DNSEndpoint
	// can have a record.
	NoPublishedAddress bool
	// GeoIP2Available says that nginx can load its geoip2 module;
	// GeoIP2Databases are the editions whose databases the controller
	// found in --geoip2-dir. Without either, use-geoip2's variables are
	// empty, with a Problem.
	GeoIP2Available bool
	GeoIP2Databases []string
	// Replicas is the number of the controller's replicas serving traffic
	// (the ready endpoints of --publish-service), which divides the rate
	// of a rateLimit Policy with scale; 0 when not known.
	Replicas int
	// GatewayServices says that each Gateway has a Service of its own
	// (internal/gatewayservice) whose targetPorts are the nginx ports of
	// its listeners and whose addresses are its addresses; without, a
	// listener's port is the nginx port and GatewayAddresses are every
	// Gateway's addresses (the files source).
	GatewayServices  bool
	GatewayAddresses []string
	// CleartextHTTP2Detect says that the data plane tells HTTP/2 from
	// HTTP/1 on one cleartext port (nginx 1.25.1 and later, Angie); without
	// it a Gateway port serves GRPCRoutes only when no HTTPRoute shares it.
	CleartextHTTP2Detect bool
	// NoExternalName refuses ExternalName Services as backends
	// (--disable-svc-external-name, ingress-nginx's flag).
	NoExternalName bool
}

// Result is what a build makes of a Snapshot.
type Result struct {
	Model    *model.Model
	Problems []model.Problem
	// Gateway is who attaches to what among Gateway API's objects of
	// Causeway's classes, with the status each is given (the Problems
	// carry the rest: model.Problem.Condition); nil when there are none.
	Gateway *gateway.Resolution
	// StreamServices are the Services ("namespace/name") whose endpoints
	// the model holds outside its Backends too: in stream servers and TLS
	// passthrough routes, which are written into the files. A change of
	// their EndpointSlices needs a build and a reload; the other Services'
	// reaches nginx as endpoint state alone (ServiceEndpoints).
	StreamServices map[string]bool
	// Services are the Services ("namespace/name") the build looked for,
	// whether it found them or not. No other Service was read: a change
	// of one of those alone leaves the Result as it is (the controller
	// then runs no sync).
	Services map[string]bool
}

// Build turns a Snapshot into a Model. It is deterministic: the same
// snapshot always yields the same Model and Problems.
func Build(snap *source.Snapshot, opts Options) (*model.Model, []model.Problem) {
	r := Run(snap, opts)
	return r.Model, r.Problems
}

// Run is Build with everything it finds, for the controller's status
// writers.
func Run(snap *source.Snapshot, opts Options) *Result {
	if opts.AnnotationsPrefix == "" {
		opts.AnnotationsPrefix = annotations.DefaultPrefix
	}
	b := &builder{
		opts:           opts,
		idx:            newServiceIndex(snap.Services, snap.EndpointSlices, snap.Pods, opts.NoExternalName),
		servers:        make(map[string]*model.Server, len(snap.Ingresses)+len(snap.VirtualServers)),
		backends:       map[string]*model.Backend{},
		secrets:        map[string]*model.TLSSecret{},
		secretsIn:      map[string]*corev1.Secret{},
		reported:       map[string]bool{},
		created:        make(map[model.ObjectRef]metav1.Time, len(snap.Ingresses)),
		tlsOwner:       map[string]model.ObjectRef{},
		configMaps:     map[string]*corev1.ConfigMap{},
		proxySecrets:   map[string]*model.ProxySecret{},
		authFiles:      map[string]*model.AuthFile{},
		balanceOwner:   map[string]model.ObjectRef{},
		limitsOwner:    map[string]model.ObjectRef{},
		keepaliveOwner: map[string]model.ObjectRef{},
		keepalivePools: map[string]bool{},
		hostOwner:      owners[string]{},
		ingressHost:    make(owners[string], len(snap.Ingresses)),
	}
	for _, s := range snap.Secrets {
		b.secretsIn[s.Namespace+"/"+s.Name] = s
	}
	for _, c := range snap.ConfigMaps {
		b.configMaps[c.Namespace+"/"+c.Name] = c
	}
	cm := b.configMaps[opts.ConfigMap]
	b.model.Config, b.problems = configmap.Parse(cm)
	if cm != nil {
		ref := configMapObject(cm)
		if reason, ok := opts.Excluded[ref.Key()]; ok {
			// nginx refused what these settings render (an OpenSSL cipher
			// name it does not know, say): the defaults serve instead.
			global, waf := b.model.Config.GlobalAuth != nil, b.model.Config.ModSecurity.Enabled
			b.model.Config, b.problems = configmap.Parse(nil)
			b.problem(ref, model.ReasonExcluded, false, "the defaults are used instead of this ConfigMap: %s", reason)
			if global {
				// The defaults have no global authentication: serving
				// them would let every request through unasked.
				b.model.Config.FailClosed = append(b.model.Config.FailClosed, "global-auth-url")
				b.problem(ref, model.ReasonExcluded, false, `key "global-auth-url" is left out with the ConfigMap; every path of every Ingress answers 503 rather than being served without it`)
			}
			if waf {
				// Nor ModSecurity (its snippet may be what nginx refused).
				b.model.Config.FailClosed = append(b.model.Config.FailClosed, "enable-modsecurity")
				b.problem(ref, model.ReasonExcluded, false, `key "enable-modsecurity" is left out with the ConfigMap; every path of every Ingress answers 503 rather than being served uninspected`)
			}
		}
	}
	if cm != nil {
		b.resolveConfigRefs(cm)
		b.luaGlobalAuth(configMapObject(cm))
	}
	if b.model.Config.Brotli.Enabled && !opts.BrotliAvailable {
		b.model.Config.Brotli.Enabled = false
		b.problems = append(b.problems, model.Problem{
			Object: b.configMapRef(),
			Reason: model.ReasonInvalidConfig,
			Message: `key "enable-brotli": nginx's brotli filter module (ngx_http_brotli_filter_module.so, Debian's ` +
				`libnginx-mod-http-brotli-filter) is not installed in the nginx modules directory; brotli stays off`,
		})
	}
	b.configSnippets()
	b.modSecurityGlobal()
	b.geoIP2Problems()
	if c := b.model.Config; c.EnableOCSP && c.ReloadFreeCertificates && !opts.LuaAvailable {
		b.problem(b.configMapRef(), model.ReasonInvalidConfig, false, `key "enable-ocsp": without the Lua data plane, certificates read at each `+
			`handshake cannot carry an OCSP response; set reload-free-certificates to false to staple them (each new response then reloads)`)
	}
	b.globalDefault = b.defaultBackendService()
	b.defaultErrorsProblem()
	b.model.DefaultCertificate = b.defaultSSLCertificate()

	b.classes = class.NewFilter(opts.Class, snap.IngressClasses)
	b.server("") // the catch-all always exists
	// Shared by kinds: TLS passthrough (Ingresses, TransportServers) and
	// the GlobalConfiguration's listeners (VirtualServers,
	// TransportServers).
	b.initPassthrough()
	b.readGlobalConfiguration(snap)
	// Oldest first, UID breaking ties: the first claim on anything wins,
	// whatever the kind.
	b.procs = b.newProcessors()
	b.process(snap, b.procs)
	b.finishPassthrough()
	b.finish()
	// The model leaves the builder by copy: a pointer into b would keep
	// the whole builder (its claims, owners, per-host settings and
	// service index: a third of the model's size again) alive for as
	// long as the model is used, through the render and beyond.
	m := b.model
	return &Result{Model: &m, Problems: b.problems, Gateway: b.gatewayResolution, StreamServices: b.idx.streamed,
		Services: b.idx.lookedUp()}
}

// builder is the state every processor shares, with its methods: the
// servers and host owners, backends and their settings, secrets,
// Problems and creation times. The state of one kind is its processor's.
type builder struct {
	opts      Options
	idx       *serviceIndex
	model     model.Model
	problems  []model.Problem
	servers   map[string]*model.Server
	backends  map[string]*model.Backend
	secrets   map[string]*model.TLSSecret
	secretsIn map[string]*corev1.Secret
	// reported de-duplicates problems raised once per object.
	reported map[string]bool
	// created holds the creationTimestamp of each object past its intake,
	// of any kind, to explain why a claim was lost (whyFirst).
	created map[model.ObjectRef]metav1.Time
	// tlsOwner is the Ingress (spec.tls) or VirtualServer that
	// configured each host's TLS.
	tlsOwner map[string]model.ObjectRef
	// configMaps are the snapshot's ConfigMaps by "namespace/name".
	configMaps map[string]*corev1.ConfigMap
	// proxySecrets are the validated Secrets for TLS to backends.
	proxySecrets map[string]*model.ProxySecret
	// authFiles are the validated password files of basic auth, by key.
	authFiles map[string]*model.AuthFile
	// balanceOwner is the Ingress whose balancing annotations set each
	// backend's balancing.
	balanceOwner map[string]model.ObjectRef
	// limitsOwner is the object whose peer limits (a VirtualServer
	// upstream's max-fails, fail-timeout, max-conns) each backend has.
	limitsOwner map[string]model.ObjectRef
	// keepaliveOwner is the object whose keepalive (a VirtualServer
	// upstream's) a backend uses, by backend key; keepalivePools the pools
	// those make (claimKeepalive), and keepaliveTotal their sizes' sum.
	keepaliveOwner map[string]model.ObjectRef
	keepalivePools map[string]bool
	keepaliveTotal int
	// globalDefault is the key of the --default-backend-service backend.
	globalDefault string
	// hostOwner is the object that owns each of its hosts alone (a
	// VirtualServer, a tls-passthrough TransportServer, an ssl-passthrough
	// Ingress); ingressHost the oldest Ingress with a rule for each host.
	hostOwner, ingressHost owners[string]
	// streamPorts are the ports the stream servers took (addStream).
	streamPorts owners[streamPort]
	// httpSnippets are the served VirtualServers' http-snippets, which
	// foldHTTPSnippets applies to every host.
	httpSnippets []*nic.Snippet
	// classes decides which objects are ours.
	classes *class.Filter
	// gc is the GlobalConfiguration's listeners, which VirtualServers and
	// TransportServers use.
	gc globalConfiguration
	// procs are the processors, in the order Build runs them (see
	// newProcessors).
	procs []processor
	// ing is the Ingress processor: finish makes the servers no other
	// processor owns as Ingress rules do (host-less paths, regex mode,
	// defaultBackend, server annotations).
	ing *ingressProcessor
	// passthroughWhy says why TLS passthrough is not served (model.
	// Passthrough is nil then), for the objects asking for it.
	passthroughWhy string
	// gatewayResolution is what the Gateway API processor resolved.
	gatewayResolution *gateway.Resolution
	// policies are the location policies of Ingresses so far, by their
	// digests under policySeeds (internPolicy).
	policies    map[[2]uint64]*model.Policy
	policySeeds [2]maphash.Seed
}

func (b *builder) problem(ref model.ObjectRef, reason string, rejected bool, format string, args ...any) {
	b.problems = append(b.problems, model.Problem{Object: ref, Reason: reason, Rejected: rejected, Message: fmt.Sprintf(format, args...)})
}

func (b *builder) server(host string) *model.Server {
	s := b.servers[host]
	if s == nil {
		s = &model.Server{Host: host}
		b.servers[host] = s
	}
	return s
}

// isZeroPolicy reports whether p sets nothing.
func isZeroPolicy(p *model.Policy) bool { return reflect.ValueOf(p).Elem().IsZero() }

// addBackend registers a resolved backend once, with its Service's
// balancing, and returns the registered one.
func (b *builder) addBackend(be *model.Backend) *model.Backend {
	if prev, ok := b.backends[be.Key]; ok {
		return prev
	}
	b.backends[be.Key] = be
	b.setBalance(be)
	return be
}

// setBalance applies the Service's load-balancing annotations, falling
// back to the ConfigMap default on a bad value. The Service's annotations
// are checked, and their Problems raised, once per Service.
func (b *builder) setBalance(be *model.Backend) {
	svc := b.idx.service(be.Namespace, be.Service)
	bal, err := parseBalance(svc, b.model.Config.LoadBalance)
	be.Balance = bal
	ref := serviceRef(svc)
	key := ref.String()
	if b.reported[key] {
		return
	}
	b.reported[key] = true
	b.problems = append(b.problems, annotations.Check(ref, svc.Annotations, b.opts.AnnotationsPrefix).Problems...)
	if err != nil {
		b.problem(ref, model.ReasonInvalidAnnotation, false, "load balancing: %v; %s is used", err, bal.Method)
		return
	}
	for _, k := range ineffectiveBalanceAnnotations(svc.Annotations, bal.Method) {
		b.problem(ref, model.ReasonUnsupportedAnnotation, false, "annotation %s has no effect with %s %s; ignored", k, AnnotationLoadBalance, bal.Method)
	}
}

func serviceRef(svc *corev1.Service) model.ObjectRef {
	return model.ObjectRef{Kind: "Service", Namespace: svc.Namespace, Name: svc.Name, UID: string(svc.UID)}
}

// tlsSecret validates a referenced secret and returns its key, or "" (use
// the default certificate) after recording why it cannot be used.
func (b *builder) tlsSecret(ref model.ObjectRef, ns, name string) string {
	key := ns + "/" + name
	if reason, why := b.loadTLSSecret(ns, name); why != "" {
		b.problem(ref, reason, false, "TLS secret %s%s; the default certificate is served", key, why)
		return ""
	}
	return key
}

// loadTLSSecret validates the kubernetes.io/tls Secret ns/name into
// b.secrets, or returns a Problem reason and why it cannot be used (to
// follow the Secret's name in a message).
func (b *builder) loadTLSSecret(ns, name string) (reason, why string) {
	key := ns + "/" + name
	if _, ok := b.secrets[key]; ok {
		return "", ""
	}
	s := b.secretsIn[key]
	switch {
	case s == nil:
		return model.ReasonMissingSecret, " not found"
	case s.Type != corev1.SecretTypeTLS:
		return model.ReasonInvalidSecret, fmt.Sprintf(" has type %q, want %q", s.Type, corev1.SecretTypeTLS)
	}
	if reason, bad := b.opts.BadSecrets[key]; bad {
		return model.ReasonInvalidSecret, " was refused by nginx: " + reason
	}
	crt, keyPEM := s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey]
	if err := model.CheckChainSize(crt); err != nil {
		return model.ReasonInvalidSecret, ": " + err.Error()
	}
	if _, err := tls.X509KeyPair(crt, keyPEM); err != nil {
		return model.ReasonInvalidSecret, ": " + err.Error()
	}
	pem := make([]byte, 0, len(crt)+len(keyPEM)+1)
	pem = append(append(append(pem, crt...), '\n'), keyPEM...)
	b.secrets[key] = &model.TLSSecret{Namespace: ns, Name: name, PEM: pem}
	return "", ""
}

// defaultSSLCertificate resolves --default-ssl-certificate: the Secret's
// key, or "" (the self-generated certificate) with a Problem on the
// Secret saying why it cannot be used.
func (b *builder) defaultSSLCertificate() string {
	v := b.opts.DefaultSSLCertificate
	if v == "" {
		return ""
	}
	ns, name, _ := strings.Cut(v, "/")
	ref := model.ObjectRef{Kind: "Secret", Namespace: ns, Name: name}
	if s := b.secretsIn[v]; s != nil {
		ref.UID = string(s.UID)
	}
	if reason, why := b.loadTLSSecret(ns, name); why != "" {
		b.problem(ref, reason, false, "--default-ssl-certificate: TLS secret %s%s; the self-generated default certificate is served", v, why)
		return ""
	}
	return v
}

// finish merges host-less rules into every host, sets defaults and
// redirects, keeps only referenced backends and secrets, and sorts.
func (b *builder) finish() {
	catchAll := b.servers[""]
	global := b.ing.defaults[""]
	switch {
	case global != nil:
	case b.globalDefault != "":
		global = &model.Location{Match: model.Match{Type: model.Prefix, Path: "/"}, Action: model.ProxyTo(b.globalDefault),
			Policy: b.defaultBackendPolicy()}
	default:
		global = &model.Location{Match: model.Match{Type: model.Prefix, Path: "/"}, Action: model.ReturnStatus(404)}
	}
	hosts := slices.Sorted(maps.Keys(b.servers))
	for _, host := range hosts {
		if srv := b.servers[host]; host != "" && len(catchAll.Locations) > 0 && b.ownedServer(host) == nil {
			// A rule without a host applies to all traffic, so host-less
			// paths also serve every named host unless the host has the
			// same path and type itself. They are copied before any
			// server turns to regex mode, the catch-all included, so that
			// every host gets them as written.
			have := map[claimKey]bool{}
			for _, l := range srv.Locations {
				have[claimKey{path: l.Match.Path, typ: l.Match.Type}] = true
			}
			for _, l := range catchAll.Locations {
				if !have[claimKey{path: l.Match.Path, typ: l.Match.Type}] {
					srv.Locations = append(srv.Locations, l)
				}
			}
		}
	}
	for _, host := range hosts {
		srv := b.servers[host]
		srv.Default = global
		if d, ok := b.ing.defaults[host]; ok {
			srv.Default = d
		}
		if b.ownedServer(host) != nil {
			// A VirtualServer's routes stay as written: nginx tries its
			// regexes in that order.
		} else if b.ing.toRegex(srv); srv.Regex {
			sortRegex(srv.Locations)
		} else {
			sort.Slice(srv.Locations, func(i, j int) bool {
				li, lj := srv.Locations[i], srv.Locations[j]
				if li.Match.Path != lj.Match.Path {
					return li.Match.Path < lj.Match.Path
				}
				return li.Match.Type == model.Exact && lj.Match.Type != model.Exact
			})
		}
		sort.Slice(srv.Sources, func(i, j int) bool { return srv.Sources[i].String() < srv.Sources[j].String() })
		b.model.Servers = append(b.model.Servers, srv)
	}
	b.ing.written = nil // every host is in regex mode or not by now
	sort.Slice(b.model.Servers, func(i, j int) bool { return b.model.Servers[i].Host < b.model.Servers[j].Host })
	// Snippets that apply to every host are collected from the servers
	// that carry them before any host's policy, so that their address
	// lists restrict every host and every host's own snippets are checked
	// against them.
	for _, srv := range b.model.Servers {
		if o, ok := b.ownedServer(srv.Host).(globalSnippets); ok {
			o.globalSnippets(srv)
		}
	}
	b.globalSnippetAccess()
	aliased := map[string]string{}
	for _, srv := range b.model.Servers {
		if o := b.ownedServer(srv.Host); o != nil {
			o.serverPolicy(srv)
			continue
		}
		b.ing.serverPolicy(srv, aliased)
	}
	b.ing.hostSettings = nil // every host has its policy
	b.foldHTTPSnippets()
	for _, p := range b.procs {
		if f, ok := p.(finisher); ok {
			f.finishModel()
		}
	}

	used := map[string]bool{}
	usedSecrets := map[string]bool{}
	usedProxySecrets := map[string]bool{}
	usedAuthFiles := map[string]bool{}
	for _, srv := range b.model.Servers {
		for _, l := range append(srv.Locations, srv.Default) {
			used[l.Backend()] = true
			if p := l.Action.Proxy; p != nil && p.Fallback != "" {
				used[p.Fallback] = true
			}
			if p := l.Action.Proxy; p != nil && p.Split != nil {
				for _, key := range p.Split.Backends() {
					used[key] = true
				}
			}
			if l.Policy != nil && l.Policy.Errors != nil {
				used[l.Policy.Errors.Backend] = true
			}
			if l.Policy != nil {
				for _, m := range l.Policy.Mirrors {
					if m.Backend != "" {
						used[m.Backend] = true
					}
				}
			}
			if l.Policy != nil && l.Policy.ExternalAuth != nil && l.Policy.ExternalAuth.Backend != "" {
				used[l.Policy.ExternalAuth.Backend] = true
				if t := l.Policy.ExternalAuth.TLS; t != nil && t.CASecret != "" {
					usedProxySecrets[t.CASecret] = true
				}
			}
			if l.Policy != nil && l.Policy.UpstreamTLS != nil {
				for _, k := range []string{l.Policy.UpstreamTLS.Secret, l.Policy.UpstreamTLS.CASecret} {
					if k != "" {
						usedProxySecrets[k] = true
					}
				}
			}
			if l.Policy != nil && l.Policy.BasicAuth != nil {
				usedAuthFiles[l.Policy.BasicAuth.File] = true
			}
			if l.Policy != nil && l.Policy.APIKey != nil {
				usedAuthFiles[l.Policy.APIKey.File] = true
			}
		}
		if srv.TLS != nil && srv.TLS.Secret != "" {
			usedSecrets[srv.TLS.Secret] = true
		}
		if srv.ClientTLS != nil {
			usedProxySecrets[srv.ClientTLS.Secret] = true
		}
	}
	if b.model.DefaultCertificate != "" {
		usedSecrets[b.model.DefaultCertificate] = true
	}
	for _, s := range b.model.Streams {
		if s.TLS != nil {
			usedSecrets[s.TLS.Secret] = true
		}
	}
	for _, l := range b.model.SNIListeners {
		if l.TLS != nil {
			usedSecrets[l.TLS.Secret] = true
		}
	}
	for _, l := range b.model.HTTPListeners {
		if l.Certificate != "" {
			usedSecrets[l.Certificate] = true
		}
	}
	for k, be := range b.backends {
		if used[k] {
			b.model.Backends = append(b.model.Backends, be)
		}
	}
	sort.Slice(b.model.Backends, func(i, j int) bool { return b.model.Backends[i].Key < b.model.Backends[j].Key })
	b.boundSharedPools()
	b.reportDropped()
	for k, s := range b.secrets {
		if usedSecrets[k] {
			b.model.Secrets = append(b.model.Secrets, s)
		}
	}
	sort.Slice(b.model.Secrets, func(i, j int) bool { return b.model.Secrets[i].Key() < b.model.Secrets[j].Key() })
	for k, s := range b.proxySecrets {
		if usedProxySecrets[k] {
			b.model.ProxySecrets = append(b.model.ProxySecrets, s)
		}
	}
	sort.Slice(b.model.ProxySecrets, func(i, j int) bool { return b.model.ProxySecrets[i].Key() < b.model.ProxySecrets[j].Key() })
	for k, f := range b.authFiles {
		if usedAuthFiles[k] {
			b.model.AuthFiles = append(b.model.AuthFiles, f)
		}
	}
	sort.Slice(b.model.AuthFiles, func(i, j int) bool { return b.model.AuthFiles[i].Key() < b.model.AuthFiles[j].Key() })
	sort.SliceStable(b.problems, func(i, j int) bool { return b.problems[i].Object.String() < b.problems[j].Object.String() })
}
