// Package migrate checks Ingresses, the controller ConfigMap and the
// controller's flags written for ingress-nginx against what Causeway
// supports. It reads the same registries the controller does (the
// annotation table and parsers, the ConfigMap key table, the flag table),
// so its verdicts are the Problems Causeway would report, gathered before
// the switch instead of after it.
package migrate

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/causeway/causeway/internal/frontend/configmap"
	"github.com/causeway/causeway/internal/frontend/ingress"
	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/nginxflags"
)

// DefaultConfigMapName is the name ingress-nginx's install manifests and
// Helm chart give the controller's ConfigMap.
const DefaultConfigMapName = "ingress-nginx-controller"

// Objects are what Check reads.
type Objects struct {
	Ingresses  []*networkingv1.Ingress
	ConfigMaps []*corev1.ConfigMap
	// Controllers are the ingress-nginx controller containers found.
	Controllers []Controller
	// ReadProblems are documents that could not be read; Check copies
	// them into the Report, which is then incomplete.
	ReadProblems []ReadProblem
	// Notes are what reading left out (objects it may not list, say).
	Notes []string
}

// ReadProblem is a manifest that could not be decoded.
type ReadProblem struct {
	Where   string `json:"where"`
	Message string `json:"message"`
}

// Options say how to read the objects.
type Options struct {
	// AnnotationsPrefix is ingress-nginx's annotation prefix;
	// empty means annotations.DefaultPrefix.
	AnnotationsPrefix string
	// ConfigMapNamespace and ConfigMapName name the controller's
	// ConfigMap. Empty means every ConfigMap named DefaultConfigMapName.
	ConfigMapNamespace, ConfigMapName string
}

// Verdict is what Causeway makes of one annotation or ConfigMap key.
type Verdict string

const (
	// Supported: Causeway does what ingress-nginx does.
	Supported Verdict = "supported"
	// SupportedWithDifference: supported; the registry documents how
	// Causeway's behaviour differs (Entry.Difference).
	SupportedWithDifference Verdict = "supported-with-difference"
	// Unsupported: ignored with an UnsupportedAnnotation Problem (not
	// supported yet, set on the wrong kind of object, or a value or
	// combination without effect in Causeway).
	Unsupported Verdict = "unsupported"
	// FailClosed: a security setting Causeway cannot enforce yet (or not
	// as written): every path of the Ingress answers 503.
	FailClosed Verdict = "fail-closed"
	// FailOpen (ConfigMap keys only): a global security setting Causeway
	// ignores, so requests ingress-nginx would refuse are let through.
	FailOpen Verdict = "fail-open"
	// NotApplicable (ConfigMap keys only): configures something Causeway
	// does not have or does in its own way.
	NotApplicable Verdict = "not-applicable"
	// Unknown: not a name ingress-nginx or Causeway knows; ignored.
	Unknown Verdict = "unknown"
	// Invalid: a supported name with a value Causeway refuses; the
	// setting is dropped.
	Invalid Verdict = "invalid"
)

// AnnotationVerdicts and KeyVerdicts are the verdicts each kind of entry
// can get, in the order reports list them.
var (
	AnnotationVerdicts = []Verdict{Supported, SupportedWithDifference, Unsupported, FailClosed, Unknown, Invalid}
	KeyVerdicts        = []Verdict{Supported, SupportedWithDifference, Unsupported, FailOpen, NotApplicable, Unknown, Invalid}
)

// NeedsAttention reports whether an entry with this verdict keeps a
// migration from being ready. For ConfigMap keys only FailOpen and
// Invalid do: the others keep Causeway's defaults, documented per key.
func (v Verdict) NeedsAttention() bool {
	switch v {
	case Unsupported, FailClosed, FailOpen, Unknown, Invalid:
		return true
	}
	return false
}

