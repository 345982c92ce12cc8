package migrate

import (
	"path"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/causeway/causeway/internal/nginxflags"
)

// Controller is an ingress-nginx controller container: where it runs and
// its command line.
type Controller struct {
	// Kind is Deployment or DaemonSet.
	Kind, Namespace, Name, Container string
	// Args are the container's command and args, as it runs them.
	Args []string
}

// ControllerReport is the verdict on one controller's flags.
type ControllerReport struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Container string `json:"container"`
	// Flags are in command-line order; Key is the flag with its dashes.
	Flags []Entry `json:"flags"`
}

// FlagVerdicts are the verdicts a flag can get, in the order reports
// list them.
var FlagVerdicts = []Verdict{Supported, SupportedWithDifference, NotApplicable, Unsupported, Unknown}

// controllerBinary is the path of ingress-nginx's controller in its image.
const controllerBinary = "/nginx-ingress-controller"

// ControllersIn finds the ingress-nginx controller containers of the
// Deployments and DaemonSets among objs: those that run its binary, or
// its image. A manifest without a namespace is in "default".
func ControllersIn(objs []runtime.Object) []Controller {
	var out []Controller
	add := func(kind, ns, name string, spec corev1.PodSpec) {
		if ns == "" {
			ns = "default"
		}
		for _, c := range spec.Containers {
			if isIngressNginx(c) {
				out = append(out, Controller{Kind: kind, Namespace: ns, Name: name, Container: c.Name,
					Args: append(slices.Clone(c.Command), c.Args...)})
			}
		}
	}
	for _, o := range objs {
		switch o := o.(type) {
		case *appsv1.Deployment:
			add("Deployment", o.Namespace, o.Name, o.Spec.Template.Spec)
		case *appsv1.DaemonSet:
			add("DaemonSet", o.Namespace, o.Name, o.Spec.Template.Spec)
		}
	}
	return out
}

func isIngressNginx(c corev1.Container) bool {
	for _, a := range append(slices.Clone(c.Command), c.Args...) {
		if a == controllerBinary || path.Base(a) == path.Base(controllerBinary) {
			return true
		}
	}
	image, _, _ := strings.Cut(c.Image, "@")
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		image = image[:i]
	}
	return strings.HasSuffix(image, "ingress-nginx/controller") || strings.HasSuffix(image, "ingress-nginx/controller-chroot")
}

// checkController gives each flag of a controller's command line the
// verdict of the flag table. An unsupported flag set to the value that
// turns its feature off asks for nothing Causeway lacks: not-applicable.
func checkController(c Controller) ControllerReport {
	r := ControllerReport{Kind: c.Kind, Namespace: c.Namespace, Name: c.Name, Container: c.Container, Flags: []Entry{}}
	for _, a := range nginxflags.ParseArgs(c.Args) {
		e := Entry{Key: "--" + a.Name, Value: a.Value}
		f, known := nginxflags.Lookup(a.Name)
		switch {
		case !known:
			e.Verdict = Unknown
			if s := Closest(a.Name, flagNames()); s != "" {
				e.Suggestion = "--" + s
			}
		case f.Status == nginxflags.Supported:
			e.Verdict, e.Causeway = Supported, "--"+f.Causeway
		case f.Status == nginxflags.SupportedWithDifference:
			e.Verdict, e.Causeway, e.Difference = SupportedWithDifference, "--"+f.Causeway, f.Difference
		case f.IsHarmless(a.Value):
			e.Verdict, e.Instead = NotApplicable, "nothing: the value turns off a feature Causeway does not have"
		case f.Status == nginxflags.NotApplicable:
			e.Verdict, e.Instead = NotApplicable, f.Instead
		default:
			e.Verdict, e.Instead = Unsupported, f.Instead
		}
		r.Flags = append(r.Flags, e)
	}
	return r
}

// flagNames are the names of ingress-nginx's flags.
func flagNames() []string {
	var out []string
	for _, f := range nginxflags.All() {
		out = append(out, f.Name)
	}
	return out
}
