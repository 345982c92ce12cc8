package annotations

import (
	"fmt"
	"github.com/causeway/causeway/internal/testcorpus"
	"reflect"
	"strings"
	"testing"
	"unicode"

	"github.com/causeway/causeway/internal/model"
)

// hostile is the shared injection corpus.
var hostile = testcorpus.Injection

// annotationCase is one row of a group's table test.
type annotationCase struct {
	name     string
	values   map[string]string // by annotation name, without the prefix
	want     Result
	problems []problem
}

// runCases checks each case's whole Result and its Problems, in order.
func runCases(t *testing.T, cases []annotationCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, problems := parseNames(tc.values)
			if !reflect.DeepEqual(res, tc.want) {
				t.Errorf("result:\n got  %s\n want %s", dump(res), dump(tc.want))
			}
			checkProblems(t, problems, tc.problems)
		})
	}
}

// checkMessage requires a short message without unprintable characters
// (hostile input is quoted and truncated).
func checkMessage(t *testing.T, msg string) {
	t.Helper()
	if len(msg) > 600 {
		t.Errorf("message is %d bytes long: %.100s...", len(msg), msg)
	}
	if strings.IndexFunc(msg, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		t.Errorf("message holds an unprintable character: %+q", msg)
	}
}

// dump prints a Result with its pointers followed.
func dump(r Result) string {
	var b strings.Builder
	v := reflect.ValueOf(r)
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if f.IsZero() {
			continue
		}
		fmt.Fprintf(&b, "%s=%s ", v.Type().Field(i).Name, deref(f))
	}
	return "{" + strings.TrimSpace(b.String()) + "}"
}

func deref(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return "nil"
		}
		return "&" + deref(v.Elem())
	case reflect.Struct:
		var parts []string
		for i := 0; i < v.NumField(); i++ {
			if !v.Field(i).IsZero() {
				parts = append(parts, v.Type().Field(i).Name+":"+deref(v.Field(i)))
			}
		}
		return "{" + strings.Join(parts, " ") + "}"
	}
	return fmt.Sprintf("%#v", v.Interface())
}

// hostileSetup is what an annotation needs besides itself to take effect,
// so that a hostile value is tested where a good one would be used.
type hostileSetup map[string]map[string]string

// checkHostile sets every annotation of g to every hostile value and
// requires the value to be refused: an InvalidAnnotation naming the
// annotation, and the same Result as without it. inert lists, per
// annotation, the hostile values that are accepted, with why each is
// harmless. Then each hostile value is embedded in the templates given
// for the annotation ("%s" stands for it), where a valid value around it
// may make it harmless: it must be refused or leave only safe strings in
// the Result.
func checkHostile(t *testing.T, g Group, setup hostileSetup, templates map[string][]string, inert map[string]map[string]string) {
	t.Helper()
	for _, a := range g.Annotations {
		base := setup[a.Name]
		baseRes, _ := parseNames(base)
		for _, tmpl := range append([]string{"%s"}, templates[a.Name]...) {
			for _, h := range hostile {
				v := strings.Replace(tmpl, "%s", h, 1)
				values := map[string]string{a.Name: v}
				for k, x := range base {
					values[k] = x
				}
				res, problems := parseNames(values)
				refused := false
				for _, p := range problems {
					checkMessage(t, p.Message)
					if p.Reason == model.ReasonInvalidAnnotation && strings.Contains(p.Message, DefaultPrefix+"/"+a.Name+":") {
						refused = true
					}
				}
				why, isInert := inert[a.Name][v]
				switch {
				case isInert && refused:
					t.Errorf("%s: %+q is refused, but the test says it is accepted because %s", a.Name, model.Truncate(v), why)
				case refused && !reflect.DeepEqual(res, baseRes):
					t.Errorf("%s: refused %+q still changed the result to %s", a.Name, model.Truncate(v), dump(res))
				case refused:
				case tmpl == "%s" && !isInert:
					t.Errorf("%s: %+q is not refused: problems %v, result %s", a.Name, model.Truncate(v), problems, dump(res))
				default:
					if why := unsafeStrings(reflect.ValueOf(res)); why != "" {
						t.Errorf("%s: accepted %+q, and the result %s", a.Name, model.Truncate(v), why)
					}
				}
			}
		}
	}
}

// unsafeStrings returns why a string in v could do harm in nginx.conf or
// in a header, or "" if none can: every string must be visible ASCII
// without quotes, backslashes, braces, ";", "#" or a "$" other than a
// capture reference $1 to $9, and at most 2048 bytes long.
func unsafeStrings(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return unsafeStrings(v.Elem())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if why := unsafeStrings(v.Field(i)); why != "" {
				return why
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if why := unsafeStrings(v.Index(i)); why != "" {
				return why
			}
		}
	case reflect.String:
		s := v.String()
		if len(s) > 2048 {
			return fmt.Sprintf("holds a string of %d bytes", len(s))
		}
		for i := 0; i < len(s); i++ {
			c := s[i]
			switch {
			case c <= ' ' || c >= 0x7f || strings.IndexByte("\"\\{};#'`", c) >= 0:
				return fmt.Sprintf("holds %+q", s)
			case c == '$' && (i+1 == len(s) || s[i+1] < '1' || s[i+1] > '9'):
				return fmt.Sprintf("holds a variable in %+q", s)
			}
		}
	}
	return ""
}

// TestGroupRowsDocumented requires every implemented annotation to
// document its scope, default (or "none") and grammar.
func TestGroupRowsDocumented(t *testing.T) {
	seen := map[string]bool{}
	for _, g := range groups {
		if g.Name == "" || g.Parse == nil || len(g.Annotations) == 0 {
			t.Errorf("group %q: want a name, a parser and annotations", g.Name)
		}
		for _, a := range g.Annotations {
			id := string(a.Family) + "/" + a.Name
			if seen[id] {
				t.Errorf("%s is in two groups", id)
			}
			seen[id] = true
			switch {
			case a.Group != g.Name || a.Status != AnnotationSupported || a.Kind != "Ingress" || a.Family != FamilyIngressNginx:
				t.Errorf("%s: row %+v, want a supported ingress-nginx Ingress annotation of group %s", a.Name, a, g.Name)
			case a.Scope != ScopeLocation && a.Scope != ScopeServer && a.Scope != ScopeBackend:
				t.Errorf("%s: scope %q", a.Name, a.Scope)
			case strings.TrimSpace(a.Default) == "":
				t.Errorf(`%s: no Default; write "none" if it has none`, a.Name)
			case strings.TrimSpace(a.Grammar) == "":
				t.Errorf("%s: no Grammar", a.Name)
			}
			if r, ok := Lookup(a.Family, a.Name); !ok || r.Status != AnnotationSupported {
				t.Errorf("%s: the registry has %+v", a.Name, r)
			}
		}
	}
}