// Report is the result of Check. Its JSON form is what
// `causeway migrate check -o json` prints; the field names are stable.
type Report struct {
	// AnnotationsPrefix is the ingress-nginx prefix that was checked.
	AnnotationsPrefix string `json:"annotationsPrefix"`
	// Ready is true when nothing needs attention (Summary says why not).
	Ready   bool    `json:"ready"`
	Summary Summary `json:"summary"`
	// Ingresses are sorted by namespace, then name.
	Ingresses []IngressReport `json:"ingresses"`
	// ConfigMaps are the controller ConfigMaps found, sorted.
	ConfigMaps []ConfigMapReport `json:"configMaps"`
	// Controllers are the ingress-nginx controllers found, with their
	// flags, sorted by namespace, name and container.
	Controllers []ControllerReport `json:"controllers"`
	// ConfigMapNotFound is "namespace/name" of a ConfigMap asked for but
	// not found.
	ConfigMapNotFound string `json:"configMapNotFound,omitempty"`
	// ReadProblems are manifests that could not be read: the report
	// does not cover them.
	ReadProblems []ReadProblem `json:"readProblems,omitempty"`
	// Notes are advice that concerns no single entry.
	Notes []string `json:"notes,omitempty"`
}

// Summary counts the verdicts.
type Summary struct {
	Ingresses      int `json:"ingresses"`
	ReadyIngresses int `json:"readyIngresses"`
	// Annotations and ConfigMapKeys count entries per verdict; every
	// verdict of AnnotationVerdicts (KeyVerdicts) is present.
	Annotations   map[Verdict]int `json:"annotations"`
	ConfigMapKeys map[Verdict]int `json:"configMapKeys"`
	// Flags counts the controllers' flags per verdict (FlagVerdicts).
	Flags map[Verdict]int `json:"flags"`
}

// IngressReport is one Ingress.
type IngressReport struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Class is spec.ingressClassName, else the legacy
	// kubernetes.io/ingress.class annotation; "" when neither is set.
	Class string `json:"class"`
	// ClassFrom says where Class came from: "spec.ingressClassName",
	// "kubernetes.io/ingress.class" or "".
	ClassFrom string `json:"classFrom,omitempty"`
	// Ready is true when no annotation needs attention and the Ingress
	// is not rejected.
	Ready bool `json:"ready"`
	// Rejected is why Causeway would refuse the whole Ingress (a path it
	// cannot serve, say); "" when it would serve it.
	Rejected string `json:"rejected,omitempty"`
	// Annotations are those under the ingress-nginx prefix and
	// causeway.io/, sorted by key.
	Annotations []Entry `json:"annotations"`
	// Problems are what the controller would report about the Ingress's
	// annotations that name none of them.
	Problems []string `json:"problems,omitempty"`
}

// ConfigMapReport is the controller's ConfigMap.
type ConfigMapReport struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Keys are sorted.
	Keys []Entry `json:"keys"`
}

// Entry is one annotation or ConfigMap key.
type Entry struct {
	// Key is the full annotation key, or the ConfigMap key.
	Key     string  `json:"key"`
	Value   string  `json:"value"`
	Verdict Verdict `json:"verdict"`
	// Group is the annotation group ("rewrite", "auth", ...).
	Group string `json:"group,omitempty"`
	// Difference is how Causeway's behaviour differs from
	// ingress-nginx's, for supported entries.
	Difference string `json:"difference,omitempty"`
	// Instead says what to use in Causeway today, when the registry
	// says.
	Instead string `json:"instead,omitempty"`
	// Causeway is, for a controller flag Causeway takes, the Causeway
	// flag that takes it.
	Causeway string `json:"causeway,omitempty"`
	// Suggestion is the known name an unknown one is closest to.
	Suggestion string `json:"suggestion,omitempty"`
	// Messages are the Problems the controller would report about this
	// entry.
	Messages []string `json:"messages,omitempty"`
}

