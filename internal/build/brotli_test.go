package build

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

// TestBrotliNeedsTheModule: enable-brotli without nginx's brotli module
// is a Problem on the ConfigMap, and brotli stays off; with the module it
// is on.
func TestBrotliNeedsTheModule(t *testing.T) {
	snap := &source.Snapshot{ConfigMaps: []*corev1.ConfigMap{{
		ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: "config"},
		Data:       map[string]string{"enable-brotli": "true"},
	}}}
	m, problems := Build(snap, testOpts)
	if m.Config.Brotli.Enabled {
		t.Error("brotli is on without its module")
	}
	if len(problems) != 1 || problems[0].Object.Kind != "ConfigMap" || problems[0].Reason != model.ReasonInvalidConfig ||
		!strings.Contains(problems[0].Message, "enable-brotli") {
		t.Errorf("problems %v, want one about enable-brotli on the ConfigMap", problems)
	}
	opts := testOpts
	opts.BrotliAvailable = true
	m, problems = Build(snap, opts)
	if !m.Config.Brotli.Enabled || len(problems) != 0 {
		t.Errorf("with the module: brotli %v, problems %v; want on and none", m.Config.Brotli.Enabled, problems)
	}
}
