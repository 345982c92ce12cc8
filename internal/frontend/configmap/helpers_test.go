package configmap

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/causeway/causeway/internal/model"
)

// parseOne parses a ConfigMap holding one key.
func parseOne(key, value string) (model.Config, []model.Problem) {
	return Parse(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway-system", Name: "causeway"},
		Data: map[string]string{key: value}})
}
