// Package ociimage writes an OCI image of Strata itself — one layer with
// the strata binary and its directories — as an OCI image layout (a
// directory, or a tar of one: what `oci:DIR` and `oci-archive:FILE` name
// for skopeo, podman, umoci and `ctr image import`), without Docker or any
// daemon.
//
// The output is a pure function of its input: every time stamp is the
// image's Created time (SOURCE_DATE_EPOCH when packaging), owners are root,
// entries are sorted, gzip carries no name or time, and JSON is written
// in one fixed form. Two builds of the same binary are byte-identical, so
// an image can be rebuilt and checked against a published digest
// (packaging/check-reproducible.sh).
//
// It reads only what it is given and writes only where it is told; it
// never pulls a base image (the binary is static: CGO_ENABLED=0).
package ociimage
