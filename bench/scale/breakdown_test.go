package main

import (
	"testing"

	"github.com/causeway/causeway/internal/render"
)

// TestMapBlocks pins what the breakdown counts as a map block: the
// directive at the start of a line of a configuration file, not the
// map_hash_* directives, a comment or another file.
func TestMapBlocks(t *testing.T) {
	files := render.Files{
		"nginx.conf": []byte("http {\n    map_hash_max_size 1024;\n    # a map of hosts\n    map $host $a {\n        default 1;\n    }\n" +
			"    map\t$http_upgrade $b {\n        default upgrade;\n    }\n}\n"),
		"servers/_shared-1.conf": []byte("map $host $c {\n    x.test 1;\n}\nserver {\n}\n"),
		"lua/causeway/x.lua":     []byte("map $host $d {\n}\n"),
		"secrets/a.pem":          []byte("map $host $e {\n}\n"),
	}
	if got := mapBlocks(files); got != 3 {
		t.Fatalf("mapBlocks = %d, want 3", got)
	}
}
