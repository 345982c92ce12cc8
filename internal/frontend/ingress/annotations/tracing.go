package annotations

import "github.com/causeway/causeway/internal/model"

// tracingGroup turns OpenTelemetry tracing on or off for the Ingress's
// paths and says how (model.TracingPolicy); the ConfigMap's keys of the
// same names are the defaults, and configure the export.
var tracingGroup = Group{
	Name: "observability",
	Annotations: supported("observability",
		Annotation{Name: "enable-opentelemetry", Scope: ScopeLocation, Default: "the ConfigMap's enable-opentelemetry (false)",
			Grammar: "a boolean: trace the Ingress's paths (docs/tracing.md)",
			Difference: "nginx starts or continues the W3C trace context and logs the span; the controller exports it to the " +
				"ConfigMap's otlp-collector-host, a second or two after the request"},
		Annotation{Name: "opentelemetry-trust-incoming-span", Scope: ScopeLocation, Default: "the ConfigMap's opentelemetry-trust-incoming-span (true)",
			Grammar: "a boolean: continue a valid incoming W3C traceparent (and pass its tracestate on) rather than start a new trace",
			Difference: "applies whenever the path is traced, whether or not the Ingress sets enable-opentelemetry " +
				"(ingress-nginx ignores it without enable-opentelemetry \"true\")"},
		Annotation{Name: "opentelemetry-operation-name", Scope: ScopeLocation, Default: "the ConfigMap's opentelemetry-operation-name, else the Ingress path",
			Grammar: "up to 256 bytes of printable ASCII with the variables $request_method, $uri, $request_uri, $host, $scheme, $server_name, " +
				"$server_port, $server_protocol, $status, $namespace, $ingress_name, $service_name, $service_port, $location_path and " +
				"$proxy_upstream_name ($name or ${name}), filled in by the controller",
			Difference: "variables are allowed (ingress-nginx accepts letters, digits, _ and - only), and it applies whether or not " +
				"the Ingress sets enable-opentelemetry"},
	),
	Parse: parseTracing,
}

func parseTracing(r *Reader, res *Result) {
	p := &model.TracingPolicy{}
	SetPtr(r, "enable-opentelemetry", &p.Enabled, model.ParseBool)
	SetPtr(r, "opentelemetry-trust-incoming-span", &p.TrustIncoming, model.ParseBool)
	Set(r, "opentelemetry-operation-name", &p.OperationName, model.ParseOperationName)
	if p.Enabled != nil || p.TrustIncoming != nil || p.OperationName != nil {
		res.Location.Tracing = p
	}
}
