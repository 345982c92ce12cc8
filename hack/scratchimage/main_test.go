package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// entries reads a tar archive into name → header and content.
func entries(t *testing.T, data []byte) (map[string]*tar.Header, map[string][]byte) {
	t.Helper()
	hs, bodies := map[string]*tar.Header{}, map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return hs, bodies
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		hs[h.Name], bodies[h.Name] = h, b
	}
}

// One image, several names: index.json has a descriptor per name, all of
// the one manifest; -cap writes setcap's security.capability attribute.
func TestRefsAndCapabilities(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "coredns")
	if err := os.WriteFile(bin, []byte("binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	refs := []string{"registry.k8s.io/a:v1", "registry.k8s.io/a:v2"}
	img := image{refs: refs, user: "65532:65532", entrypoint: []string{"/coredns"}}
	archive, err := img.build(map[string]string{"/coredns": bin}, map[string]uint64{"/coredns": 1 << capBits["net_bind_service"]})
	if err != nil {
		t.Fatal(err)
	}
	_, bodies := entries(t, archive)
	var index struct {
		Manifests []struct {
			Digest      string            `json:"digest"`
			Annotations map[string]string `json:"annotations"`
		} `json:"manifests"`
	}
	if err := json.Unmarshal(bodies["index.json"], &index); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range index.Manifests {
		got = append(got, m.Annotations["org.opencontainers.image.ref.name"])
		if m.Digest != index.Manifests[0].Digest {
			t.Errorf("names point at different manifests: %s, %s", m.Digest, index.Manifests[0].Digest)
		}
	}
	if !reflect.DeepEqual(got, refs) {
		t.Errorf("names %v, want %v", got, refs)
	}

	var manifest struct {
		Layers []struct{ Digest string } `json:"layers"`
	}
	if err := json.Unmarshal(bodies["blobs/sha256/"+index.Manifests[0].Digest[len("sha256:"):]], &manifest); err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(bodies["blobs/sha256/"+manifest.Layers[0].Digest[len("sha256:"):]]))
	if err != nil {
		t.Fatal(err)
	}
	layerTar, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	hs, _ := entries(t, layerTar)
	// What `setcap cap_net_bind_service=+ep` writes: revision 2, effective,
	// permitted bit 10.
	want := "\x01\x00\x00\x02\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	if got := hs["coredns"].PAXRecords["SCHILY.xattr.security.capability"]; got != want {
		t.Errorf("security.capability %q, want %q", got, want)
	}
	if _, ok := hs["tmp/"].PAXRecords["SCHILY.xattr.security.capability"]; ok {
		t.Error("the capability is on /tmp too")
	}
}
