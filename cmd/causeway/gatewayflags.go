package main

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/causeway/causeway/internal/gatewayservice"
)

// gatewayFlags say how the leader makes each Gateway's own Service
// (package gatewayservice).
type gatewayFlags struct {
	serviceType string
	portRange   string
	selector    string
}

// defaultGatewayPortRange holds the internal ports of Gateways' listeners:
// clear of the controller's own ports (80, 443, 8080, 8443, 8081, 9113,
// 10254, the webhook's 8444) and below Linux's ephemeral ports
// (32768-60999) and Kubernetes' node ports (30000-32767).
const defaultGatewayPortRange = "20000-20999"

func (g *gatewayFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&g.serviceType, "gateway-service-type", string(corev1.ServiceTypeLoadBalancer),
		"type of the Service the leader keeps per Gateway of Causeway's GatewayClasses, whose address is the Gateway's: LoadBalancer, NodePort or ClusterIP")
	fl.StringVar(&g.portRange, "gateway-port-range", defaultGatewayPortRange,
		"FIRST-LAST: the container ports nginx listens on for Gateways' listeners, one per Gateway listener port, recorded as the targetPorts of the Gateways' Services; it must hold no port the controller or its TCP/UDP listeners use")
	fl.StringVar(&g.selector, "gateway-service-selector", "app.kubernetes.io/name=causeway",
		"labels of the controller's Pods (KEY=VALUE,...) that the Gateways' Services select: they must select this controller's Pods and no others (the chart sets its own)")
}

// validate checks the flags; own are the ports the controller listens on.
func (g *gatewayFlags) validate(own map[string]int) error {
	_, err := g.options("")
	if err != nil {
		return err
	}
	r, _ := gatewayservice.ParsePortRange(g.portRange)
	for name, p := range own {
		if p > 0 && r.Contains(int32(p)) {
			return fmt.Errorf("--gateway-port-range %s holds %s %d", r, name, p)
		}
	}
	return nil
}

// options are the gatewayservice.Options of the flags, for the Services
// of namespace.
func (g *gatewayFlags) options(namespace string) (gatewayservice.Options, error) {
	o := gatewayservice.Options{Namespace: namespace, Type: corev1.ServiceType(g.serviceType)}
	switch o.Type {
	case corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort, corev1.ServiceTypeClusterIP:
	default:
		return o, fmt.Errorf("--gateway-service-type %q: want LoadBalancer, NodePort or ClusterIP", g.serviceType)
	}
	var err error
	if o.Ports, err = gatewayservice.ParsePortRange(g.portRange); err != nil {
		return o, fmt.Errorf("--gateway-port-range %w", err)
	}
	sel, err := labels.ConvertSelectorToLabelsMap(g.selector)
	if err != nil || len(sel) == 0 {
		return o, fmt.Errorf("--gateway-service-selector %q: want KEY=VALUE[,KEY=VALUE...] (%v)", g.selector, err)
	}
	for k, v := range sel {
		if errs := append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...); len(errs) > 0 {
			return o, fmt.Errorf("--gateway-service-selector %q: %s", g.selector, strings.Join(errs, "; "))
		}
	}
	o.Selector = sel
	return o, nil
}

// ownPorts are the ports the controller listens on, by flag.
func (f *controllerFlags) ownPorts() map[string]int {
	own := map[string]int{"--http-port": f.httpPort, "--https-port": f.httpsPort, "--health-port": f.healthPort,
		"--metrics-port": f.metricsPort, "--healthz-port": f.healthzPort}
	if _, port, err := net.SplitHostPort(f.webhook.address); err == nil {
		if p, err := strconv.Atoi(port); err == nil {
			own["--validating-webhook-address's port"] = p
		}
	}
	return own
}

// controllerNamespace is where the controller runs and keeps the
// Services of Gateways: $POD_NAMESPACE (the chart and deploy/ set it from
// the downward API), else the --configmap namespace.
func controllerNamespace(configMap string) string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	ns, _, _ := strings.Cut(configMap, "/")
	return ns
}
