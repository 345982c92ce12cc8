package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// States reported in the status of VirtualServer, VirtualServerRoute,
// TransportServer and Policy resources.
const (
	// StateValid: the resource was accepted and is in effect.
	StateValid = "Valid"
	// StateWarning: the resource was accepted but something it refers to is
	// missing or not supported, so it may not work fully.
	StateWarning = "Warning"
	// StateInvalid: the resource was refused.
	StateInvalid = "Invalid"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=vs
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`,description="Whether the controller accepted the VirtualServer (Valid, Warning or Invalid)."
// +kubebuilder:printcolumn:name="Host",type=string,JSONPath=`.spec.host`
// +kubebuilder:printcolumn:name="IP",type=string,JSONPath=`.status.externalEndpoints[*].ip`
// +kubebuilder:printcolumn:name="ExternalHostname",type=string,priority=1,JSONPath=`.status.externalEndpoints[*].hostname`
// +kubebuilder:printcolumn:name="Ports",type=string,JSONPath=`.status.externalEndpoints[*].ports`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// VirtualServer configures HTTP and HTTPS load balancing for one host.
type VirtualServer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec VirtualServerSpec `json:"spec"`
	// Status is written by the controller.
	Status VirtualServerStatus `json:"status,omitempty"`
}

// VirtualServerSpec is what a VirtualServer asks for.
type VirtualServerSpec struct {
	// IngressClass names the ingress class whose controller handles this resource.
	IngressClass string `json:"ingressClassName,omitempty"`
	// Host is the domain name served, such as shop.example.com or *.example.com.
	Host string `json:"host,omitempty"`
	// Listener names custom HTTP and HTTPS listeners from the GlobalConfiguration.
	Listener *VirtualServerListener `json:"listener,omitempty"`
	// TLS configures TLS termination for the host.
	TLS *TLS `json:"tls,omitempty"`
	// Gunzip decompresses gzipped responses for clients that do not accept gzip.
	Gunzip bool `json:"gunzip,omitempty"`
	// Policies applied to every route of the host.
	Policies []PolicyReference `json:"policies,omitempty"`
	// Upstreams are the backends that routes send requests to.
	Upstreams []Upstream `json:"upstreams,omitempty"`
	// Routes map request paths to actions.
	Routes []Route `json:"routes,omitempty"`
	// HTTPSnippets is raw configuration for the http context.
	HTTPSnippets string `json:"http-snippets,omitempty"`
	// ServerSnippets is raw configuration for the server context.
	ServerSnippets string `json:"server-snippets,omitempty"`
	// AddHeaderInherit sets how add_header directives are inherited at the server level.
	// +kubebuilder:validation:Enum=on;off;merge
	AddHeaderInherit string `json:"add-header-inherit,omitempty"`
	// Dos names a DosProtectedResource (NGINX App Protect DoS, NGINX Plus only).
	Dos string `json:"dos,omitempty"`
	// ExternalDNS publishes the host through ExternalDNS.
	ExternalDNS ExternalDNS `json:"externalDNS,omitempty"`
}

// VirtualServerListener names listeners defined in the GlobalConfiguration.
type VirtualServerListener struct {
	// HTTP is the name of a listener with protocol HTTP and ssl false.
	HTTP string `json:"http,omitempty"`
	// HTTPS is the name of a listener with protocol HTTP and ssl true.
	HTTPS string `json:"https,omitempty"`
}

// ExternalDNS configures DNS records published for a VirtualServer.
type ExternalDNS struct {
	// Enable publishes DNS records for the host.
	Enable bool `json:"enable,omitempty"`
	// RecordType is the DNS record type, such as A, AAAA or CNAME; derived from the endpoints when empty.
	RecordType string `json:"recordType,omitempty"`
	// RecordTTL is the record's time to live in seconds.
	RecordTTL int64 `json:"recordTTL,omitempty"`
	// Labels are set on the generated DNSEndpoint.
	Labels map[string]string `json:"labels,omitempty"`
	// ProviderSpecific holds settings for a particular DNS provider.
	ProviderSpecific ProviderSpecific `json:"providerSpecific,omitempty"`
}

// ProviderSpecific is a list of provider-specific DNS settings.
type ProviderSpecific []ProviderSpecificProperty

// ProviderSpecificProperty is one provider-specific DNS setting.
type ProviderSpecificProperty struct {
	// Name of the setting.
	Name string `json:"name,omitempty"`
	// Value of the setting.
	Value string `json:"value,omitempty"`
}

// PolicyReference names a Policy.
type PolicyReference struct {
	// Name of the Policy.
	Name string `json:"name,omitempty"`
	// Namespace of the Policy; the referring resource's namespace when empty.
	Namespace string `json:"namespace,omitempty"`
}

// Upstream is a backend Service and how to reach it.
type Upstream struct {
	// Name of the upstream, unique within the resource (an RFC 1035 label).
	Name string `json:"name,omitempty"`
	// Service is the backend Service, as name or namespace/name.
	Service string `json:"service,omitempty"`
	// Subselector restricts the Service's pods to those with these labels.
	Subselector map[string]string `json:"subselector,omitempty"`
	// Port is the Service port.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port uint16 `json:"port,omitempty"`
	// LBMethod is the load-balancing method, such as round_robin or least_conn.
	LBMethod string `json:"lb-method,omitempty"`
	// FailTimeout is the window in which max-fails failures mark a server unavailable.
	FailTimeout string `json:"fail-timeout,omitempty"`
	// MaxFails is the number of failures within fail-timeout that mark a server unavailable.
	MaxFails *int `json:"max-fails,omitempty"`
	// MaxConns limits simultaneous connections to each server.
	MaxConns *int `json:"max-conns,omitempty"`
	// Keepalive is the number of idle connections kept per worker; 0 disables.
	Keepalive *int `json:"keepalive,omitempty"`
	// ConnectTimeout for connecting to a server.
	ConnectTimeout string `json:"connect-timeout,omitempty"`
	// ReadTimeout between two reads from a server.
	ReadTimeout string `json:"read-timeout,omitempty"`
	// SendTimeout between two writes to a server.
	SendTimeout string `json:"send-timeout,omitempty"`
	// NextUpstream lists the failures after which a request is retried on another server.
	NextUpstream string `json:"next-upstream,omitempty"`
	// NextUpstreamTimeout limits the time spent retrying; 0 means no limit.
	NextUpstreamTimeout string `json:"next-upstream-timeout,omitempty"`
	// NextUpstreamTries limits the number of tries; 0 means no limit.
	NextUpstreamTries int `json:"next-upstream-tries,omitempty"`
	// Buffering turns response buffering on or off.
	Buffering *bool `json:"buffering,omitempty"`
	// Buffers sets the number and size of response buffers per connection.
	Buffers *UpstreamBuffers `json:"buffers,omitempty"`
	// BufferSize is the size of the buffer for the first part of a response.
	BufferSize string `json:"buffer-size,omitempty"`
	// BusyBuffersSize limits the buffers busy sending to the client.
	BusyBuffersSize string `json:"busy-buffers-size,omitempty"`
	// ClientMaxBodySize is the largest request body allowed.
	ClientMaxBodySize string `json:"client-max-body-size,omitempty"`
	// ClientBodyBufferSize is the buffer size for request bodies: a number, optionally followed by k or m.
	// +kubebuilder:validation:Pattern=`^\d+[kKmM]?$`
	ClientBodyBufferSize string `json:"client-body-buffer-size,omitempty"`
	// TLS turns on HTTPS towards the servers.
	TLS UpstreamTLS `json:"tls,omitempty"`
	// HealthCheck configures active health checks (NGINX Plus only).
	HealthCheck *HealthCheck `json:"healthCheck,omitempty"`
	// SlowStart is the time over which a recovered server ramps up to its full weight (NGINX Plus only).
	SlowStart string `json:"slow-start,omitempty"`
	// Queue holds requests while no server is available (NGINX Plus only).
	Queue *UpstreamQueue `json:"queue,omitempty"`
	// SessionCookie configures cookie-based session persistence (NGINX Plus only).
	SessionCookie *SessionCookie `json:"sessionCookie,omitempty"`
	// UseClusterIP sends traffic to the Service's cluster IP instead of its endpoints.
	UseClusterIP bool `json:"use-cluster-ip,omitempty"`
	// NTLM allows proxying NTLM-authenticated requests (NGINX Plus only).
	NTLM bool `json:"ntlm,omitempty"`
	// Type is the upstream protocol: http (the default) or grpc.
	// +kubebuilder:validation:Enum=http;grpc
	Type string `json:"type,omitempty"`
	// Backup is an ExternalName Service used when all servers are down (NGINX Plus only).
	Backup string `json:"backup,omitempty"`
	// BackupPort is the port of the backup Service.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	BackupPort *uint16 `json:"backupPort,omitempty"`
}

// UpstreamBuffers sets the number and size of response buffers.
type UpstreamBuffers struct {
	// Number of buffers.
	Number int `json:"number,omitempty"`
	// Size of each buffer.
	Size string `json:"size,omitempty"`
}

// UpstreamTLS configures TLS towards upstream servers.
type UpstreamTLS struct {
	// Enable uses HTTPS for requests to the servers.
	Enable bool `json:"enable,omitempty"`
}

// HealthCheck configures active health checks of an upstream (NGINX Plus only).
type HealthCheck struct {
	// Enable turns health checks on.
	Enable bool `json:"enable,omitempty"`
	// Path requested by health checks.
	Path string `json:"path,omitempty"`
	// Interval between checks.
	Interval string `json:"interval,omitempty"`
	// Jitter randomly delays each check by up to this time.
	Jitter string `json:"jitter,omitempty"`
	// Fails is the number of failed checks after which a server is unhealthy.
	Fails int `json:"fails,omitempty"`
	// Passes is the number of passed checks after which a server is healthy.
	Passes int `json:"passes,omitempty"`
	// Port of the pod checked, when not the server port.
	Port int `json:"port,omitempty"`
	// TLS for health checks; the upstream's when unset.
	TLS *UpstreamTLS `json:"tls,omitempty"`
	// ConnectTimeout for health checks.
	ConnectTimeout string `json:"connect-timeout,omitempty"`
	// ReadTimeout for health checks.
	ReadTimeout string `json:"read-timeout,omitempty"`
	// SendTimeout for health checks.
	SendTimeout string `json:"send-timeout,omitempty"`
	// Headers sent with health checks.
	Headers []Header `json:"headers,omitempty"`
	// StatusMatch is the expected status, such as "200", "! 500" or "301-303 307".
	StatusMatch string `json:"statusMatch,omitempty"`
	// GRPCStatus is the expected gRPC status for gRPC upstreams.
	GRPCStatus *int `json:"grpcStatus,omitempty"`
	// GRPCService is the gRPC service checked.
	GRPCService string `json:"grpcService,omitempty"`
	// Mandatory requires new servers to pass a check before receiving traffic.
	Mandatory bool `json:"mandatory,omitempty"`
	// Persistent keeps a healthy server's state across reloads.
	Persistent bool `json:"persistent,omitempty"`
	// KeepaliveTime keeps health-check connections open for this long.
	KeepaliveTime string `json:"keepalive-time,omitempty"`
}

// Header is an HTTP header name and value.
type Header struct {
	// Name of the header.
	Name string `json:"name,omitempty"`
	// Value of the header.
	Value string `json:"value,omitempty"`
}

// UpstreamQueue queues requests while no server can be selected (NGINX Plus only).
type UpstreamQueue struct {
	// Size is the maximum number of queued requests.
	Size int `json:"size,omitempty"`
	// Timeout is how long a request may wait in the queue.
	Timeout string `json:"timeout,omitempty"`
}

// SessionCookie configures session persistence with a cookie (NGINX Plus only).
type SessionCookie struct {
	// Enable turns session persistence on.
	Enable bool `json:"enable,omitempty"`
	// Name of the cookie.
	Name string `json:"name,omitempty"`
	// Path of the cookie.
	Path string `json:"path,omitempty"`
	// Expires is the cookie's lifetime, or max.
	Expires string `json:"expires,omitempty"`
	// Domain of the cookie.
	Domain string `json:"domain,omitempty"`
	// HTTPOnly sets the HttpOnly attribute.
	HTTPOnly bool `json:"httpOnly,omitempty"`
	// Secure sets the Secure attribute.
	Secure bool `json:"secure,omitempty"`
	// SameSite sets the SameSite attribute: strict, lax or none.
	SameSite string `json:"samesite,omitempty"`
}

// Route maps a path to an action, to splits, to matches or to a VirtualServerRoute.
type Route struct {
	// Path is a prefix (/app), an exact match (=/app), or a regular expression (~ or ~*).
	Path string `json:"path,omitempty"`
	// Policies for this route; they replace the server's policies of the same kind.
	Policies []PolicyReference `json:"policies,omitempty"`
	// Route names a VirtualServerRoute, as name or namespace/name, that defines this path.
	Route string `json:"route,omitempty"`
	// RouteSelector selects VirtualServerRoutes by label.
	RouteSelector *metav1.LabelSelector `json:"routeSelector,omitempty"`
	// Action is the default action.
	Action *Action `json:"action,omitempty"`
	// Splits divide traffic between actions by weight.
	Splits []Split `json:"splits,omitempty"`
	// Matches choose an action by request headers, cookies, arguments or variables.
	Matches []Match `json:"matches,omitempty"`
	// ErrorPages replace error responses with redirects or fixed responses.
	ErrorPages []ErrorPage `json:"errorPages,omitempty"`
	// LocationSnippets is raw configuration for the location context.
	LocationSnippets string `json:"location-snippets,omitempty"`
	// AddHeaderInherit sets how add_header directives are inherited at the location level.
	// +kubebuilder:validation:Enum=on;off;merge
	AddHeaderInherit string `json:"add-header-inherit,omitempty"`
	// Dos names a DosProtectedResource (NGINX App Protect DoS, NGINX Plus only).
	Dos string `json:"dos,omitempty"`
}

// Action says what to do with a request; set exactly one field.
type Action struct {
	// Pass sends requests to the named upstream.
	Pass string `json:"pass,omitempty"`
	// Redirect answers with a redirect.
	Redirect *ActionRedirect `json:"redirect,omitempty"`
	// Return answers with a fixed response.
	Return *ActionReturn `json:"return,omitempty"`
	// Proxy sends requests to an upstream, rewriting the path or headers.
	Proxy *ActionProxy `json:"proxy,omitempty"`
}

// ActionRedirect answers with a redirect.
type ActionRedirect struct {
	// URL to redirect to; may use ${scheme}, ${http_x_forwarded_proto}, ${request_uri} and ${host}.
	URL string `json:"url,omitempty"`
	// Code is the status: 301 (the default), 302, 307 or 308.
	// +kubebuilder:validation:Enum=301;302;307;308
	Code int `json:"code,omitempty"`
}

// ActionReturn answers with a fixed response.
type ActionReturn struct {
	// Code is the status, 200 by default.
	Code int `json:"code,omitempty"`
	// Type is the response's MIME type, text/plain by default.
	Type string `json:"type,omitempty"`
	// Body of the response; may use NGINX variables as ${name}.
	Body string `json:"body,omitempty"`
	// Headers added to the response.
	Headers []Header `json:"headers,omitempty"`
}

// ActionProxy sends requests to an upstream, with rewrites.
type ActionProxy struct {
	// Upstream is the name of an upstream of the resource.
	Upstream string `json:"upstream,omitempty"`
	// RewritePath replaces the matched path; regular-expression routes may use $1-$9.
	RewritePath string `json:"rewritePath,omitempty"`
	// RequestHeaders changes the headers sent upstream.
	RequestHeaders *ProxyRequestHeaders `json:"requestHeaders,omitempty"`
	// ResponseHeaders changes the headers returned to the client.
	ResponseHeaders *ProxyResponseHeaders `json:"responseHeaders,omitempty"`
}

// ProxyRequestHeaders changes the request headers sent upstream.
type ProxyRequestHeaders struct {
	// Pass forwards the client's headers; true by default.
	Pass *bool `json:"pass,omitempty"`
	// Set adds or replaces headers.
	Set []Header `json:"set,omitempty"`
}

// ProxyResponseHeaders changes the response headers returned to the client.
type ProxyResponseHeaders struct {
	// Hide removes these upstream headers.
	Hide []string `json:"hide,omitempty"`
	// Pass forwards these headers that would otherwise be hidden.
	Pass []string `json:"pass,omitempty"`
	// Ignore disables NGINX's processing of these upstream headers.
	Ignore []string `json:"ignore,omitempty"`
	// Add adds headers to the response.
	Add []AddHeader `json:"add,omitempty"`
}

// AddHeader is a response header to add.
type AddHeader struct {
	Header `json:",inline"`
	// Always adds the header whatever the response status.
	Always bool `json:"always,omitempty"`
}

// Split sends a share of the traffic to an action.
type Split struct {
	// Weight is the percentage of requests; the weights of a route's splits add up to 100.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Weight int `json:"weight,omitempty"`
	// Action for this share.
	Action *Action `json:"action,omitempty"`
}

// Condition tests one attribute of a request; set one of header, cookie,
// argument or variable, and value.
type Condition struct {
	// Header name.
	Header string `json:"header,omitempty"`
	// Cookie name.
	Cookie string `json:"cookie,omitempty"`
	// Argument is a query argument name.
	Argument string `json:"argument,omitempty"`
	// Variable is an NGINX variable, starting with $.
	Variable string `json:"variable,omitempty"`
	// Value to compare with; a leading ! negates.
	Value string `json:"value,omitempty"`
}

// Match applies an action or splits when all its conditions hold.
type Match struct {
	// Conditions that must all hold.
	Conditions []Condition `json:"conditions,omitempty"`
	// Action when they do.
	Action *Action `json:"action,omitempty"`
	// Splits when they do.
	Splits []Split `json:"splits,omitempty"`
}

// ErrorPage replaces responses with the given status codes.
type ErrorPage struct {
	// Codes are the status codes replaced.
	Codes []int `json:"codes,omitempty"`
	// Return answers with a fixed response instead.
	Return *ErrorPageReturn `json:"return,omitempty"`
	// Redirect answers with a redirect instead.
	Redirect *ErrorPageRedirect `json:"redirect,omitempty"`
}

// ErrorPageReturn is the fixed response of an ErrorPage.
type ErrorPageReturn struct {
	ActionReturn `json:",inline"`
}

// ErrorPageRedirect is the redirect of an ErrorPage.
type ErrorPageRedirect struct {
	ActionRedirect `json:",inline"`
}

// TLS configures TLS termination for a VirtualServer.
type TLS struct {
	// Secret is a kubernetes.io/tls Secret in the VirtualServer's namespace.
	Secret string `json:"secret,omitempty"`
	// Redirect sends plain HTTP requests to HTTPS.
	Redirect *TLSRedirect `json:"redirect,omitempty"`
	// CertManager asks cert-manager to issue the certificate.
	CertManager *CertManager `json:"cert-manager,omitempty"`
}

// TLSRedirect redirects plain HTTP requests to HTTPS.
type TLSRedirect struct {
	// Enable turns the redirect on.
	Enable bool `json:"enable,omitempty"`
	// Code is the status: 301 (the default), 302, 307 or 308.
	// +kubebuilder:validation:Enum=301;302;307;308
	Code *int `json:"code,omitempty"`
	// BasedOn is what decides that a request was plain HTTP: scheme (the default) or x-forwarded-proto.
	// +kubebuilder:validation:Enum=scheme;x-forwarded-proto
	BasedOn string `json:"basedOn,omitempty"`
}

// CertManager asks cert-manager for the VirtualServer's certificate.
type CertManager struct {
	// ClusterIssuer names a cert-manager ClusterIssuer; set this or issuer.
	ClusterIssuer string `json:"cluster-issuer,omitempty"`
	// Issuer names a cert-manager Issuer in the VirtualServer's namespace.
	Issuer string `json:"issuer,omitempty"`
	// IssuerKind is the kind of an external issuer.
	IssuerKind string `json:"issuer-kind,omitempty"`
	// IssuerGroup is the API group of an external issuer.
	IssuerGroup string `json:"issuer-group,omitempty"`
	// CommonName of the certificate.
	CommonName string `json:"common-name,omitempty"`
	// Duration of the certificate, as a Go duration (h, m, s).
	Duration string `json:"duration,omitempty"`
	// RenewBefore is how long before expiry to renew, as a Go duration.
	RenewBefore string `json:"renew-before,omitempty"`
	// Usages is a comma-separated list of key usages.
	Usages string `json:"usages,omitempty"`
	// IssueTempCert asks for a temporary self-signed certificate until the real one is issued.
	IssueTempCert bool `json:"issue-temp-cert,omitempty"`
}

// VirtualServerStatus reports whether the VirtualServer is in effect.
type VirtualServerStatus struct {
	// State is Valid, Warning or Invalid.
	State string `json:"state,omitempty"`
	// Reason is a one-word cause of the state.
	Reason string `json:"reason,omitempty"`
	// Message explains the state.
	Message string `json:"message,omitempty"`
	// ExternalEndpoints are the addresses the host is reachable at.
	ExternalEndpoints []ExternalEndpoint `json:"externalEndpoints,omitempty"`
}

// ExternalEndpoint is an address and ports a resource is reachable at.
type ExternalEndpoint struct {
	// IP address.
	IP string `json:"ip,omitempty"`
	// Hostname, for load balancers with DNS names.
	Hostname string `json:"hostname,omitempty"`
	// Ports, such as [80,443].
	Ports string `json:"ports,omitempty"`
}

// +kubebuilder:object:root=true

// VirtualServerList is a list of VirtualServers.
type VirtualServerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []VirtualServer `json:"items"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=vsr
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`,description="Whether the controller accepted the VirtualServerRoute (Valid, Warning or Invalid)."
// +kubebuilder:printcolumn:name="Host",type=string,JSONPath=`.spec.host`
// +kubebuilder:printcolumn:name="IP",type=string,JSONPath=`.status.externalEndpoints[*].ip`
// +kubebuilder:printcolumn:name="ExternalHostname",type=string,priority=1,JSONPath=`.status.externalEndpoints[*].hostname`
// +kubebuilder:printcolumn:name="Ports",type=string,JSONPath=`.status.externalEndpoints[*].ports`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// VirtualServerRoute holds routes under a path prefix of a VirtualServer,
// typically owned by another team or namespace.
type VirtualServerRoute struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec VirtualServerRouteSpec `json:"spec"`
	// Status is written by the controller.
	Status VirtualServerRouteStatus `json:"status,omitempty"`
}

// VirtualServerRouteSpec is what a VirtualServerRoute asks for.
type VirtualServerRouteSpec struct {
	// IngressClass must match that of the referring VirtualServer.
	IngressClass string `json:"ingressClassName,omitempty"`
	// Host must match that of the referring VirtualServer.
	Host string `json:"host,omitempty"`
	// Upstreams are the backends that subroutes send requests to.
	Upstreams []Upstream `json:"upstreams,omitempty"`
	// Subroutes must all start with the path of the referring route.
	Subroutes []Route `json:"subroutes,omitempty"`
}

// VirtualServerRouteStatus reports whether the VirtualServerRoute is in effect.
type VirtualServerRouteStatus struct {
	// State is Valid, Warning or Invalid.
	State string `json:"state,omitempty"`
	// Reason is a one-word cause of the state.
	Reason string `json:"reason,omitempty"`
	// Message explains the state.
	Message string `json:"message,omitempty"`
	// ReferencedBy is the namespace/name of the VirtualServer using this route.
	ReferencedBy string `json:"referencedBy,omitempty"`
	// ExternalEndpoints are the addresses the host is reachable at.
	ExternalEndpoints []ExternalEndpoint `json:"externalEndpoints,omitempty"`
}

// +kubebuilder:object:root=true

// VirtualServerRouteList is a list of VirtualServerRoutes.
type VirtualServerRouteList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []VirtualServerRoute `json:"items"`
}
