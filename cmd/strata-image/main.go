// Command strata-image builds the OCI image of Strata from a strata binary,
// reproducibly and without Docker (internal/ociimage). packaging/build.sh
// runs it; its flags say what goes in.
//
//	go run ./cmd/strata-image --binary dist/strata --version 0.1.0 --commit $(git rev-parse HEAD) \
//	    --etc packaging/etc --archive dist/strata-0.1.0.oci.tar
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	v1 "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/strata-dev/strata/internal/ociimage"
)

func main() {
	binary := flag.String("binary", "", "the strata binary (static: CGO_ENABLED=0)")
	version := flag.String("version", "", "the image's version (its ref name and label)")
	commit := flag.String("commit", "", "the git commit the binary was built from")
	etc := flag.String("etc", "", "directory whose files go to /etc/strata (sample configuration)")
	epoch := flag.String("source-date-epoch", os.Getenv("SOURCE_DATE_EPOCH"), "the image's time, seconds since 1970 (default $SOURCE_DATE_EPOCH)")
	dir := flag.String("dir", "", "write the image as an OCI layout directory here")
	archive := flag.String("archive", "", "write the image as an OCI layout archive (oci-archive) here")
	flag.Parse()
	if err := build(*binary, *version, *commit, *etc, *epoch, *dir, *archive); err != nil {
		fmt.Fprintln(os.Stderr, "strata-image:", err)
		os.Exit(1)
	}
}

func build(binary, version, commit, etc, epoch, dir, archive string) error {
	if binary == "" || version == "" || (dir == "" && archive == "") {
		return fmt.Errorf("give --binary, --version, and --dir or --archive")
	}
	secs, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		return fmt.Errorf("--source-date-epoch %q: want seconds since 1970 (a reproducible image needs a fixed time: the commit's, git log -1 --format=%%ct)", epoch)
	}
	created := time.Unix(secs, 0).UTC()
	bin, err := os.ReadFile(binary)
	if err != nil {
		return err
	}
	img := ociimage.Image{
		Files:      []ociimage.File{{Path: "/usr/bin/strata", Mode: 0o755, Data: bin}},
		Dirs:       []string{"/var/lib/strata", "/etc/strata/tls", "/tmp"},
		Created:    created,
		Entrypoint: []string{"/usr/bin/strata"},
		Cmd:        []string{"--help"},
		Env:        []string{"PATH=/usr/bin:/bin"},
		// The API and the server port of `strata server`.
		ExposedPorts: []string{"4680/tcp", "4681/tcp"},
		Volumes:      []string{"/var/lib/strata"},
		Labels: map[string]string{v1.AnnotationTitle: "strata", v1.AnnotationVersion: version, v1.AnnotationRevision: commit,
			v1.AnnotationCreated: created.Format(time.RFC3339), v1.AnnotationSource: "https://github.com/strata-dev/strata"},
		RefName: version,
	}
	if etc != "" {
		names, err := filepath.Glob(filepath.Join(etc, "*"))
		if err != nil {
			return err
		}
		sort.Strings(names)
		for _, n := range names {
			if st, err := os.Stat(n); err != nil || st.IsDir() {
				continue
			}
			data, err := os.ReadFile(n)
			if err != nil {
				return err
			}
			img.Files = append(img.Files, ociimage.File{Path: "/etc/strata/" + filepath.Base(n), Mode: 0o644, Data: data})
		}
	}
	layout, err := ociimage.Build(img)
	if err != nil {
		return err
	}
	if dir != "" {
		if err := layout.WriteDir(dir); err != nil {
			return err
		}
	}
	if archive != "" {
		data, err := layout.Archive(created)
		if err != nil {
			return err
		}
		if err := os.WriteFile(archive, data, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("image %s: manifest %s\n", version, layout.Manifest)
	return nil
}
