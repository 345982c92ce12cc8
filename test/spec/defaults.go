package spec

// configDefaults are the ConfigMap keys ConfigDefaultsTable's rows share:
// one controller serves them all. Without --default-backend-service,
// custom-http-errors applies only to Ingresses with a default-backend
// annotation, which a Problem on the ConfigMap says in every row.
var configDefaults = map[string]string{
	"force-ssl-redirect": "true", "preserve-trailing-slash": "true", "custom-http-errors": "404,503",
}

// ConfigDefaultsTable are rows of ingress-nginx's per-location ConfigMap
// keys, the defaults of the annotations of the same name: a key applies
// to an Ingress without the annotation, and the annotation overrides it.
var ConfigDefaultsTable = []AnnotationCase{
	{Name: "the ConfigMap's force-ssl-redirect redirects a host without TLS, keeping the trailing slash",
		Ingresses: one("dflt.test", "/", "Prefix", "app", nil),
		Config:    configDefaults,
		Request:   get("dflt.test", "/a/"), Want: Response{Status: 308, Location: "https://dflt.test:{https}/a/"},
		Problems: []string{"InvalidConfig"}},
	{Name: "a preserve-trailing-slash annotation overrides the ConfigMap's",
		Ingresses: one("dflt.test", "/", "Prefix", "app", ann("preserve-trailing-slash", "false")),
		Config:    configDefaults,
		Request:   get("dflt.test", "/a/"), Want: Response{Status: 308, Location: "https://dflt.test:{https}/a"},
		Problems: []string{"InvalidConfig"}},
	{Name: "a force-ssl-redirect annotation overrides the ConfigMap's",
		Ingresses: one("dflt.test", "/", "Prefix", "app", ann("force-ssl-redirect", "false")),
		Config:    configDefaults,
		Request:   get("dflt.test", "/a/"), Want: Response{Status: 200, Service: "app"},
		Problems: []string{"InvalidConfig"}},
	{Name: "the ConfigMap's custom-http-errors sends a listed status to the default-backend annotation's Service",
		Ingresses: one("dflt.test", "/", "Prefix", "app", ann("force-ssl-redirect", "false", "default-backend", "errors")),
		Config:    configDefaults,
		Request:   get("dflt.test", "/_status/404/page"),
		Want: Response{Status: 200, Service: "errors", URI: "/", Upstream: map[string]string{
			"X-Code": "404", "X-Original-URI": "/_status/404/page", "X-Namespace": "default",
			"X-Ingress-Name": "web", "X-Service-Name": "app", "X-Service-Port": "80"}},
		Problems: []string{"InvalidConfig"}},
	{Name: "the ConfigMap's custom-http-errors leaves other statuses alone",
		Ingresses: one("dflt.test", "/", "Prefix", "app", ann("force-ssl-redirect", "false", "default-backend", "errors")),
		Config:    configDefaults,
		Request:   get("dflt.test", "/_status/500/page"), Want: Response{Status: 500, Service: "app"},
		Problems: []string{"InvalidConfig"}},
	{Name: "a custom-http-errors annotation replaces the ConfigMap's list",
		Ingresses: one("dflt.test", "/", "Prefix", "app", ann("force-ssl-redirect", "false", "default-backend", "errors", "custom-http-errors", "500")),
		Config:    configDefaults,
		Request:   get("dflt.test", "/_status/404/page"), Want: Response{Status: 404, Service: "app"},
		Problems: []string{"InvalidConfig"}},
}
