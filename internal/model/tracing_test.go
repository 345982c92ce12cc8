package model

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseOperationName(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want OperationName
		err  string
	}{
		// ingress-nginx's example.
		{in: "HTTP $request_method $service_name $uri", want: OperationName{
			{Literal: "HTTP "}, {Variable: "request_method"}, {Literal: " "}, {Variable: "service_name"},
			{Literal: " "}, {Variable: "uri"}}},
		// The annotation's grammar in ingress-nginx: a plain word.
		{in: "checkout-api", want: OperationName{{Literal: "checkout-api"}}},
		{in: "${namespace}/${ingress_name}", want: OperationName{{Variable: "namespace"}, {Literal: "/"}, {Variable: "ingress_name"}}},
		{in: "$host$uri", want: OperationName{{Variable: "host"}, {Variable: "uri"}}},
		{in: `quotes "and' \backslashes{}`, want: OperationName{{Literal: `quotes "and' \backslashes{}`}}},
		{in: "", err: "want 1 to 256"},
		{in: strings.Repeat("a", 257), err: "want 1 to 256"},
		{in: "GET $", err: "starts no variable"},
		{in: "$ {uri}", err: "starts no variable"},
		{in: "${uri", err: "closing"},
		{in: "${}", err: "starts no variable"},
		// Only variables the controller fills: nothing nginx would
		// evaluate, no header a client chooses.
		{in: "$http_authorization", err: "not one a span name may use"},
		{in: "$remote_user", err: "not one a span name may use"},
		{in: "$uris", err: "not one a span name may use"},
		{in: "a\nb", err: "control byte"},
		{in: "caf\xc3\xa9", err: "must not contain"},
	} {
		got, err := ParseOperationName(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseOperationName(%q) = %v, %v; want an error containing %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseOperationName(%q) = %#v, %v; want %#v", tc.in, got, err, tc.want)
		}
	}
}

func TestOperationNameExpand(t *testing.T) {
	o, err := ParseOperationName("HTTP $request_method ${service_name}:$uri")
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]string{"request_method": "GET", "service_name": "web", "uri": "/a"}
	if got := o.Expand(func(n string) string { return vals[n] }); got != "HTTP GET web:/a" {
		t.Errorf("Expand = %q", got)
	}
	if got := o.String(); got != "HTTP ${request_method} ${service_name}:${uri}" {
		t.Errorf("String = %q", got)
	}
}

func FuzzParseOperationName(f *testing.F) {
	seedValues(f, "ParseOperationName", "HTTP $request_method $uri", "${host}${uri}", "$", "${uri", "a$b")
	f.Fuzz(func(t *testing.T, in string) {
		o, err := ParseOperationName(in)
		if err != nil {
			return
		}
		for i := 0; i < len(in); i++ {
			if in[i] < ' ' || in[i] >= 0x7f {
				t.Fatalf("accepted %q, which holds %s", in, describeByte(in[i]))
			}
		}
		for _, p := range o {
			if (p.Variable == "") == (p.Literal == "") {
				t.Fatalf("%q: part %#v is neither or both", in, p)
			}
			if p.Variable != "" && !OperationVariables[p.Variable] {
				t.Fatalf("%q: variable %q is not allowed", in, p.Variable)
			}
			if strings.Contains(p.Literal, "$") {
				t.Fatalf("%q: literal %q holds a $", in, p.Literal)
			}
		}
		again, err := ParseOperationName(o.String())
		if err != nil || again.String() != o.String() {
			t.Fatalf("%q: String %q does not parse to itself: %v", in, o.String(), err)
		}
	})
}

func TestParseCollectorHost(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{in: "otel-coll-collector.otel.svc", want: "otel-coll-collector.otel.svc"},
		{in: "Collector.Example.COM", want: "collector.example.com"},
		{in: "127.0.0.1", want: "127.0.0.1"},
		{in: "::1", want: "::1"},
		{in: "[2001:db8::1]", want: "2001:db8::1"},
		{in: "http://otel:4317", err: "without a scheme"},
		{in: "otel:4317", err: "invalid"},
		{in: "*.otel.svc", err: "wildcard"},
		{in: "fe80::1%eth0", err: "without a zone"},
		{in: "", err: "invalid"},
		{in: "otel svc", err: "invalid"},
	} {
		got, err := ParseCollectorHost(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseCollectorHost(%q) = %q, %v; want an error containing %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseCollectorHost(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestParseSamplerSettings(t *testing.T) {
	for in, want := range map[string]Sampler{"AlwaysOn": SamplerAlwaysOn, "alwaysoff": SamplerAlwaysOff, "TraceIdRatioBased": SamplerRatio} {
		if got, err := ParseSampler(in); err != nil || got != want {
			t.Errorf("ParseSampler(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"remote", "ParentBased", "", "AlwaysOn "} {
		if _, err := ParseSampler(bad); err == nil {
			t.Errorf("ParseSampler(%q) accepted", bad)
		}
	}
	for in, want := range map[string]float64{"0": 0, "0.01": 0.01, "1": 1, "1.0": 1, ".5": 0.5} {
		if got, err := ParseSamplerRatio(in); err != nil || got != want {
			t.Errorf("ParseSamplerRatio(%q) = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"-0.1", "1.01", "NaN", "Inf", "1/2", ""} {
		if _, err := ParseSamplerRatio(bad); err == nil {
			t.Errorf("ParseSamplerRatio(%q) accepted", bad)
		}
	}
	for in, want := range map[string]OTLPProtocol{"grpc": OTLPGRPC, "GRPC": OTLPGRPC, "http/protobuf": OTLPHTTP} {
		if got, err := ParseOTLPProtocol(in); err != nil || got != want {
			t.Errorf("ParseOTLPProtocol(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseOTLPProtocol("http/json"); err == nil {
		t.Error("ParseOTLPProtocol accepted http/json")
	}
}

func TestLocationTracing(t *testing.T) {
	on, off := true, false
	name := OperationName{{Literal: "x"}}
	global := DefaultTracing()
	global.Enabled = true
	for _, tc := range []struct {
		name   string
		global Tracing
		p      *TracingPolicy
		want   LocationTracing
	}{
		{"the ConfigMap's, without annotations", global, nil, LocationTracing{On: true, Trust: true}},
		{"off by default", DefaultTracing(), nil, LocationTracing{Trust: true}},
		{"an Ingress turns it on", DefaultTracing(), &TracingPolicy{Enabled: &on}, LocationTracing{On: true, Trust: true}},
		{"an Ingress turns it off", global, &TracingPolicy{Enabled: &off}, LocationTracing{Trust: true}},
		{"an Ingress distrusts", global, &TracingPolicy{TrustIncoming: &off, OperationName: name}, LocationTracing{On: true, OperationName: name}},
	} {
		if got := tc.global.For(tc.p); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: For = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
