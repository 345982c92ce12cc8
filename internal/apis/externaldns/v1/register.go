package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of DNSEndpoint.
const GroupName = "externaldns.nginx.org"

// SchemeGroupVersion is the group and version of DNSEndpoint.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1"}

// DNSEndpoints is the resource of DNSEndpoint.
var DNSEndpoints = SchemeGroupVersion.WithResource("dnsendpoints")

var (
	// SchemeBuilder registers this package's types with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds this package's types to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion, &DNSEndpoint{}, &DNSEndpointList{})
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
