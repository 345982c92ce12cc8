package gatewayservice

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// AnnotationInfrastructure lists the label and annotation keys a Service
// took from its Gateway's spec.infrastructure ("label:KEY" and
// "annotation:KEY", comma-separated), so that a key removed there is
// removed from the Service too, while keys others set (a load balancer
// controller's) stay.
const AnnotationInfrastructure = "gateway.causeway.io/infrastructure-keys"

// infrastructure puts onto s, the Service of gw, the labels and
// annotations of gw's spec.infrastructure (GatewayInfrastructure: "to
// resources created in response to the Gateway"), and Gateway API's
// gateway-name label. A key Causeway sets itself keeps Causeway's value;
// each such key is returned, for a Problem.
func infrastructure(gw *gwv1.Gateway, s *corev1.Service) (refused []string) {
	s.Labels[gwv1.GatewayNameLabelKey] = labelValue(gw.Name)
	inf := gw.Spec.Infrastructure
	if inf == nil {
		return nil
	}
	var keys []string
	for _, k := range slices.Sorted(maps.Keys(inf.Labels)) {
		if _, ours := s.Labels[string(k)]; ours {
			refused = append(refused, "label "+string(k))
			continue
		}
		s.Labels[string(k)] = string(inf.Labels[k])
		keys = append(keys, "label:"+string(k))
	}
	for _, k := range slices.Sorted(maps.Keys(inf.Annotations)) {
		if string(k) == AnnotationInfrastructure {
			refused = append(refused, "annotation "+string(k))
			continue
		}
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		s.Annotations[string(k)] = string(inf.Annotations[k])
		keys = append(keys, "annotation:"+string(k))
	}
	if len(keys) > 0 {
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		s.Annotations[AnnotationInfrastructure] = strings.Join(keys, ",")
	}
	return refused
}

// infrastructureKeys are the keys s took from its Gateway's
// spec.infrastructure, as AnnotationInfrastructure lists them.
func infrastructureKeys(s *corev1.Service) []string {
	v := s.Annotations[AnnotationInfrastructure]
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

// StaleInfrastructure are the keys have took from its Gateway's
// spec.infrastructure that want no longer has.
func StaleInfrastructure(have, want *corev1.Service) []string {
	wanted := infrastructureKeys(want)
	var out []string
	for _, k := range infrastructureKeys(have) {
		if !slices.Contains(wanted, k) {
			out = append(out, k)
		}
	}
	return out
}

// RemoveInfrastructure deletes keys (StaleInfrastructure's) from s.
func RemoveInfrastructure(s *corev1.Service, keys []string) {
	for _, k := range keys {
		switch kind, name, _ := strings.Cut(k, ":"); kind {
		case "label":
			delete(s.Labels, name)
		case "annotation":
			delete(s.Annotations, name)
		}
	}
	if len(infrastructureKeys(s)) > 0 && len(keys) > 0 {
		delete(s.Annotations, AnnotationInfrastructure)
	}
}

func refusedMessage(refused []string) string {
	return fmt.Sprintf("spec.infrastructure: %s are set by Causeway on the Gateway's Service and keep Causeway's values", strings.Join(refused, ", "))
}
