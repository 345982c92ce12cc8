package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// DNSEndpoint lists DNS records for external-dns to keep in a DNS
// provider.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=dnsendpoints
// +kubebuilder:subresource:status
type DNSEndpoint struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   DNSEndpointSpec   `json:"spec,omitempty"`
	Status DNSEndpointStatus `json:"status,omitempty"`
}

// DNSEndpointSpec is the records.
type DNSEndpointSpec struct {
	// Endpoints are the records, one per name and type.
	Endpoints []*Endpoint `json:"endpoints,omitempty"`
}

// DNSEndpointStatus is written by external-dns.
type DNSEndpointStatus struct {
	// ObservedGeneration is the generation external-dns last acted on.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// Endpoint is one DNS record set.
type Endpoint struct {
	// DNSName is the record's name.
	DNSName string `json:"dnsName,omitempty"`
	// Targets are the record's values: addresses, or a host name for a CNAME.
	Targets Targets `json:"targets,omitempty"`
	// RecordType is the record's type: A, AAAA, CNAME, and so on.
	RecordType string `json:"recordType,omitempty"`
	// RecordTTL is the record's TTL in seconds; 0 leaves it to the provider.
	RecordTTL TTL `json:"recordTTL,omitempty"`
	// Labels are external-dns's labels of the record.
	Labels Labels `json:"labels,omitempty"`
	// ProviderSpecific are settings for one DNS provider.
	ProviderSpecific ProviderSpecific `json:"providerSpecific,omitempty"`
}

// TTL is a record's TTL in seconds.
type TTL int64

// Targets are a record's values.
type Targets []string

// Labels are a record's labels.
type Labels map[string]string

// ProviderSpecific are settings for one DNS provider.
type ProviderSpecific []ProviderSpecificProperty

// ProviderSpecificProperty is one of them.
type ProviderSpecificProperty struct {
	// Name of the setting.
	Name string `json:"name,omitempty"`
	// Value of the setting.
	Value string `json:"value,omitempty"`
}

// DNSEndpointList is a list of DNSEndpoints.
//
// +kubebuilder:object:root=true
type DNSEndpointList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []DNSEndpoint `json:"items"`
}
