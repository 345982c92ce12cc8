// Package v1 holds the Go type of the externaldns.nginx.org/v1
// DNSEndpoint, the object NGINX Ingress Controller writes for a
// VirtualServer with spec.externalDNS and external-dns reads as a CRD
// source (--crd-source-apiversion=externaldns.nginx.org/v1
// --crd-source-kind=DNSEndpoint). Its JSON matches NIC's and
// external-dns's own DNSEndpoint; the Go names and documentation are
// Causeway's. make generate derives zz_generated.deepcopy.go and
// deploy/crds from it.
//
// +kubebuilder:object:generate=true
// +kubebuilder:validation:Optional
// +groupName=externaldns.nginx.org
package v1