// Check classifies every annotation of every Ingress and every key of the
// controller's ConfigMap. The result does not depend on the order of objs.
func Check(objs Objects, opts Options) Report {
	prefix := opts.AnnotationsPrefix
	if prefix == "" {
		prefix = annotations.DefaultPrefix
	}
	r := Report{
		AnnotationsPrefix: prefix,
		Ingresses:         []IngressReport{},
		ConfigMaps:        []ConfigMapReport{},
		Controllers:       []ControllerReport{},
		ReadProblems:      objs.ReadProblems,
		Summary: Summary{
			Annotations:   zeroCounts(AnnotationVerdicts),
			ConfigMapKeys: zeroCounts(KeyVerdicts),
			Flags:         zeroCounts(FlagVerdicts),
		},
	}
	allowSnippets := false
	// The Ingresses start from the defaults of the first ConfigMap by
	// namespace, whatever the order of objs.
	var defaults *model.Defaults
	defaultsFrom := ""
	for _, cm := range objs.ConfigMaps {
		if opts.ConfigMapName == "" && cm.Name == DefaultConfigMapName || cm.Namespace == opts.ConfigMapNamespace && cm.Name == opts.ConfigMapName {
			c, _ := configmap.Parse(cm)
			allowSnippets = allowSnippets || c.AllowSnippetAnnotations
			if defaults == nil || cm.Namespace < defaultsFrom {
				defaults, defaultsFrom = &c.Defaults, cm.Namespace
			}
		}
	}
	for _, ing := range objs.Ingresses {
		r.Ingresses = append(r.Ingresses, checkIngress(ing, prefix, allowSnippets, defaults))
	}
	sort.Slice(r.Ingresses, func(i, j int) bool {
		a, b := r.Ingresses[i], r.Ingresses[j]
		return a.Namespace < b.Namespace || a.Namespace == b.Namespace && a.Name < b.Name
	})

	found := false
	for _, cm := range objs.ConfigMaps {
		want := cm.Name == DefaultConfigMapName
		if opts.ConfigMapName != "" {
			want = cm.Namespace == opts.ConfigMapNamespace && cm.Name == opts.ConfigMapName
		}
		if want {
			r.ConfigMaps = append(r.ConfigMaps, checkConfigMap(cm))
			found = true
		}
	}
	sort.Slice(r.ConfigMaps, func(i, j int) bool {
		a, b := r.ConfigMaps[i], r.ConfigMaps[j]
		return a.Namespace < b.Namespace || a.Namespace == b.Namespace && a.Name < b.Name
	})
	if !found && opts.ConfigMapName != "" {
		r.ConfigMapNotFound = opts.ConfigMapNamespace + "/" + opts.ConfigMapName
	}

	for _, c := range objs.Controllers {
		r.Controllers = append(r.Controllers, checkController(c))
	}
	sort.Slice(r.Controllers, func(i, j int) bool {
		a, b := r.Controllers[i], r.Controllers[j]
		return a.Namespace < b.Namespace || a.Namespace == b.Namespace && (a.Name < b.Name || a.Name == b.Name && a.Container < b.Container)
	})

	s := &r.Summary
	s.Ingresses = len(r.Ingresses)
	for _, ing := range r.Ingresses {
		if ing.Ready {
			s.ReadyIngresses++
		}
		for _, e := range ing.Annotations {
			s.Annotations[e.Verdict]++
		}
	}
	keysReady := true
	for _, cm := range r.ConfigMaps {
		for _, e := range cm.Keys {
			s.ConfigMapKeys[e.Verdict]++
			keysReady = keysReady && !e.Verdict.NeedsAttention()
		}
	}
	flagsReady := true
	for _, c := range r.Controllers {
		for _, e := range c.Flags {
			s.Flags[e.Verdict]++
			flagsReady = flagsReady && !e.Verdict.NeedsAttention()
		}
	}
	r.Ready = s.ReadyIngresses == s.Ingresses && keysReady && flagsReady && len(r.ReadProblems) == 0
	r.Notes = append(notes(objs, prefix, opts), objs.Notes...)
	return r
}

func zeroCounts(vs []Verdict) map[Verdict]int {
	m := make(map[Verdict]int, len(vs))
	for _, v := range vs {
		m[v] = 0
	}
	return m
}

