package cluster

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// ArchiveRefs returns the image names an OCI archive's index.json gives
// its images (org.opencontainers.image.ref.name), as make image and
// hack/scratchimage write them.
func ArchiveRefs(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: no index.json: not an OCI archive", path)
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		if strings.TrimPrefix(h.Name, "./") != "index.json" {
			continue
		}
		var index struct {
			Manifests []struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"manifests"`
		}
		if err := json.NewDecoder(tr).Decode(&index); err != nil {
			return nil, fmt.Errorf("%s: index.json: %w", path, err)
		}
		var refs []string
		for _, m := range index.Manifests {
			if r := m.Annotations["org.opencontainers.image.ref.name"]; r != "" {
				refs = append(refs, r)
			}
		}
		if len(refs) == 0 {
			return nil, fmt.Errorf("%s: index.json names no image", path)
		}
		return refs, nil
	}
}

// normalizedRef is the full name the kubelet uses for an image reference:
// a name without a registry is on docker.io, one without a path in its
// library.
func normalizedRef(ref string) string {
	first, _, hasSlash := strings.Cut(ref, "/")
	if hasSlash && (strings.ContainsAny(first, ".:") || first == "localhost") {
		return ref
	}
	if !hasSlash {
		return "docker.io/library/" + ref
	}
	return "docker.io/" + ref
}
