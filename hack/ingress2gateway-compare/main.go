// Command ingress2gateway-compare runs kubernetes-sigs/ingress2gateway's
// ingress-nginx provider and `causeway migrate to-gateway` on the same
// manifests, and proves both outputs the way the command proves its own
// (internal/migrate/equivalence): Causeway's model of the Ingresses
// against Causeway's model of each output, request by request. It is a
// one-time documented run (docs/migrating-from-ingress-nginx.md,
// "Compared with ingress2gateway"), never part of make test: it needs an
// ingress2gateway binary, built from its source outside this repository.
//
//	go run ./hack/ingress2gateway-compare -ingress2gateway /tmp/i2g/ingress2gateway internal/migrate/togateway/testdata/*.yaml
//
// Ingresses that name no class are given ingressClassName nginx first,
// since ingress2gateway converts only the class it is told (nginx by
// default); both tools read the same rewritten manifests.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	"github.com/causeway/causeway/internal/frontend/ingress"
	"github.com/causeway/causeway/internal/migrate"
	"github.com/causeway/causeway/internal/migrate/equivalence"
	"github.com/causeway/causeway/internal/migrate/togateway"
)

func main() {
	bin := flag.String("ingress2gateway", "ingress2gateway", "the ingress2gateway binary")
	keep := flag.String("keep", "", "a directory to keep the rewritten inputs and ingress2gateway's outputs in")
	flag.Parse()
	tmp := *keep
	if tmp == "" {
		var err error
		if tmp, err = os.MkdirTemp("", "i2g-compare"); err != nil {
			fail(err)
		}
		defer os.RemoveAll(tmp)
	}
	for _, file := range flag.Args() {
		if err := compare(*bin, tmp, file); err != nil {
			fail(fmt.Errorf("%s: %w", file, err))
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "ingress2gateway-compare:", err)
	os.Exit(2)
}

// compare runs both tools on file and prints, per Ingress, how each
// output differs from the Ingress.
func compare(bin, tmp, file string) error {
	objs, err := migrate.FromDir(file)
	if err != nil {
		return err
	}
	var docs []any
	for _, i := range objs.Ingresses {
		if i.Spec.IngressClassName == nil && i.Annotations[ingress.LegacyClassAnnotation] == "" {
			i.Spec.IngressClassName = ptr.To("nginx")
		}
		i.Kind, i.APIVersion = "Ingress", "networking.k8s.io/v1"
		docs = append(docs, i)
	}
	for _, cm := range objs.ConfigMaps {
		cm.Kind, cm.APIVersion = "ConfigMap", "v1"
		docs = append(docs, cm)
	}
	input := filepath.Join(tmp, filepath.Base(file))
	var b bytes.Buffer
	for _, d := range docs {
		y, err := yaml.Marshal(d)
		if err != nil {
			return err
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	if err := os.WriteFile(input, b.Bytes(), 0o644); err != nil {
		return err
	}
	cmd := exec.Command(bin, "print", "--providers=ingress-nginx", "--input-file", input, "-A", "--allow-experimental-gw-api", "--no-color")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		// It refuses a whole input on some errors: say so, and go on.
		msg, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\nUsage:")
		fmt.Printf("## %s\n\ningress2gateway wrote nothing (%v): %s\n\n", filepath.Base(file), err, strings.Join(strings.Fields(msg), " "))
		return nil
	}
	if err := os.WriteFile(strings.TrimSuffix(input, ".yaml")+".ingress2gateway.yaml", stdout.Bytes(), 0o644); err != nil {
		return err
	}
	theirs, others, class := decode(stdout.String())

	in := togateway.Input{Ingresses: objs.Ingresses, ConfigMaps: objs.ConfigMaps,
		Controller: togateway.ControllerConfigMap(objs.ConfigMaps, "", "", migrate.DefaultConfigMapName)}
	opts := togateway.Options{IngressClasses: []string{"nginx"}}
	ours, rep := togateway.Convert(in, opts)
	// Their output, judged without any report: every difference counts.
	bare := rep
	bare.Ingresses = nil
	for _, ir := range rep.Ingresses {
		ir.Findings, ir.Refused, ir.Insecure = nil, false, false
		bare.Ingresses = append(bare.Ingresses, ir)
	}
	equivalence.Check(in, opts, ours, &rep, nil)
	theirOpts := opts
	theirOpts.GatewayClass = class
	equivalence.Check(in, theirOpts, theirs, &bare, nil)

	fmt.Printf("## %s\n\n", filepath.Base(file))
	if len(others) > 0 {
		fmt.Printf("ingress2gateway also wrote: %s\n\n", strings.Join(others, ", "))
	}
	for n, ir := range rep.Ingresses {
		if ir.Skipped != "" {
			continue
		}
		fmt.Printf("Ingress %s/%s\n", ir.Namespace, ir.Name)
		fmt.Printf("  causeway:        %s\n", summary(ir.Equivalence))
		fmt.Printf("  ingress2gateway: %s\n", summary(bare.Ingresses[n].Equivalence))
		for _, d := range bare.Ingresses[n].Equivalence.Differences {
			fmt.Printf("    differs %s at %s: Ingress %s; ingress2gateway %s\n", d.Aspect, d.Request, d.Ingress, d.Gateway)
		}
	}
	_, _, problems := equivalence.Models(in, theirOpts, theirs, bare, nil)
	fmt.Printf("\nCauseway's Problems with ingress2gateway's objects (but a Gateway's address, which no Service gives here):\n")
	for _, p := range problems {
		if p.Reason != "AddressNotAssigned" && p.Reason != "Pending" && p.Object.Kind != "ConfigMap" {
			fmt.Printf("  %s\n", p)
		}
	}
	fmt.Printf("\ningress2gateway's notifications:\n%s\n", stderr.String())
	return nil
}

func summary(e *togateway.Equivalence) string {
	switch {
	case e == nil:
		return "not converted"
	case e.NotCompared != "":
		return "not compared: " + e.NotCompared
	case e.Equivalent:
		return fmt.Sprintf("equivalent (%d requests)", e.Requests)
	}
	unexpected := 0
	for _, d := range e.Differences {
		if d.Unexpected {
			unexpected++
		}
	}
	return fmt.Sprintf("%d differences over %d requests, %d not in its report", len(e.Differences), e.Requests, unexpected)
}

// decode splits ingress2gateway's YAML into the kinds Causeway builds,
// the other kinds' names, and the Gateways' class.
func decode(text string) (out togateway.Output, others []string, class string) {
	for _, doc := range strings.Split(text, "\n---\n") {
		var meta struct {
			Kind     string
			Metadata struct{ Name string }
		}
		if yaml.Unmarshal([]byte(doc), &meta) != nil || meta.Kind == "" {
			continue
		}
		switch meta.Kind {
		case "Gateway":
			g := &gwv1.Gateway{}
			if yaml.Unmarshal([]byte(doc), g) == nil {
				out.Gateways = append(out.Gateways, g)
				class = string(g.Spec.GatewayClassName)
			}
		case "HTTPRoute":
			r := &gwv1.HTTPRoute{}
			if yaml.Unmarshal([]byte(doc), r) == nil {
				out.HTTPRoutes = append(out.HTTPRoutes, r)
			}
		case "GRPCRoute":
			r := &gwv1.GRPCRoute{}
			if yaml.Unmarshal([]byte(doc), r) == nil {
				out.GRPCRoutes = append(out.GRPCRoutes, r)
			}
		case "TLSRoute":
			r := &gwv1.TLSRoute{}
			if yaml.Unmarshal([]byte(doc), r) == nil {
				out.TLSRoutes = append(out.TLSRoutes, r)
			}
		case "ReferenceGrant":
			r := &gwv1.ReferenceGrant{}
			if yaml.Unmarshal([]byte(doc), r) == nil {
				out.ReferenceGrants = append(out.ReferenceGrants, r)
			}
		default:
			others = append(others, meta.Kind+" "+meta.Metadata.Name)
		}
	}
	return out, others, class
}