// checkIngress classifies an Ingress's annotations as the controller
// would: the registry decides the verdict of a name, and the Problems
// ParseIngress reports about a supported one (a bad value, a value or
// combination without effect, a security setting that cannot be applied)
// override it.
func checkIngress(ing *networkingv1.Ingress, prefix string, allowSnippets bool, defaults *model.Defaults) IngressReport {
	r := IngressReport{Namespace: ing.Namespace, Name: ing.Name, Annotations: []Entry{}}
	switch {
	case ing.Spec.IngressClassName != nil:
		r.Class, r.ClassFrom = *ing.Spec.IngressClassName, "spec.ingressClassName"
	case ing.Annotations[ingress.LegacyClassAnnotation] != "":
		r.Class, r.ClassFrom = ing.Annotations[ingress.LegacyClassAnnotation], ingress.LegacyClassAnnotation
	}

	ref := ingress.Ref(ing)
	res, problems := annotations.ParseIngress(ref, ing.Annotations, prefix, defaults)
	problems = append(problems, res.GateSnippets(ref, allowSnippets)...)
	var keys []string
	for k := range ing.Annotations {
		if _, _, ours := annotations.Split(k, prefix, "Ingress"); ours {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	byKey := map[string][]model.Problem{}
	for _, p := range problems {
		if k := subject(p.Message, keys); k != "" {
			byKey[k] = append(byKey[k], p)
		} else {
			r.Problems = append(r.Problems, p.Message)
		}
	}

	closed := res.FailClosed
	if k := prefix + "/auth-url"; selfAuthWithoutHost(ing, res.Location.ExternalAuth) {
		// As the build does: $host there is whatever the client sends.
		byKey[k] = append(byKey[k], model.Problem{Message: "annotation " + k + " names $host, which in a rule without host (or a defaultBackend) " +
			"is whatever host the client sends; those paths answer 503"})
		closed = append(slices.Clone(closed), k)
	}
	r.Ready = true
	for _, k := range keys {
		e := annotationEntry(k, ing.Annotations[k], prefix, byKey[k], slices.Contains(closed, k))
		r.Ready = r.Ready && !e.Verdict.NeedsAttention()
		r.Annotations = append(r.Annotations, e)
	}
	if _, _, err := ingress.Translate(ing, prefix, defaults); err != nil {
		r.Rejected = err.Error()
		r.Ready = false
	}
	return r
}

// selfAuthWithoutHost reports whether an Ingress with a rule without
// host, or a defaultBackend, has an auth-url naming $host.
func selfAuthWithoutHost(ing *networkingv1.Ingress, a *model.ExternalAuth) bool {
	if a == nil {
		return false
	}
	t, err := model.AuthURLTemplate(a.URL)
	if err != nil || !t.SelfHost() {
		return false
	}
	return ing.Spec.DefaultBackend != nil || slices.ContainsFunc(ing.Spec.Rules, func(r networkingv1.IngressRule) bool { return r.Host == "" })
}

// annotationEntry is the verdict on one annotation; problems are those
// the controller reports about it, and closed says whether its setting
// closes the Ingress's paths.
func annotationEntry(key, value, prefix string, problems []model.Problem, closed bool) Entry {
	e := Entry{Key: key, Value: value}
	for _, p := range problems {
		e.Messages = append(e.Messages, p.Message)
	}
	family, name, _ := annotations.Split(key, prefix, "Ingress")
	a, known := annotations.Lookup(family, name)
	if !known {
		e.Verdict = Unknown
		e.Suggestion = suggestAnnotation(family, name, prefix)
		return e
	}
	e.Group, e.Instead = a.Group, a.Instead
	switch {
	case a.Kind != "Ingress":
		e.Verdict = Unsupported
	case a.Closes(value):
		e.Verdict = FailClosed
	case a.Status == annotations.AnnotationFailClosed:
		e.Verdict = Unsupported // set to a value that asks for nothing
	case a.Status == annotations.AnnotationNotYetSupported:
		e.Verdict = Unsupported
	case closed:
		e.Verdict, e.Difference = FailClosed, a.Difference
	case hasReason(problems, model.ReasonInvalidAnnotation):
		e.Verdict, e.Difference = Invalid, a.Difference
	case hasReason(problems, model.ReasonUnsupportedAnnotation):
		e.Verdict, e.Difference = Unsupported, a.Difference
	case a.Difference != "":
		e.Verdict, e.Difference = SupportedWithDifference, a.Difference
	default:
		e.Verdict = Supported
	}
	return e
}

func hasReason(problems []model.Problem, reason string) bool {
	return slices.ContainsFunc(problems, func(p model.Problem) bool { return p.Reason == reason })
}

// subject is the annotation a Problem is about: the key that occurs first
// in its message as a whole word (the longest when several start there).
// The annotation parsers name their subject by its full key and the others
// they mention by their short names, so the first full key is the subject.
func subject(msg string, keys []string) string {
	best, at := "", -1
	for _, k := range keys {
		for from := 0; from < len(msg); {
			i := strings.Index(msg[from:], k)
			if i < 0 {
				break
			}
			pos := from + i
			if end := pos + len(k); end == len(msg) || !isKeyByte(msg[end]) {
				if at < 0 || pos < at || pos == at && len(k) > len(best) {
					best, at = k, pos
				}
				break
			}
			from = pos + 1
		}
	}
	return best
}

func isKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '/'
}

// checkConfigMap classifies every key of the controller's ConfigMap with
// the key table, and the Problems Parse reports.
func checkConfigMap(cm *corev1.ConfigMap) ConfigMapReport {
	r := ConfigMapReport{Namespace: cm.Namespace, Name: cm.Name, Keys: []Entry{}}
	_, problems := configmap.Parse(cm)
	keys := make([]string, 0, len(cm.Data))
	for k := range cm.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, name := range keys {
		e := Entry{Key: name, Value: cm.Data[name]}
		quoted := strconv.Quote(name)
		for _, p := range problems {
			if strings.Contains(p.Message, quoted) {
				e.Messages = append(e.Messages, p.Message)
			}
		}
		k, known := configmap.LookupKey(name)
		switch {
		case !known:
			e.Verdict = Unknown
			e.Suggestion = suggestKey(name)
		case k.Status.Parsed() && len(e.Messages) > 0:
			e.Verdict, e.Difference = Invalid, k.Difference
		case k.Status == configmap.KeyDifferent:
			e.Verdict, e.Difference = SupportedWithDifference, k.Difference
		case k.Status.Parsed():
			e.Verdict = Supported
		case k.Status == configmap.KeyNotApplicable:
			e.Verdict = NotApplicable
		case k.Security && guards(k, e.Value):
			e.Verdict = FailOpen
		default:
			e.Verdict = Unsupported
		}
		r.Keys = append(r.Keys, e)
	}
	return r
}

// guards reports whether a security key's value asks ingress-nginx to
// refuse anything: a boolean that is not false, or a list that is not
// empty. An unreadable boolean counts as asking.
func guards(k configmap.Key, value string) bool {
	if k.NginxDefault == "false" {
		on, err := strconv.ParseBool(strings.TrimSpace(value))
		return on || err != nil
	}
	return strings.TrimSpace(value) != ""
}

// notes are advice about the objects as a whole.
func notes(objs Objects, prefix string, opts Options) []string {
	var out []string
	if len(objs.Ingresses) == 0 {
		out = append(out, "no Ingresses found")
	}
	// What the controllers read that this check did not.
	for _, c := range objs.Controllers {
		where := fmt.Sprintf("%s %s/%s", c.Kind, c.Namespace, c.Name)
		for _, a := range nginxflags.ParseArgs(c.Args) {
			v := strings.ReplaceAll(a.Value, "$(POD_NAMESPACE)", c.Namespace)
			switch {
			case a.Name == "annotations-prefix" && v != prefix:
				out = append(out, fmt.Sprintf("%s runs with --annotations-prefix=%s: check again with --annotations-prefix %s", where, v, v))
			case a.Name == "configmap" && v != opts.ConfigMapNamespace+"/"+opts.ConfigMapName &&
				(opts.ConfigMapName != "" || !strings.HasSuffix(v, "/"+DefaultConfigMapName)):
				out = append(out, fmt.Sprintf("%s reads the ConfigMap %s (--configmap): check it with --configmap %s", where, v, v))
			}
		}
	}
	return out
}
