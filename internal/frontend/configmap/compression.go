package configmap

import "github.com/causeway/causeway/internal/model"

// compressionKeys are gzip's and brotli's keys. Brotli also needs nginx's
// brotli filter module: the build turns enable-brotli off with a Problem
// when the module is missing.
var compressionKeys = keyParsers{
	"use-gzip":          boolKey(func(c *model.Config) *bool { return &c.Gzip.Enabled }),
	"gzip-level":        intKey(func(c *model.Config) *int { return &c.Gzip.Level }, 1, 9),
	"gzip-min-length":   byteKey(func(c *model.Config) *int64 { return &c.Gzip.MinLength }, 0, 1<<30),
	"gzip-types":        mimeKey(func(c *model.Config) *[]string { return &c.Gzip.Types }),
	"enable-brotli":     boolKey(func(c *model.Config) *bool { return &c.Brotli.Enabled }),
	"brotli-level":      intKey(func(c *model.Config) *int { return &c.Brotli.Level }, 0, 11),
	"brotli-min-length": byteKey(func(c *model.Config) *int64 { return &c.Brotli.MinLength }, 0, 1<<30),
	"brotli-types":      mimeKey(func(c *model.Config) *[]string { return &c.Brotli.Types }),
}

func mimeKey(field func(*model.Config) *[]string) func(*model.Config, string) error {
	return func(c *model.Config, v string) error {
		t, err := model.ParseMIMETypes(v)
		if err == nil {
			*field(c) = t
		}
		return err
	}
}
