package annotations

import (
	"reflect"
	"slices"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

// TestReferences: each annotation that names an object is listed with
// its kind, "name" in the object's namespace or "namespace/name" as
// written, and nothing else is.
func TestReferences(t *testing.T) {
	got := References("app", map[string]string{
		key("custom-headers"):         "headers",
		key("auth-proxy-set-headers"): "app/auth-headers",
		key("proxy-ssl-secret"):       "app/backend-tls",
		key("auth-secret"):            "other/users", // refused by the parser, asked for all the same
		key("auth-tls-secret"):        "a/b/c",
		key("default-backend"):        "fallback",
		key("rewrite-target"):         "/x",
		key("server-alias"):           "b.test",
		"example.com/custom-headers":  "foreign",
	}, DefaultPrefix)
	want := []model.Reference{
		{Kind: model.KindConfigMap, ObjectName: model.ObjectName{Namespace: "app", Name: "auth-headers"}, From: key("auth-proxy-set-headers")},
		{Kind: model.KindSecret, ObjectName: model.ObjectName{Namespace: "other", Name: "users"}, From: key("auth-secret")},
		{Kind: model.KindSecret, ObjectName: model.ObjectName{Namespace: "a", Name: "b/c"}, From: key("auth-tls-secret")},
		{Kind: model.KindConfigMap, ObjectName: model.ObjectName{Namespace: "app", Name: "headers"}, From: key("custom-headers")},
		{Kind: model.KindService, ObjectName: model.ObjectName{Namespace: "app", Name: "fallback"}, From: key("default-backend")},
		{Kind: model.KindSecret, ObjectName: model.ObjectName{Namespace: "app", Name: "backend-tls"}, From: key("proxy-ssl-secret")},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("References:\n got  %v\n want %v", got, want)
	}
	if got := References("app", map[string]string{"custom.example/custom-headers": "x"}, "custom.example"); len(got) != 1 || got[0].Name != "x" {
		t.Errorf("References under another prefix = %v", got)
	}
	if got := References("app", map[string]string{key("custom-headers"): ""}, DefaultPrefix); len(got) != 0 {
		t.Errorf("an empty value names %v", got)
	}
}

// referenceContext are the annotations some parsers need beside the one
// that names an object: auth-secret is read with auth-type,
// auth-proxy-set-headers with auth-url, proxy-ssl-secret with an HTTPS
// backend-protocol.
var referenceContext = map[string]string{"auth-type": "basic", "auth-url": "https://auth.example.com/check", "backend-protocol": "HTTPS"}

// TestReferencesDeclared fails when an annotation's parser puts the name
// of an object into the Result (an ObjectName, AuthSecret or ServiceRef,
// wherever it sits) and the annotation's row does not declare it with
// Names: the kube source would not watch that object, nor the admission
// review look it up. It tries every supported annotation with values that
// name an object.
func TestReferencesDeclared(t *testing.T) {
	const name = "ref-x"
	base, _ := parseNames(referenceContext)
	before := namedIn(reflect.ValueOf(base), name)
	for _, a := range Known() {
		if a.Kind != "Ingress" || a.Status != AnnotationSupported || referenceContext[a.Name] != "" {
			continue
		}
		named := false
		for _, v := range []string{name, testRef.Namespace + "/" + name} {
			values := map[string]string{a.Key(DefaultPrefix): v}
			for k, c := range referenceContext {
				values[key(k)] = c
			}
			res, _ := ParseIngress(testRef, values, DefaultPrefix, nil)
			if namedIn(reflect.ValueOf(res), name) > before {
				named = true
				refs := References(testRef.Namespace, values, DefaultPrefix)
				if !slices.ContainsFunc(refs, func(r model.Reference) bool {
					return r.From == a.Key(DefaultPrefix) && r.Namespace == testRef.Namespace && r.Name == name
				}) {
					t.Errorf("annotation %s = %q names an object but References lists %v: declare it with Names in its row", a.Key(DefaultPrefix), v, refs)
				}
			}
		}
		if a.Names != "" && !named {
			t.Errorf("annotation %s declares that it names a %s, but its parser never names one", a.Name, a.Names)
		}
	}
}

var (
	objectNameType = reflect.TypeFor[ObjectName]()
	serviceRefType = reflect.TypeFor[ServiceRef]()
)

// namedIn counts the ObjectNames and ServiceRefs under v that carry name.
func namedIn(v reflect.Value, name string) int {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return 0
		}
		return namedIn(v.Elem(), name)
	case reflect.Struct:
		switch v.Type() {
		case objectNameType, serviceRefType:
			if v.FieldByName("Name").String() == name {
				return 1
			}
			return 0
		}
		n := 0
		for i := range v.NumField() {
			n += namedIn(v.Field(i), name)
		}
		return n
	case reflect.Slice, reflect.Array:
		n := 0
		for i := range v.Len() {
			n += namedIn(v.Index(i), name)
		}
		return n
	case reflect.Map:
		n := 0
		for it := v.MapRange(); it.Next(); {
			n += namedIn(it.Value(), name)
		}
		return n
	}
	return 0
}
