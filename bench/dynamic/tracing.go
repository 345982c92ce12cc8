package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
)

// Section (o): what OpenTelemetry tracing costs per request. One
// controller (one worker, access log off, metrics on) serves a host that
// is not traced and one that is (the enable-opentelemetry annotation);
// the traced host is loaded twice: as it comes (AlwaysOn: a trace
// started, the traceparent sent upstream, a line in the span log, a span
// exported), and with an incoming traceparent whose parent is not
// sampled (parent-based: the context passed on, nothing logged). The
// spans go over OTLP/gRPC to a receiver in this process that counts them.

const (
	tracedHost   = "traced.bench.test"
	untracedHost = "untraced.bench.test"
)

// spanSink is an OTLP/gRPC trace receiver that counts what it gets.
type spanSink struct {
	collectortrace.UnimplementedTraceServiceServer
	spans atomic.Int64
	port  int
	srv   *grpc.Server
}

func (s *spanSink) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	var n int64
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			n += int64(len(ss.GetSpans()))
		}
	}
	s.spans.Add(n)
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// startSpanSink listens on 127.0.0.1.
func startSpanSink() (*spanSink, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &spanSink{port: l.Addr().(*net.TCPAddr).Port, srv: grpc.NewServer()}
	collectortrace.RegisterTraceServiceServer(s.srv, s)
	go s.srv.Serve(l)
	return s, nil
}

// runTracing runs section (o).
func runTracing(ctx context.Context, e *env, c *config, rep *report) error {
	p, bs, err := twoBackends(e)
	if err != nil {
		return err
	}
	defer p.close()
	sink, err := startSpanSink()
	if err != nil {
		return err
	}
	defer sink.srv.Stop()
	// ingress-nginx's batch defaults: a queue of 2048, batches of 512 sent
	// when full or every 5 s.
	cm := map[string]string{"worker-processes": "1", "disable-access-log": "true",
		"otlp-collector-host": "127.0.0.1", "otlp-collector-port": strconv.Itoa(sink.port)}
	app := ingressClassYAML + configMapYAML(cm) + serviceYAML() + ingressYAML("untraced", untracedHost) +
		annotatedIngressYAML("traced", tracedHost, service, [2]string{"enable-opentelemetry", "true"})
	ctl, err := e.startController(ctx, "tracing", map[string]string{"app.yaml": app, "slice.yaml": sliceYAML(p.port, bs[0].IP)}, c)
	if err != nil {
		return err
	}
	defer ctl.stop()
	if err := ctl.checkRendered("tracing", []string{"causeway_trace buffer=64k flush=1s if=$causeway_trace_sampled;", "proxy_set_header traceparent $causeway_traceparent;", metricsHook}, nil); err != nil {
		return err
	}
	for _, host := range []string{untracedHost, tracedHost} {
		if err := waitServedBy(ctx, hostClient(ctl.HTTPAddr(), host), bs[0].Addr, 10*time.Second); err != nil {
			return fmt.Errorf("%s: %w", host, err)
		}
	}
	unsampled := []string{"traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"}
	sides := []side{
		{name: "not traced", httpAddr: ctl.HTTPAddr(), host: untracedHost, master: ctl.nginxPID, controller: ctl.pid},
		{name: "traced, sampled (span logged and exported)", httpAddr: ctl.HTTPAddr(), host: tracedHost, master: ctl.nginxPID, controller: ctl.pid},
		{name: "traced, parent not sampled (context only)", httpAddr: ctl.HTTPAddr(), host: tracedHost, master: ctl.nginxPID, controller: ctl.pid},
	}
	headers := map[string][]string{sides[2].name: unsampled}
	loader := c.resolvedLoader()
	var sampledSent atomic.Int64
	load := func(sd side, d time.Duration) (sample, error) {
		var s sample
		var err error
		if loader == "wrk" {
			s, err = wrkLoad(ctx, "http://"+sd.httpAddr+"/", sd.host, headers[sd.name], c.conns, d, -1)
		} else {
			s, err = vegetaLoad(ctx, "http://"+sd.httpAddr+"/", sd.host, headers[sd.name], c.conns, d)
		}
		if sd.name == sides[1].name {
			sampledSent.Add(int64(s.count + s.bad))
		}
		return s, err
	}
	fmt.Fprintf(os.Stderr, "(o) tracing cost: %s, %d rounds of %s per location ...\n", loader, c.rounds, c.tputDuration)
	res, err := abRounds(ctx, c.rounds, sides, time.Second, c.tputDuration, load)
	if err != nil {
		return err
	}
	// The last spans: nginx flushes its buffer within a second, the
	// controller reads once a second and exports within 5 s.
	deadline := time.Now().Add(20 * time.Second)
	for sink.spans.Load() < sampledSent.Load() && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	dropped, _ := ctl.Metric("causeway_trace_dropped_spans_total")
	exported, _ := ctl.Metric("causeway_trace_exported_spans_total")
	t := &table{title: "(o) OpenTelemetry tracing: nginx CPU per request, traced vs not traced", header: []string{"location"}}
	_, cpu := compareTable(t, "req", sides, res, 0, func(int) []string { return nil })
	t.note("One controller, ConfigMap `worker-processes: \"1\"`, `disable-access-log: \"true\"`, metrics on, `otlp-collector-host` a receiver in this process (OTLP/gRPC, counting spans); ingress-nginx's defaults otherwise: a queue of 2048 spans, batches of 512, sampler AlwaysOn, parent-based. The traced host has `enable-opentelemetry: \"true\"`; the parent-not-sampled rows send `traceparent: 00-…-00`. Go echo backends; %s with %d keep-alive connections, %d rounds of %s per location, each round every location in turn.", loader, c.conns, c.rounds, c.tputDuration)
	t.note("Spans received: %d of %d sampled requests sent (warm-up and readiness polls included; fewer is the batch queue overflowing); the controller counted %v exported and %v dropped. Controller CPU per request: %s.", sink.spans.Load(), sampledSent.Load(), num(exported), num(dropped), ctlCPUNote(sides, res))
	t.note("%s", failureNote(res))
	rep.addTable(t)
	rep.target("(o) tracing: nginx CPU per request, traced and sampled / not traced", "informational", fmt.Sprintf("%.2f×", cpu[1]), nil)
	rep.target("(o) tracing: nginx CPU per request, traced, parent not sampled / not traced", "informational", fmt.Sprintf("%.2f×", cpu[2]), nil)
	ctlOn, ctlOff := medianPer(res[1], sample.ctlCPUPer), medianPer(res[0], sample.ctlCPUPer)
	rep.target("(o) tracing: controller CPU per exported span (traced and sampled minus not traced)", "informational", us(ctlOn-ctlOff), nil)
	return nil
}
