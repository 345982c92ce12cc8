// Package v1 holds Go types for the k8s.nginx.org/v1 custom resources of
// the NGINX Ingress Controller (VirtualServer, VirtualServerRoute,
// TransportServer, Policy and GlobalConfiguration), so that Causeway's
// CustomResourceDefinitions accept the manifests users already have.
//
// The JSON field names, kinds and versions match NGINX Ingress Controller's
// API exactly; the Go names and documentation are Causeway's. Fields are
// optional unless marked required, as in that API. make generate derives
// zz_generated.deepcopy.go and deploy/crds from these types.
//
// +kubebuilder:object:generate=true
// +kubebuilder:validation:Optional
// +groupName=k8s.nginx.org
package v1
