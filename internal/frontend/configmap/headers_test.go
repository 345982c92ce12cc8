package configmap

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/testcorpus"
)

// TestHeaderKeys is one row per rule of hide-headers, add-headers,
// proxy-set-headers, allow-backend-server-header and ssl-dh-param: a good
// value sets the field, a bad one keeps the default with a Problem.
func TestHeaderKeys(t *testing.T) {
	name := func(ns, n string) *model.ObjectName { return &model.ObjectName{Namespace: ns, Name: n} }
	hide := func(c model.Config) any { return c.HideHeaders }
	add := func(c model.Config) any { return c.AddHeadersFrom }
	set := func(c model.Config) any { return c.ProxySetHeadersFrom }
	dh := func(c model.Config) any { return c.SSLDHParamFrom }
	server := func(c model.Config) any { return c.AllowBackendServerHeader }
	var none *model.ObjectName
	for _, r := range []struct {
		key, value string
		ok         bool
		get        func(model.Config) any
		want       any
	}{
		{"hide-headers", "X-Powered-By", true, hide, []string{"X-Powered-By"}},
		{"hide-headers", "X-Powered-By, Server ,x-powered-by", true, hide, []string{"X-Powered-By", "Server"}},
		{"hide-headers", "", true, hide, []string(nil)},
		{"hide-headers", " ", true, hide, []string(nil)},
		{"hide-headers", "*", false, hide, []string(nil)},
		{"hide-headers", "a,,b", false, hide, []string(nil)},
		{"hide-headers", "X Powered", false, hide, []string(nil)},
		{"hide-headers", "X-A;", false, hide, []string(nil)},
		{"hide-headers", strings.Repeat("X-A,", 100) + "X-B", false, hide, []string(nil)},
		{"add-headers", "ingress-nginx/custom-headers", true, add, name("ingress-nginx", "custom-headers")},
		{"add-headers", "", true, add, none},
		{"add-headers", "custom-headers", false, add, none},
		{"add-headers", "ns/a/b", false, add, none},
		{"add-headers", "NS/a", false, add, none},
		{"proxy-set-headers", "causeway/set", true, set, name("causeway", "set")},
		{"proxy-set-headers", "/set", false, set, none},
		{"proxy-set-headers", "causeway/", false, set, none},
		{"ssl-dh-param", "causeway/dhparam", true, dh, name("causeway", "dhparam")},
		{"ssl-dh-param", "dhparam", false, dh, none},
		{"ssl-dh-param", "causeway/dh_param", false, dh, none},
		{"allow-backend-server-header", "true", true, server, true},
		{"allow-backend-server-header", "False", true, server, false},
		{"allow-backend-server-header", "on", false, server, false},
	} {
		t.Run(r.key+"="+r.value, func(t *testing.T) {
			cfg, problems := parseOne(r.key, r.value)
			if got := len(problems) == 0; got != r.ok {
				t.Fatalf("accepted = %v (problems %v), want %v", got, problems, r.ok)
			}
			if !r.ok && !strings.Contains(problems[0].Message, `key "`+r.key+`"`) {
				t.Fatalf("problem %q does not name the key", problems[0].Message)
			}
			if got := r.get(cfg); !reflect.DeepEqual(got, r.want) {
				t.Fatalf("got %#v, want %#v", got, r.want)
			}
		})
	}
}

// TestHeaderKeysRefuseHostileValues sends the injection corpus to every
// key of the area: each value keeps the default.
func TestHeaderKeysRefuseHostileValues(t *testing.T) {
	def := model.DefaultConfig()
	for key := range headerKeys {
		for _, v := range testcorpus.Injection {
			if key == "hide-headers" && (strings.Trim(v, " \t") == "" || v == " x" || v == "..") {
				continue // none, or a list of one harmless name: header names are token characters
			}
			cfg, problems := parseOne(key, v)
			if len(problems) == 0 {
				t.Errorf("%s: hostile value %q accepted", key, v)
			}
			if !reflect.DeepEqual(cfg, def) {
				t.Errorf("%s: hostile value %q changed the configuration", key, v)
			}
		}
	}
}

// TestReferences lists what the kube source must watch.
func TestReferences(t *testing.T) {
	got := References(map[string]string{
		"add-headers": "a/add", "proxy-set-headers": "b/set", "ssl-dh-param": "c/dh", "custom-headers": "d/x",
	})
	want := []model.Reference{
		{Kind: model.KindConfigMap, ObjectName: model.ObjectName{Namespace: "a", Name: "add"}, From: "add-headers"},
		{Kind: model.KindConfigMap, ObjectName: model.ObjectName{Namespace: "b", Name: "set"}, From: "proxy-set-headers"},
		{Kind: model.KindSecret, ObjectName: model.ObjectName{Namespace: "c", Name: "dh"}, From: "ssl-dh-param"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("References %v, want %v", got, want)
	}
	if got := References(map[string]string{"add-headers": "bare", "ssl-dh-param": "x/y/z"}); got != nil {
		t.Errorf("invalid values name %v", got)
	}
}

// TestReferencesDeclared fails when a key's parser puts the name of an
// object into the Config (a model.ObjectName, wherever it sits) and the
// key is not in referenceKeys: the kube source would not watch that
// object, nor the admission review look it up.
func TestReferencesDeclared(t *testing.T) {
	const ns, name = "refs", "ref-x"
	for key := range configKeys {
		data := map[string]string{key: ns + "/" + name}
		cfg, _ := Parse(&corev1.ConfigMap{Data: data})
		named := namesIn(reflect.ValueOf(cfg), name)
		listed := slices.ContainsFunc(References(data), func(r model.Reference) bool {
			return r.From == key && r.Namespace == ns && r.Name == name
		})
		if named != listed {
			t.Errorf("key %s: the Config names the object: %v; References lists it: %v (declare it in referenceKeys)", key, named, listed)
		}
	}
}

var objectNameType = reflect.TypeFor[model.ObjectName]()

// namesIn reports whether a model.ObjectName under v carries name.
func namesIn(v reflect.Value, name string) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		return !v.IsNil() && namesIn(v.Elem(), name)
	case reflect.Struct:
		if v.Type() == objectNameType {
			return v.FieldByName("Name").String() == name
		}
		for i := range v.NumField() {
			if namesIn(v.Field(i), name) {
				return true
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if namesIn(v.Index(i), name) {
				return true
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if namesIn(it.Value(), name) {
				return true
			}
		}
	}
	return false
}
