package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=ts
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`,description="Whether the controller accepted the TransportServer (Valid, Warning or Invalid)."
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// TransportServer configures TCP, UDP and TLS passthrough load balancing.
type TransportServer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec TransportServerSpec `json:"spec"`
	// Status is written by the controller.
	Status TransportServerStatus `json:"status,omitempty"`
}

// TransportServerSpec is what a TransportServer asks for.
type TransportServerSpec struct {
	// IngressClass names the ingress class whose controller handles this resource.
	IngressClass string `json:"ingressClassName,omitempty"`
	// TLS terminates TLS on the listener.
	TLS *TransportServerTLS `json:"tls,omitempty"`
	// Listener is the GlobalConfiguration listener (or tls-passthrough) that accepts the connections.
	Listener TransportServerListener `json:"listener,omitempty"`
	// ServerSnippets is raw configuration for the stream server context.
	ServerSnippets string `json:"serverSnippets,omitempty"`
	// StreamSnippets is raw configuration for the stream context.
	StreamSnippets string `json:"streamSnippets,omitempty"`
	// Host is the TLS server name, for the tls-passthrough listener.
	Host string `json:"host,omitempty"`
	// Upstreams are the backends that the action sends connections to.
	Upstreams []TransportServerUpstream `json:"upstreams,omitempty"`
	// UpstreamParameters tune connections to the upstreams.
	UpstreamParameters *UpstreamParameters `json:"upstreamParameters,omitempty"`
	// SessionParameters tune client sessions.
	SessionParameters *SessionParameters `json:"sessionParameters,omitempty"`
	// Action says where connections go.
	Action *TransportServerAction `json:"action,omitempty"`
}

// TransportServerTLS terminates TLS on a TransportServer's listener.
type TransportServerTLS struct {
	// Secret is a kubernetes.io/tls Secret in the TransportServer's namespace.
	Secret string `json:"secret,omitempty"`
}

// TransportServerListener names the listener of a TransportServer.
type TransportServerListener struct {
	// Name of a GlobalConfiguration listener, or tls-passthrough.
	Name string `json:"name,omitempty"`
	// Protocol of the listener: TCP, UDP, or TLS_PASSTHROUGH for tls-passthrough.
	Protocol string `json:"protocol,omitempty"`
}

// TransportServerUpstream is a backend Service of a TransportServer.
type TransportServerUpstream struct {
	// Name of the upstream, unique within the resource.
	Name string `json:"name,omitempty"`
	// Service is the backend Service in the TransportServer's namespace.
	Service string `json:"service,omitempty"`
	// Port is the Service port.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int `json:"port,omitempty"`
	// FailTimeout is the window in which maxFails failures mark a server unavailable.
	FailTimeout string `json:"failTimeout,omitempty"`
	// MaxFails is the number of failures within failTimeout that mark a server unavailable.
	MaxFails *int `json:"maxFails,omitempty"`
	// MaxConns limits simultaneous connections to each server; 0 means no limit.
	MaxConns *int `json:"maxConns,omitempty"`
	// HealthCheck configures active health checks (NGINX Plus only).
	HealthCheck *TransportServerHealthCheck `json:"healthCheck,omitempty"`
	// LoadBalancingMethod, such as round_robin, least_conn or hash.
	LoadBalancingMethod string `json:"loadBalancingMethod,omitempty"`
	// Backup is an ExternalName Service used when all servers are down (NGINX Plus only).
	Backup string `json:"backup,omitempty"`
	// BackupPort is the port of the backup Service.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	BackupPort *uint16 `json:"backupPort,omitempty"`
}

// TransportServerHealthCheck configures active health checks (NGINX Plus only).
type TransportServerHealthCheck struct {
	// Enable turns health checks on.
	Enable bool `json:"enable,omitempty"`
	// Timeout of each check.
	Timeout string `json:"timeout,omitempty"`
	// Jitter randomly delays each check by up to this time.
	Jitter string `json:"jitter,omitempty"`
	// Port of the pod checked, when not the server port.
	Port int `json:"port,omitempty"`
	// Interval between checks.
	Interval string `json:"interval,omitempty"`
	// Passes is the number of passed checks after which a server is healthy.
	Passes int `json:"passes,omitempty"`
	// Fails is the number of failed checks after which a server is unhealthy.
	Fails int `json:"fails,omitempty"`
	// Match is the data sent and the response expected.
	Match *TransportServerMatch `json:"match,omitempty"`
}

// TransportServerMatch is the exchange of a stream health check.
type TransportServerMatch struct {
	// Send is the data sent to the server.
	Send string `json:"send,omitempty"`
	// Expect is a string or, with a leading ~, a regular expression the response must match.
	Expect string `json:"expect,omitempty"`
}

// UpstreamParameters tune connections to a TransportServer's upstreams.
type UpstreamParameters struct {
	// UDPRequests is the number of datagrams after which a UDP session ends.
	UDPRequests *int `json:"udpRequests,omitempty"`
	// UDPResponses is the number of datagrams expected in reply to a request.
	UDPResponses *int `json:"udpResponses,omitempty"`
	// ConnectTimeout for connecting to a server.
	ConnectTimeout string `json:"connectTimeout,omitempty"`
	// NextUpstream retries a failed connection on another server.
	NextUpstream bool `json:"nextUpstream,omitempty"`
	// NextUpstreamTimeout limits the time spent retrying; 0 means no limit.
	NextUpstreamTimeout string `json:"nextUpstreamTimeout,omitempty"`
	// NextUpstreamTries limits the number of tries; 0 means no limit.
	NextUpstreamTries int `json:"nextUpstreamTries,omitempty"`
}

// SessionParameters tune client sessions of a TransportServer.
type SessionParameters struct {
	// Timeout between two reads or writes on a client or server connection.
	Timeout string `json:"timeout,omitempty"`
}

// TransportServerAction says where a TransportServer's connections go.
type TransportServerAction struct {
	// Pass sends connections to the named upstream.
	Pass string `json:"pass,omitempty"`
}

// TransportServerStatus reports whether the TransportServer is in effect.
type TransportServerStatus struct {
	// State is Valid, Warning or Invalid.
	State string `json:"state,omitempty"`
	// Reason is a one-word cause of the state.
	Reason string `json:"reason,omitempty"`
	// Message explains the state.
	Message string `json:"message,omitempty"`
}

// +kubebuilder:object:root=true

// TransportServerList is a list of TransportServers.
type TransportServerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []TransportServer `json:"items"`
}
