// The Gateway API conformance suite (sigs.k8s.io/gateway-api/conformance,
// pinned in go.mod) against Causeway in the tier-5 cluster. hack/
// gateway-conformance.sh (make test-gateway-conformance) brings the cluster
// up, installs Causeway with its chart and the CRDs, and runs this with
// KUBECONFIG set to the cluster's admin kubeconfig:
//
//	cd hack/gateway-api && GOWORK=off go test -count=1 -timeout 60m . \
//	    [-run-test HTTPRouteSimpleSameNamespace] [-debug]
//
// The suite's own flags (utils/flags: -run-test, -debug, -cleanup-base-
// resources ...) are taken; what Causeway's runs always set is below.
package conformance

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/gateway-api/conformance"
	confv1 "sigs.k8s.io/gateway-api/conformance/apis/v1"
	"sigs.k8s.io/gateway-api/conformance/tests"
	"sigs.k8s.io/gateway-api/conformance/utils/suite"
	"sigs.k8s.io/gateway-api/pkg/features"
)

// GatewayClassName is the GatewayClass the chart installs for Causeway's
// controllerName causeway.io/gateway-controller.
const GatewayClassName = "causeway"

// Profiles are the conformance profiles Causeway claims (issue 34).
var Profiles = []suite.ConformanceProfileName{
	suite.GatewayHTTPConformanceProfileName,
	suite.GatewayGRPCConformanceProfileName,
	suite.GatewayTLSConformanceProfileName,
}

// skipped are the suite's tests (ShortName) not run, each with the reason
// written down. None may be a Core test of a claimed profile
// (TestSkippedHaveReasons keeps that).
var skipped = map[string]string{}

// TestConformance runs the suite. The supported Extended features are not
// listed here: the suite reads them from the GatewayClass's
// status.supportedFeatures, which the controller fills, so the report
// claims exactly what the controller says it can do.
func TestConformance(t *testing.T) {
	if os.Getenv("KUBECONFIG") == "" {
		t.Skip("KUBECONFIG is not set: run make test-gateway-conformance, which starts the cluster")
	}
	opts := conformance.DefaultOptions(t)
	opts.GatewayClassName = GatewayClassName
	opts.ConformanceProfiles = Profiles
	opts.Implementation = confv1.Implementation{
		Organization: "causeway",
		Project:      "causeway",
		URL:          "https://github.com/causeway/causeway",
		Version:      envOr("CAUSEWAY_VERSION", "dev"),
		Contact:      []string{"https://github.com/causeway/causeway/issues"},
	}
	opts.ReportOutputPath = os.Getenv("CAUSEWAY_CONFORMANCE_REPORT")
	if opts.ReportOutputPath != "" {
		if err := os.MkdirAll(filepath.Dir(opts.ReportOutputPath), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, reason := range skipped {
		t.Logf("skipping %s: %s", name, reason)
		opts.SkipTests = append(opts.SkipTests, name)
	}
	slices.Sort(opts.SkipTests)
	// Two cores shared with the cluster: the suite's parallel tests would
	// mostly measure the machine.
	opts.DisableParallelTests = envOr("CAUSEWAY_CONFORMANCE_PARALLEL", "") == ""
	conformance.RunConformanceWithOptions(t, opts)
}

// TestSkippedHaveReasons: every skipped test exists in the pinned suite,
// has a reason, and is no Core test of a claimed profile (a test whose
// features are all among a claimed profile's Core features).
func TestSkippedHaveReasons(t *testing.T) {
	core := map[features.FeatureName]bool{}
	for _, p := range Profiles {
		for _, f := range profileCore(t, p) {
			core[f] = true
		}
	}
	for name, reason := range skipped {
		if strings.TrimSpace(reason) == "" {
			t.Errorf("%s: skipped without a reason", name)
		}
		i := slices.IndexFunc(tests.ConformanceTests, func(c suite.ConformanceTest) bool { return c.ShortName == name })
		if i < 0 {
			t.Errorf("%s: no such test in the pinned suite", name)
			continue
		}
		allCore := true
		for _, f := range tests.ConformanceTests[i].Features {
			allCore = allCore && core[f]
		}
		if allCore {
			t.Errorf("%s is a Core test of a claimed profile: it may not be skipped", name)
		}
	}
}

func profileCore(t *testing.T, name suite.ConformanceProfileName) []features.FeatureName {
	switch name {
	case suite.GatewayHTTPConformanceProfileName:
		return suite.GatewayHTTPConformanceProfile.CoreFeatures.UnsortedList()
	case suite.GatewayGRPCConformanceProfileName:
		return suite.GatewayGRPCConformanceProfile.CoreFeatures.UnsortedList()
	case suite.GatewayTLSConformanceProfileName:
		return suite.GatewayTLSConformanceProfile.CoreFeatures.UnsortedList()
	}
	t.Fatalf("profile %s has no Core features listed here", name)
	return nil
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
