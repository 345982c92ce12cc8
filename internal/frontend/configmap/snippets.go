package configmap

import (
	"fmt"
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
	// Keys are parsed in sorted order: the http-snippet's maps are known
	// when the other two are read.
	"server-snippet": func(c *model.Config, v string) (err error) {
		c.ServerSnippet, err = snippet.ParseReading(v, snippet.Server, c.Defaults.SnippetVariables)
		if locs, ok := snippet.DenyingLocations(v); err != nil && ok {
			// Its refusals are location blocks that only refuse: those
			// close, not every path (Parse keeps them).
			return closedLocations{fmt.Errorf("%w; its location blocks only refuse requests, so the requests they match answer 503 on every host", err), locs}
		}
		return snippetError(v, err)
	},
	"location-snippet": func(c *model.Config, v string) (err error) {
		c.LocationSnippet, err = snippet.ParseReading(v, snippet.Location, c.Defaults.SnippetVariables)
		return snippetError(v, err)
	},
	"http-snippet": func(c *model.Config, v string) (err error) {
		if c.HTTPSnippet, err = snippet.Parse(v, snippet.HTTP); err == nil {
			for _, m := range c.HTTPSnippet.Maps {
				c.Defaults.SnippetVariables = append(c.Defaults.SnippetVariables, m.Variable)
			}
		}
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

// closedLocations is the error of a refused server-snippet whose
// refusals are all deny-only location blocks: Parse keeps the locations
// (model.Config.ClosedLocations) though the key is refused.
type closedLocations struct {
	err  error
	locs []model.ClosedLocation
}

func (c closedLocations) Error() string { return c.err.Error() }
func (c closedLocations) Unwrap() error { return c.err }
