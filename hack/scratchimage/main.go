// Command scratchimage packs static binaries into a one-layer OCI image
// "FROM scratch" and writes it as an OCI archive (oci-layout, index.json,
// blobs) that `ctr images import` and `podman load` read. The test cluster
// (test/cluster) runs only images built on this machine, since no registry
// is reachable: its sandbox image (hack/pause) and its echo backend
// (hack/echo) are made with this.
//
//	scratchimage -o bin/pause-image.tar -ref causeway.test/pause:1 \
//	    -entrypoint /pause bin/pause=/pause
//
// One archive may name its image several times (-ref repeated), as the
// Gateway API conformance suite's manifests name echo-basic under three
// tags; -cap gives a file a capability (a security.capability extended
// attribute in the layer, as setcap writes), so a non-root entrypoint can
// bind a port below 1024 as the upstream CoreDNS image's does:
//
//	scratchimage -o bin/coredns-image.tar -ref registry.k8s.io/coredns/coredns:v1.12.2 \
//	    -entrypoint /coredns -cap /coredns=net_bind_service .cache/bin/coredns=/coredns
//
// The archive is deterministic: the same files give the same digests, as
// every time and owner in it is fixed.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path"
	"runtime"
	"sort"
	"strings"
	"time"
)

// list is a repeatable string flag.
type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	var (
		out        = flag.String("o", "", "the OCI archive to write")
		refs       list
		caps       list
		user       = flag.String("user", "65532:65532", "the user the image runs as")
		entrypoint list
		env        list
		ports      list
	)
	flag.Var(&refs, "ref", "the image name and tag, e.g. causeway.test/echo:1 (repeatable: one image, several names)")
	flag.Var(&caps, "cap", "DEST=CAPABILITY: the file DEST gets the capability, permitted and effective (repeatable; "+capNames()+")")
	flag.Var(&entrypoint, "entrypoint", "an entrypoint argument (repeatable)")
	flag.Var(&env, "env", "KEY=VALUE in the image's environment (repeatable)")
	flag.Var(&ports, "port", "an exposed port, e.g. 8080/tcp (repeatable)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: scratchimage -o OUT.tar -ref NAME:TAG [flags] SRC=DEST...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *out == "" || len(refs) == 0 || flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	files := map[string]string{}
	for _, a := range flag.Args() {
		src, dest, ok := strings.Cut(a, "=")
		if !ok || !path.IsAbs(dest) || path.Clean(dest) != dest {
			fatalf("%q is not SRC=/ABSOLUTE/DEST", a)
		}
		files[dest] = src
	}
	fileCaps := map[string]uint64{}
	for _, c := range caps {
		dest, name, _ := strings.Cut(c, "=")
		bit, ok := capBits[name]
		if _, isFile := files[dest]; !ok || !isFile {
			fatalf("-cap %q: want DEST=CAPABILITY for a file of the image and one of %s", c, capNames())
		}
		fileCaps[dest] |= 1 << bit
	}
	img := image{refs: refs, user: *user, entrypoint: entrypoint, env: env, ports: ports}
	archive, err := img.build(files, fileCaps)
	if err != nil {
		fatalf("%v", err)
	}
	tmp := *out + ".tmp"
	if err := os.WriteFile(tmp, archive, 0o644); err != nil {
		fatalf("%v", err)
	}
	if err := os.Rename(tmp, *out); err != nil {
		fatalf("%v", err)
	}
	fmt.Println(strings.Join(refs, "\n"))
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "scratchimage: "+format+"\n", args...)
	os.Exit(1)
}

// epoch is every time in the archive, for reproducible digests.
var epoch = time.Unix(0, 0).UTC()

type image struct {
	user                         string
	refs, entrypoint, env, ports []string
}

// capBits are the capabilities -cap knows, by their number in
// linux/capability.h.
var capBits = map[string]uint{"net_bind_service": 10, "net_raw": 13}

