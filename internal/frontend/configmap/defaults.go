package configmap

import (
	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/model"
)

// annotationKeys are the keys that set the default of the annotation of
// the same name (proxy-buffering, custom-http-errors, ...): each is read
// into model.Config.Defaults with that annotation's own parser, so a key
// and its annotation share one grammar, and an Ingress's annotation
// overrides the key alone (annotations/defaults.go).
var annotationKeys = func() keyParsers {
	out := keyParsers{}
	for _, k := range annotations.DefaultKeys() {
		out[k.Name] = func(c *model.Config, v string) error {
			return annotations.ParseDefault(&c.Defaults, k.Name, v)
		}
	}
	return out
}()
