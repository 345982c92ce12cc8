package configmap

import (
	"strconv"

	"github.com/causeway/causeway/internal/model"
)

// snippetKeys gate the snippet annotations (package snippet reads them).
var snippetKeys = keyParsers{
	"allow-snippet-annotations": func(c *model.Config, v string) (err error) {
		c.AllowSnippetAnnotations, err = strconv.ParseBool(v)
		return err
	},
}