func capNames() string {
	var names []string
	for n := range capBits {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// capXattr is the value of security.capability for the capabilities in
// mask, permitted and effective: struct vfs_cap_data revision 2 (magic and
// the effective flag, then permitted and inheritable for the low and the
// high 32 capabilities), little-endian.
func capXattr(mask uint64) string {
	var b [20]byte
	binary.LittleEndian.PutUint32(b[0:], 0x02000000|0x1)
	binary.LittleEndian.PutUint32(b[4:], uint32(mask))
	binary.LittleEndian.PutUint32(b[12:], uint32(mask>>32))
	return string(b[:])
}

// blob is one content-addressed file of the layout.
type blob struct {
	mediaType string
	data      []byte
}

func (b blob) digest() string {
	sum := sha256.Sum256(b.data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func (b blob) descriptor() map[string]any {
	return map[string]any{"mediaType": b.mediaType, "digest": b.digest(), "size": len(b.data)}
}

// build returns the OCI archive of an image holding files (destination in
// the image → source path here).
func (img image) build(files map[string]string, caps map[string]uint64) ([]byte, error) {
	layerTar, err := layer(files, caps)
	if err != nil {
		return nil, err
	}
	diffID := sha256.Sum256(layerTar)
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.ModTime = epoch
	if _, err := zw.Write(layerTar); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	layerBlob := blob{"application/vnd.oci.image.layer.v1.tar+gzip", gz.Bytes()}

	exposed := map[string]struct{}{}
	for _, p := range img.ports {
		exposed[p] = struct{}{}
	}
	cfg := map[string]any{
		"created":      epoch.Format(time.RFC3339),
		"architecture": runtime.GOARCH,
		"os":           "linux",
		"config": map[string]any{
			"User":         img.user,
			"Entrypoint":   img.entrypoint,
			"Env":          append([]string{"PATH=/"}, img.env...),
			"ExposedPorts": exposed,
			"WorkingDir":   "/",
		},
		"rootfs":  map[string]any{"type": "layers", "diff_ids": []string{"sha256:" + hex.EncodeToString(diffID[:])}},
		"history": []map[string]any{{"created": epoch.Format(time.RFC3339), "created_by": "hack/scratchimage"}},
	}
	configBlob := blob{"application/vnd.oci.image.config.v1+json", mustJSON(cfg)}
	manifest := map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        configBlob.descriptor(),
		"layers":        []any{layerBlob.descriptor()},
	}
	manifestBlob := blob{"application/vnd.oci.image.manifest.v1+json", mustJSON(manifest)}
	// One descriptor per name, all of the one manifest: ctr images import
	// creates an image for each.
	var descs []any
	for _, ref := range img.refs {
		desc := manifestBlob.descriptor()
		desc["annotations"] = map[string]string{"org.opencontainers.image.ref.name": ref}
		descs = append(descs, desc)
	}
	index := map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.index.v1+json",
		"manifests":     descs,
	}

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(name string, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: epoch, Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	for _, dir := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Name: dir, Mode: 0o755, ModTime: epoch, Typeflag: tar.TypeDir, Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
	}
	for _, b := range []blob{configBlob, layerBlob, manifestBlob} {
		if err := add("blobs/sha256/"+strings.TrimPrefix(b.digest(), "sha256:"), b.data); err != nil {
			return nil, err
		}
	}
	if err := add("index.json", mustJSON(index)); err != nil {
		return nil, err
	}
	if err := add("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// layer is the uncompressed layer: the files, mode 0755 and owned by root,
// under their parent directories, plus an empty /tmp; a file in caps has
// those capabilities.
func layer(files map[string]string, caps map[string]uint64) ([]byte, error) {
	dirs := map[string]bool{"tmp/": true}
	for dest := range files {
		for d := path.Dir(dest); d != "/"; d = path.Dir(d) {
			dirs[strings.TrimPrefix(d, "/")+"/"] = true
		}
	}
	var names []string
	for d := range dirs {
		names = append(names, d)
	}
	for dest := range files {
		names = append(names, strings.TrimPrefix(dest, "/"))
	}
	sort.Strings(names)

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, name := range names {
		h := &tar.Header{Name: name, ModTime: epoch, Format: tar.FormatPAX}
		if dirs[name] {
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
			if name == "tmp/" {
				h.Mode = 0o1777
			}
			if err := tw.WriteHeader(h); err != nil {
				return nil, err
			}
			continue
		}
		data, err := os.ReadFile(files["/"+name])
		if err != nil {
			return nil, err
		}
		h.Typeflag, h.Mode, h.Size = tar.TypeReg, 0o755, int64(len(data))
		if mask := caps["/"+name]; mask != 0 {
			h.PAXRecords = map[string]string{"SCHILY.xattr.security.capability": capXattr(mask)}
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
