package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Names and protocols of listeners.
const (
	// TLSPassthroughListenerName is the built-in listener that passes TLS
	// connections through by server name.
	TLSPassthroughListenerName = "tls-passthrough"
	// TLSPassthroughListenerProtocol is the protocol of that listener.
	TLSPassthroughListenerProtocol = "TLS_PASSTHROUGH"
	// HTTPProtocol is the protocol of listeners used by VirtualServers.
	HTTPProtocol = "HTTP"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=gc

// GlobalConfiguration defines the controller's extra listeners. The
// controller reads one, named by a command-line flag.
type GlobalConfiguration struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec GlobalConfigurationSpec `json:"spec"`
}

// GlobalConfigurationSpec is what a GlobalConfiguration asks for.
type GlobalConfigurationSpec struct {
	// Listeners that VirtualServers and TransportServers can use.
	Listeners []Listener `json:"listeners,omitempty"`
}

// Listener is an address and port to accept connections on.
type Listener struct {
	// Name of the listener, unique in the GlobalConfiguration.
	Name string `json:"name,omitempty"`
	// Protocol: HTTP for VirtualServers, TCP or UDP for TransportServers.
	// +kubebuilder:validation:Enum=HTTP;TCP;UDP
	Protocol string `json:"protocol,omitempty"`
	// Port to listen on.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int `json:"port,omitempty"`
	// IPv4 address to listen on; all addresses when empty.
	IPv4 string `json:"ipv4,omitempty"`
	// IPv6 address to listen on; all addresses when empty.
	IPv6 string `json:"ipv6,omitempty"`
	// Ssl accepts TLS connections (HTTP listeners only).
	Ssl bool `json:"ssl,omitempty"`
}

// +kubebuilder:object:root=true

// GlobalConfigurationList is a list of GlobalConfigurations.
type GlobalConfigurationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []GlobalConfiguration `json:"items"`
}
