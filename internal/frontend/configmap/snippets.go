package configmap

import (
	"strconv"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/snippet"
)

// snippetKeys gate the snippet annotations and read the ConfigMap's own
// http, server and location snippets (package snippet reads them; the build
// applies them only with allow-snippet-annotations).
var snippetKeys = keyParsers{
	"allow-snippet-annotations": func(c *model.Config, v string) (err error) {
		c.AllowSnippetAnnotations, err = strconv.ParseBool(v)
		return err
	},
	"server-snippet": func(c *model.Config, v string) (err error) {
		c.ServerSnippet, err = snippet.Parse(v, snippet.Server)
		return snippetError(v, err)
	},
	"location-snippet": func(c *model.Config, v string) (err error) {
		c.LocationSnippet, err = snippet.Parse(v, snippet.Location)
		return snippetError(v, err)
	},
	"http-snippet": func(c *model.Config, v string) (err error) {
		c.HTTPSnippet, err = snippet.Parse(v, snippet.HTTP)
		return snippetError(v, err)
	},
}

// snippetError closes every path when a snippet that does not parse looks
// meant to refuse requests (snippet.Denies), as an invalid block-cidrs
// does.
func snippetError(v string, err error) error {
	if err != nil && snippet.Denies(v) {
		return failClosed{err}
	}
	return err
}
