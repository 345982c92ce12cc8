package configmap

import (
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/testcorpus"
)

func TestTracingKeys(t *testing.T) {
	def := model.DefaultTracing()
	for _, tc := range []struct {
		key, value string
		want       func(t model.Tracing) bool
		problem    string
	}{
		{"enable-opentelemetry", "true", func(t model.Tracing) bool { return t.Enabled }, "otlp-collector-host is not set"},
		{"enable-opentelemetry", "false", func(t model.Tracing) bool { return !t.Enabled }, ""},
		{"enable-opentelemetry", "on", func(t model.Tracing) bool { return !t.Enabled }, `key "enable-opentelemetry"`},
		{"opentelemetry-trust-incoming-span", "false", func(t model.Tracing) bool { return !t.TrustIncoming }, ""},
		{"opentelemetry-operation-name", "HTTP $request_method $service_name $uri",
			func(t model.Tracing) bool {
				return t.OperationName.String() == "HTTP ${request_method} ${service_name} ${uri}"
			}, ""},
		{"opentelemetry-operation-name", "", func(t model.Tracing) bool { return t.OperationName == nil }, ""},
		{"opentelemetry-operation-name", "$http_cookie", func(t model.Tracing) bool { return t.OperationName == nil }, "not one a span name may use"},
		{"otlp-collector-host", "otel-coll-collector.otel.svc", func(t model.Tracing) bool {
			return t.Collector.Address() == "otel-coll-collector.otel.svc:4317"
		}, ""},
		{"otlp-collector-host", "http://otel:4317", func(t model.Tracing) bool { return t.Collector.Host == "" }, "without a scheme"},
		{"otlp-collector-port", "14317", func(t model.Tracing) bool { return t.Collector.Port == 14317 }, ""},
		{"otlp-collector-port", "0", func(t model.Tracing) bool { return t.Collector.Port == 0 }, "want an integer from 1 to 65535"},
		{"otlp-collector-protocol", "http/protobuf", func(t model.Tracing) bool {
			return t.Collector.Protocol == model.OTLPHTTP && t.Collector.Address() == ":4318"
		}, ""},
		{"otlp-collector-protocol", "thrift", func(t model.Tracing) bool { return t.Collector.Protocol == model.OTLPGRPC }, "want grpc or http/protobuf"},
		{"otel-service-name", "nginx-proxy", func(t model.Tracing) bool { return t.ServiceName == "nginx-proxy" }, ""},
		{"otel-service-name", "", func(t model.Tracing) bool { return t.ServiceName == "nginx" }, "want 1 to 255"},
		{"otel-max-queuesize", "4096", func(t model.Tracing) bool { return t.MaxQueueSize == 4096 }, ""},
		{"otel-max-queuesize", "100", func(t model.Tracing) bool { return t.MaxQueueSize == 100 && t.MaxExportBatchSize == 100 },
			"otel-max-export-batch-size 512 is larger than otel-max-queuesize 100"},
		{"otel-max-export-batch-size", "128", func(t model.Tracing) bool { return t.MaxExportBatchSize == 128 }, ""},
		{"otel-schedule-delay-millis", "250", func(t model.Tracing) bool { return t.ScheduleDelay == 250*time.Millisecond }, ""},
		{"otel-schedule-delay-millis", "-1", func(t model.Tracing) bool { return t.ScheduleDelay == def.ScheduleDelay }, "want an integer"},
		{"otel-sampler", "TraceIdRatioBased", func(t model.Tracing) bool { return t.Sampler == model.SamplerRatio }, ""},
		{"otel-sampler", "remote", func(t model.Tracing) bool { return t.Sampler == model.SamplerAlwaysOn }, "want AlwaysOn"},
		{"otel-sampler-ratio", "0.25", func(t model.Tracing) bool { return t.Ratio == 0.25 }, ""},
		{"otel-sampler-ratio", "2", func(t model.Tracing) bool { return t.Ratio == 0.01 }, "from 0 to 1"},
		{"otel-sampler-parent-based", "false", func(t model.Tracing) bool { return !t.ParentBased }, ""},
		{"opentelemetry-config", "/etc/otel.toml", func(t model.Tracing) bool { return true }, "no nginx module reads a configuration file"},
	} {
		cfg, problems := parseOne(tc.key, tc.value)
		if !tc.want(cfg.Tracing) {
			t.Errorf("%s=%q: tracing %+v", tc.key, tc.value, cfg.Tracing)
		}
		switch {
		case tc.problem == "" && len(problems) > 0:
			t.Errorf("%s=%q: problems %v", tc.key, tc.value, problems)
		case tc.problem != "" && (len(problems) != 1 || !strings.Contains(problems[0].Message, tc.problem)):
			t.Errorf("%s=%q: problems %v, want one containing %q", tc.key, tc.value, problems, tc.problem)
		}
	}
}

func TestTracingDefaultsAreIngressNginxs(t *testing.T) {
	cfg, problems := Parse(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ingress-nginx", Name: "c"}, Data: map[string]string{
		// ingress-nginx's example, with its defaults spelled out.
		"enable-opentelemetry": "true", "opentelemetry-trust-incoming-span": "true", "otlp-collector-host": "otel-coll-collector.otel.svc",
		"otlp-collector-port": "4317", "otel-max-queuesize": "2048", "otel-schedule-delay-millis": "5000",
		"otel-max-export-batch-size": "512", "otel-service-name": "nginx", "otel-sampler": "AlwaysOn",
		"otel-sampler-ratio": "0.01", "otel-sampler-parent-based": "true",
	}})
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	want := model.DefaultTracing()
	want.Enabled, want.Collector.Host, want.Collector.Port = true, "otel-coll-collector.otel.svc", 4317
	if got := cfg.Tracing; !reflect.DeepEqual(got, want) {
		t.Errorf("tracing %+v, want %+v", got, want)
	}
}

func TestTracingKeysRefuseInjection(t *testing.T) {
	for _, key := range []string{"opentelemetry-operation-name", "otlp-collector-host", "otel-service-name", "otel-sampler", "otel-sampler-ratio"} {
		for _, v := range testcorpus.Injection {
			cfg, problems := parseOne(key, v)
			if len(problems) > 0 {
				continue
			}
			// Accepted values reach no nginx file; they hold no control
			// byte either.
			for _, s := range []string{cfg.Tracing.OperationName.String(), cfg.Tracing.Collector.Host, cfg.Tracing.ServiceName} {
				if strings.IndexFunc(s, func(r rune) bool { return r < ' ' || r >= 0x7f }) >= 0 {
					t.Errorf("%s=%q accepted as %q", key, v, s)
				}
			}
		}
	}
}
